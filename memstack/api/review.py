"""`review A..B`: what a range changes in memory, written as it is read (the report is never held whole)."""

from typing import Any

from memstack.base.errors import bad
from memstack.base.pages import MAX_LIMIT
from memstack.repo.store import Store, folder_of


def write_review(store: Store, spec: str, *, as_json: bool, limit: Any = None, full: bool = False) -> None:
    """The review of `spec` on stdout, Markdown or JSON, each list showing its first `limit` items (review.LIMIT
    by default), or every item when `full`."""
    from memstack import review  # lazy: the review and its SQLite workspace
    from memstack.anchors.check import check_of_review

    if limit is not None and (type(limit) is not int or not 1 <= limit <= MAX_LIMIT):
        raise bad("--limit", repr(limit), "expected a whole number from 1 to {most} ({arg:--full} for every item)",
                  most=MAX_LIMIT)
    if limit is not None and full:
        raise bad("--full", None, "lists every item, {arg:--limit} N the first N of each list: give one of them")
    shown = None if full else review.LIMIT if limit is None else limit
    top, folder = folder_of(store.root)  # a store in a folder of a code repository: its paths only
    with review.read_range(top, spec, folder) as found:  # streamed from disk: never the whole range held
        found.anchors = check_of_review(store, spec)
        if as_json:
            review.write_json(found, shown)
        else:
            review.write_markdown(found, limit=shown)
