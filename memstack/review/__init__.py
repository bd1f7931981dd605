"""`memstack review A..B`: what a range changes in memory, for the person reviewing a pull request.

The net change from A to B (one tree diff, only the changed blobs read) read as
memory: facts added, facts superseded (old and new side by side with their
windows), intake per agent and tier, promotions per sub-tier, Binder decisions,
handoffs sealed, SOIL changes; plus every invariant violation of the range's
commits (`check --range`). Credentials found (I8) come first, by file, line and
kind; no credential is ever printed: every string of the report that holds one is
redacted. Markdown to paste as a pull-request comment, or JSON with a stable
shape for tools.

Bounded memory whatever the range: blobs are read as streams of lines, what they
add goes to a temporary SQLite database (`workspace.py`) as it is read, and both
reports are written from it row by row (`gather.py` reads, `markdown.py` and
`write_json` write).
"""

from memstack.base.output import emit_streamed
from memstack.review.gather import Review, read_range
from memstack.review.markdown import CONTENT, FACTS_SHOWN, SHOWN
from memstack.review.markdown import write as write_markdown

__all__ = ["CONTENT", "FACTS_SHOWN", "SHOWN", "Review", "read_range", "write_json", "write_markdown"]


def write_json(review: Review) -> None:
    """The report as one JSON document on stdout (keys sorted, indented), every list written row by row."""
    workspace, db = review.workspace, review.workspace.db
    emit_streamed({
        "range": review.range, "commits": review.commits, "secrets": review.secrets,
        "violations": review.violations, "intake": review.intake, "promotions": review.promotions,
        "facts_added": (data for data, in db.execute("SELECT data FROM facts ORDER BY subject, id")),
        "facts_superseded": review.superseded(),
        "intake_records": (data for data, in db.execute("SELECT data FROM intake ORDER BY created, id, seq")),
        **{section: workspace.items(section, parsed=False) for section in (
            "binder", "binder_waiting", "binder_edges", "binder_files", "handoffs", "soil", "derived")},
    })
