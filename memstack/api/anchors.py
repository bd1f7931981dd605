"""`memstack anchors` and the `anchors` tool: the anchored open facts and pending intake records, each
with its code anchors' status (memstack/anchors/), a page at a time."""

from typing import Any

from memstack.anchors.survey import survey, texts
from memstack.base import pages
from memstack.base.errors import bad
from memstack.base.shown import Shown
from memstack.base.times import now_ms
from memstack.repo.store import Store

_SHAPE = pages.shaped(str, str)  # (kind, id)
_FILE = pages.shaped(str)  # (path,)


def anchors_document(store: Store, *, subject: Any = None, status: Any = None, rev: Any = None,
                     repo: str | None = None, limit: Any = None, cursor: str | None = None,
                     max_bytes: int | None = None) -> dict[str, Any]:
    """`{"items", "next_cursor", "remaining"}`: facts first, then intake records, each by id; a credential in
    a record or a code line `[redacted: kind]` (base/shown.py), the page at once."""
    found = sorted(survey(store, rev=rev, repo=repo, subject=subject, status=status),
                   key=lambda i: (i["kind"], i["id"]))
    page = pages.page(found, limit=limit, cursor=cursor, key=lambda i: (i["kind"], i["id"]), verb="anchors",
                      shape=_SHAPE, max_bytes=max_bytes, query=[subject, status, rev])
    return page.document(Shown.in_store(store.root).redacted_where(page.items, texts))


def reverify_document(store: Store, *, id: Any, by: Any, note: str | None = None, repo: str | None = None,
                      via: str | None = None) -> dict[str, Any]:
    """`anchors reverify --json`: the Binder line recorded (memstack/anchors/reverify.py)."""
    from memstack.anchors.reverify import reverify  # deferred: only when one is recorded

    return reverify(store, id, by, now_ms(), note=note, repo=repo, via=via)


def check_document(store: Store, *, range: Any, repo: str | None = None, limit: Any = None,
                   cursor: str | None = None, max_bytes: int | None = None) -> dict[str, Any]:
    """`anchors check A..B --json` and the `anchors_check` tool: the records the code change A..B makes stale,
    per changed file (memstack/anchors/check.py), the files a page at a time (`next_cursor`, `remaining`);
    `stale` counts the records of every page."""
    from memstack.anchors.check import check  # deferred: only when a range is checked

    if not isinstance(range, str):
        raise bad("range", repr(range), "expected A..B")
    pages.check_limit(limit)
    if cursor not in (None, ""):
        pages.decode(cursor, "anchors check", _FILE, query=[range])  # said before the range is read
    document = check(store, range, repo)
    found = pages.page(document.pop("files"), limit=limit, cursor=cursor, key=lambda f: (f["path"],),
                       verb="anchors check", shape=_FILE, max_bytes=pages.room(max_bytes, **document), query=[range])
    return {**document, "files": found.items, **found.fields()}
