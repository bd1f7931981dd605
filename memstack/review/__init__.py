"""`memstack review A..B`: what a range changes in memory, for the person reviewing a pull request.

The net change from A to B (one tree diff, only the changed blobs read) read as
memory: facts added, facts superseded (old and new side by side with their
windows), intake per agent and tier, promotions per sub-tier, Binder decisions
(each with the record or fact it decided), handoffs sealed, SOIL changes; plus
every invariant violation of the range's commits (`check --range`). Credentials
found (I8) come first, by file, line and kind; no credential is ever printed:
every string of the report that holds one is redacted. Markdown to paste as a
pull-request comment, or JSON with a stable shape for tools.

Bounded whatever the range: blobs are read as streams of lines, what they add
goes to a temporary SQLite database (`workspace.py`) as it is read, and both
reports are written from it row by row (`gather.py` reads, `binder.py` finds
what a Binder item is about, `markdown.py` and `write_json` write). Each list
holds its first LIMIT items unless the whole report is asked for (`--full`),
and the counts say how many there are.
"""

from collections.abc import Iterator
from typing import Any

from memstack.base.output import emit_streamed
from memstack.review import binder
from memstack.review.gather import ITEM_SECTIONS, Review, read_range
from memstack.review.markdown import CONTENT, LIMIT
from memstack.review.markdown import write as write_markdown

__all__ = ["CONTENT", "LIMIT", "Review", "read_range", "write_json", "write_markdown"]


def write_json(review: Review, limit: int | None = LIMIT) -> None:
    """The report as one JSON document on stdout (keys sorted, indented), every list written row by row:
    its first `limit` items (every one when `limit` is None), `counts` saying how many each list has."""
    workspace, db, n = review.workspace, review.workspace.db, -1 if limit is None else limit

    def rows(query: str) -> Iterator[Any]:
        return (data for data, in db.execute(query + " LIMIT ?", (n,)))

    emit_streamed({
        "range": review.range, "commits": review.commits, "counts": review.counts(), "limit": limit,
        "secrets": iter(review.secrets[:limit]), "violations": iter(review.violations[:limit]),
        "intake": review.intake, "promotions": review.promotions,
        "ledger_shards": review.ledger_shards, "ledger_lines_moved": review.moved,
        "format_change": None if review.formats is None else dict(zip(("from", "to"), review.formats, strict=True)),
        "facts_added": rows("SELECT data FROM facts ORDER BY subject, id"),
        "facts_superseded": review.superseded(n),
        "intake_records": rows("SELECT data FROM intake ORDER BY created, id, seq"),
        "binder": binder.decisions(review, n), "binder_waiting": binder.waiting(review, n),
        "code_anchors_stale": None if review.anchors is None else iter(review.stale_files()[:limit]),
        **{section: workspace.items(section, n, parsed=False) for section in ITEM_SECTIONS if section != "binder"},
    })
