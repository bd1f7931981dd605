"""`search`: ranked full-text search across the layers, fused with a ranking by meaning where installed."""

from pathlib import Path
from typing import Any

import orjson

from memstack.anchors.used import FIELD, CodeStatus
from memstack.base import config, secrets, shown
from memstack.base.errors import MemstackError, bad
from memstack.repo.store import Store, agent_filter
from memstack.search.query import search
from memstack.search.semantic import INSTALL, available


def search_document(store: Store, *, query: Any, layer: Any = (), agent: Any = None, tier: Any = None,
                    table: Any = None, valid_at: Any = None, as_of: Any = None, limit: Any = None,
                    cursor: Any = None, max_bytes: int | None = None, semantic: Any = None) -> dict[str, Any]:
    """The document `search --json` prints and the `search` tool returns. `semantic`: True fuses the
    ranking by meaning (an error without the extra), False the words alone, None as memstack.yaml says
    (`search.semantic: true` where the extra is installed; the words alone by default and elsewhere).
    A credential that reached memory past the checks is redacted (unless revealed: base/shown.py); a
    forgotten record's text is not in the index at all. A hit of a fact or intake record with code anchors
    carries their `code_status` (memstack/anchors/used.py)."""
    arguments = {"layer": layer, "agent": agent_filter(store, agent), "tier": tier, "table": table,
                 "valid_at": valid_at, "as_of": as_of, "limit": limit, "cursor": cursor, "max_bytes": max_bytes}
    if _semantic(store, semantic):
        from memstack.search.semantic import fuse  # lazy: numpy and the model only when used

        document = fuse.search(store.root, query, **arguments)
    else:
        document = search(store.root, query, **arguments)
    document["hits"] = _with_code_status(store.root, document["hits"], max_bytes, document)
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


def _with_code_status(root: Path, hits: list[dict[str, Any]], max_bytes: int | None,
                      document: dict[str, Any]) -> list[dict[str, Any]]:
    """The hits, those of anchored facts and intake records with `code_status`. Past the byte budget (the
    page was weighed without it), the hits from the last on keep only their records' worst status."""
    records = _records(root, hits)
    if not records:
        return hits
    with CodeStatus(root) as status:
        shown = dict(zip(records, status.add(records.values()), strict=True))
    found = [{**hit, FIELD: shown[n][FIELD]} if n in shown and FIELD in shown[n] else hit
             for n, hit in enumerate(hits)]
    if max_bytes is not None:
        size = len(orjson.dumps({**document, "hits": found}))
        for n in reversed(range(len(found))):
            if size <= max_bytes:
                break
            if FIELD in found[n]:
                brief = {"status": found[n][FIELD]["status"]}
                size -= len(orjson.dumps(found[n][FIELD])) - len(orjson.dumps(brief))
                found[n] = {**found[n], FIELD: brief}
    return found


def _records(root: Path, hits: list[dict[str, Any]]) -> dict[int, dict[str, Any]]:
    """The record behind each hit of a fact (from the fact index) or an intake record (its line), by the
    hit's place; only those that carry anchors."""
    from memstack.kb.index import queries  # lazy: the fact index (sqlite3)

    ids = [hit["id"] for hit in hits if hit["layer"] == "facts" and isinstance(hit.get("id"), str)]
    facts = {fact_id: fact for fact_id, (_, fact) in queries.locate(root, ids).items()} if ids else {}
    lines: dict[str, list[bytes]] = {}
    found: dict[int, dict[str, Any]] = {}
    for n, hit in enumerate(hits):
        record: Any = None
        if hit["layer"] == "facts":
            record = facts.get(str(hit.get("id")))
        elif hit["layer"] == "intake" and isinstance(hit.get("line"), int):
            if hit["path"] not in lines:
                try:
                    lines[hit["path"]] = (root / hit["path"]).read_bytes().splitlines()
                except OSError:
                    lines[hit["path"]] = []
            held = lines[hit["path"]]
            line = held[hit["line"] - 1] if 0 < hit["line"] <= len(held) else b""
            try:
                record = orjson.loads(line) if b'"anchors"' in line else None
            except orjson.JSONDecodeError:
                record = None  # `memstack check` names a broken line; a search shows its hit as it is
        if isinstance(record, dict) and record.get("anchors") and record.get("id") == hit.get("id"):
            found[n] = record
    return found
