"""`search`: ranked full-text search across the layers."""

from typing import Any

from memstack.base import secrets, shown
from memstack.repo.store import Store
from memstack.search.query import search


def search_document(store: Store, *, query: Any, layer: Any = (), agent: Any = None, tier: Any = None,
                    table: Any = None, valid_at: Any = None, as_of: Any = None, limit: Any = None,
                    cursor: Any = None, max_bytes: int | None = None) -> dict[str, Any]:
    """The document `search --json` prints and the `search` tool returns; a credential that reached memory past
    the checks redacted (unless revealed: base/shown.py). A forgotten record's text is not in the index at all."""

    document = search(store.root, query, layer=layer, agent=agent, tier=tier, table=table, valid_at=valid_at,
                      as_of=as_of, limit=limit, cursor=cursor, max_bytes=max_bytes)
    if not shown.REVEAL:
        document["hits"] = secrets.redact(document["hits"], secrets.for_store(store.root))
    return document
