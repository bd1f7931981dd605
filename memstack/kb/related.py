"""`memstack related`: what is related to a subject, walked out from it.

At each step, the Binder's edges that touch a subject reached (either end), and the facts of that
subject valid now whose object names another subject known to the store (the subject of a fact, or
an end of an edge); what they reach is the next step's subjects, up to `depth` steps.
"""

from pathlib import Path
from typing import Any

from memstack.base.errors import bad
from memstack.kb.edges import MAX_DEPTH, all_edges
from memstack.kb.index import queries


def check_depth(depth: Any) -> int:
    try:
        value = int(depth) if not isinstance(depth, bool) else None
    except (TypeError, ValueError):
        value = None
    if value is None or not 1 <= value <= MAX_DEPTH:
        raise bad("depth", str(depth), "expected a whole number from 1 to {most}", most=MAX_DEPTH)
    return value


def _edge_item(edge: dict[str, Any], depth: int) -> dict[str, Any]:
    return {"kind": "edge", "depth": depth, "from": edge["from"], "relation": edge["relation"], "to": edge["to"],
            "id": None, "by": edge.get("by"), "decided_at": edge.get("decided_at"), "note": edge.get("note")}


def _fact_item(fact: dict[str, Any], depth: int) -> dict[str, Any]:
    return {"kind": "fact", "depth": depth, "from": fact["subject"], "relation": fact["predicate"],
            "to": fact["object"], "id": fact["id"], "valid_from": fact["valid_from"], "table": fact.get("table"),
            "agent": fact.get("agent")}


def item_key(item: dict[str, Any]) -> tuple[int, str, str, str, str, str]:
    """The order `related` lists in (and its paging cursor): nearest first, then edges before facts."""
    return (item["depth"], item["kind"], item["from"], item["relation"], item["to"], item["id"] or "")


def related(store: Path, subject: str, depth: int, now_ms: int) -> list[dict[str, Any]]:
    """The edges and subject-naming facts within `depth` steps of `subject`, in item_key order."""

    if not isinstance(subject, str) or not subject.strip():
        raise bad("SUBJECT", repr(subject), "must be non-empty text")
    depth = check_depth(depth)
    edges = all_edges(store)
    touching: dict[str, list[dict[str, Any]]] = {}  # each edge under both its ends
    for edge in edges:
        for end in {edge["from"], edge["to"]}:
            touching.setdefault(end, []).append(edge)
    items: dict[tuple[Any, ...], dict[str, Any]] = {}
    reached, frontier = {subject}, {subject}
    for step in range(1, depth + 1):  # a step's subjects asked of the index together: a few questions a step
        found: set[str] = set()
        for name in frontier:
            for edge in touching.get(name, ()):
                item = _edge_item(edge, step)
                items.setdefault(item_key(item)[1:], item)
                found.add(edge["to"] if edge["from"] == name else edge["from"])
        current = [f for f in queries.valid_at_of(store, now_ms, frontier) if f["object"] != f["subject"]]
        known = touching.keys() | queries.known_subjects(store, {f["object"] for f in current})
        for fact in current:
            if fact["object"] in known:
                item = _fact_item(fact, step)
                items.setdefault(item_key(item)[1:], item)
                found.add(fact["object"])
        frontier = found - reached
        reached |= found
        if not frontier:
            break
    return sorted(items.values(), key=item_key)
