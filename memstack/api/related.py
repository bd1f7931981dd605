"""`related`: a subject's confirmed edges and the facts that name other subjects."""

from typing import Any

from memstack.base import pages
from memstack.base.times import now_ms
from memstack.kb import related as walk
from memstack.repo.store import Store

_SHAPE = pages.shaped(int, str, str, str, str, str)  # related.item_key


def related_document(store: Store, *, subject: str, depth: Any = 1, limit: Any = None,
                     cursor: str | None = None, max_bytes: int | None = None) -> dict[str, Any]:
    """The document `related --json` prints and the `related` tool returns."""

    pages.check_limit(limit)
    pages.page([], limit=limit, cursor=cursor, key=walk.item_key, verb="related",
               shape=_SHAPE, query=[subject, depth])  # a bad cursor is refused before the walk
    found = walk.related(store.root, subject, depth, now_ms())
    steps = walk.check_depth(depth)
    page = pages.page(found, limit=limit, cursor=cursor, key=walk.item_key, verb="related", shape=_SHAPE,
                      max_bytes=pages.room(max_bytes, subject=subject, depth=steps), query=[subject, depth])
    return {"subject": subject, "depth": steps, "items": page.items, **page.fields()}
