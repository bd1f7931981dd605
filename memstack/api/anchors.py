"""`memstack anchors` and the `anchors` tool: the anchored open facts and pending intake records, each
with its code anchors' status (memstack/anchors/), a page at a time."""

from typing import Any

from memstack.anchors.survey import survey
from memstack.base import pages
from memstack.base.errors import bad
from memstack.base.times import now_ms
from memstack.repo.store import Store

_SHAPE = pages.shaped(str, str)  # (kind, id)


def anchors_document(store: Store, *, subject: Any = None, status: Any = None, rev: Any = None,
                     repo: str | None = None, limit: Any = None, cursor: str | None = None,
                     max_bytes: int | None = None) -> dict[str, Any]:
    """`{"items", "next_cursor", "remaining"}`: facts first, then intake records, each by id."""
    found = sorted(survey(store, rev=rev, repo=repo, subject=subject, status=status),
                   key=lambda i: (i["kind"], i["id"]))
    return pages.page(found, limit=limit, cursor=cursor, key=lambda i: (i["kind"], i["id"]), verb="anchors",
                      shape=_SHAPE, max_bytes=max_bytes).document()


def reverify_document(store: Store, *, id: Any, by: Any, note: str | None = None, repo: str | None = None,
                      via: str | None = None) -> dict[str, Any]:
    """`anchors reverify --json`: the Binder line recorded (memstack/anchors/reverify.py)."""
    from memstack.anchors.reverify import reverify  # deferred: only when one is recorded

    return reverify(store, id, by, now_ms(), note=note, repo=repo, via=via)


def check_document(store: Store, *, range: Any, repo: str | None = None) -> dict[str, Any]:
    """`anchors check A..B --json`: the records the code change A..B makes stale, per changed file
    (memstack/anchors/check.py)."""
    from memstack.anchors.check import check  # deferred: only when a range is checked

    if not isinstance(range, str):
        raise bad("range", repr(range), "expected A..B")
    return check(store, range, repo)
