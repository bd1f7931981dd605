"""`search`: ranked full-text search across the layers."""

from typing import Any

from memstack.repo.store import Store
from memstack.search.query import search


def search_document(store: Store, *, query: Any, layer: Any = (), agent: Any = None, tier: Any = None,
                    table: Any = None, valid_at: Any = None, as_of: Any = None, limit: Any = None,
                    cursor: Any = None, max_bytes: int | None = None) -> dict[str, Any]:
    """The document `search --json` prints and the `search` tool returns."""

    return search(store.root, query, layer=layer, agent=agent, tier=tier, table=table, valid_at=valid_at,
                  as_of=as_of, limit=limit, cursor=cursor, max_bytes=max_bytes)
