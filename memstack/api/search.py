"""`search`: ranked full-text search across the layers, fused with a ranking by meaning where installed."""

from typing import Any

from memstack.base import config, secrets, shown
from memstack.base.errors import MemstackError, bad
from memstack.repo.store import Store
from memstack.search.query import search
from memstack.search.semantic import INSTALL, available


def search_document(store: Store, *, query: Any, layer: Any = (), agent: Any = None, tier: Any = None,
                    table: Any = None, valid_at: Any = None, as_of: Any = None, limit: Any = None,
                    cursor: Any = None, max_bytes: int | None = None, semantic: Any = None) -> dict[str, Any]:
    """The document `search --json` prints and the `search` tool returns. `semantic`: True fuses the
    ranking by meaning (an error without the extra), False the words alone, None as memstack.yaml says
    (`search.semantic: true` where the extra is installed; the words alone by default and elsewhere).
    A credential that reached memory past the checks is redacted (unless revealed: base/shown.py); a
    forgotten record's text is not in the index at all."""
    arguments = {"layer": layer, "agent": agent, "tier": tier, "table": table, "valid_at": valid_at,
                 "as_of": as_of, "limit": limit, "cursor": cursor, "max_bytes": max_bytes}
    if _semantic(store, semantic):
        from memstack.search.semantic import fuse  # lazy: numpy and the model only when used

        document = fuse.search(store.root, query, **arguments)
    else:
        document = search(store.root, query, **arguments)
    if not shown.REVEAL:
        document["hits"] = secrets.redact(document["hits"], secrets.for_store(store.root))
    return document


def _semantic(store: Store, chosen: Any) -> bool:
    if chosen not in (None, True, False):
        raise bad("--semantic", repr(chosen), "must be true or false")
    if chosen is True and not available():
        raise bad("--semantic", None, "ranking by meaning needs the semantic extra: {install}",
                  install=INSTALL)
    if chosen is None:
        try:
            wanted = config.semantic_search(config.load(store.root).document)
        except MemstackError:
            wanted = False  # a broken memstack.yaml is reported where it is read for its own sake
        return wanted and available()
    return bool(chosen)
