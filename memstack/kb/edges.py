"""Human-confirmed relations between subjects (Willow's `mem_binder_edge`) and `memstack related`.

An edge is a `kind: edge` line of `kb/binder.jsonl` (append-only): `from`,
`relation`, `to`, who confirmed it (`by`) and when (`decided_at`). `related`
walks out from a subject: at each step, the edges that touch a subject reached
(either end), and the facts of that subject valid now whose object names another
subject known to the store (the subject of a fact, or an end of an edge); what
they reach is the next step's subjects, up to `depth` steps.
"""

import re
from pathlib import Path
from typing import Any

from memstack.base import files, jsonio, layout
from memstack.base.errors import bad
from memstack.base.files import append_line, locked
from memstack.kb import binder

MAX_DEPTH = 5
FIELDS = {"from": "--from", "to": "--to", "relation": "--relation"}


def all_edges(store: Path) -> list[dict[str, Any]]:
    """Every edge of the Binder, in the order confirmed."""
    return [d for d in files.read_log(store, layout.DECISIONS) if d.get("kind") == "edge"]


def add(store: Path, source: str, target: str, relation: str, by: str, now_ms: int,
        note: str | None = None) -> dict[str, Any]:
    """Append a confirmed edge; returns it. Bad or repeated input raises MemstackError (exit 2)."""
    entry: dict[str, Any] = {"kind": "edge", "from": source, "to": target, "relation": relation,
                             "decided_at": now_ms, "by": by}
    for key, option in FIELDS.items():
        if not isinstance(entry[key], str) or not entry[key].strip():
            raise bad(option, repr(entry[key]), "must be non-empty text")
    if source == target:
        raise bad("--to", repr(target), "an edge joins two different subjects")
    binder.check_entry(store, entry, note)
    with locked(store, layout.DECISIONS + ".decide"):
        for edge in all_edges(store):
            if (edge.get("from"), edge.get("relation"), edge.get("to")) == (source, relation, target):
                raise bad("--relation", repr(relation), "{source} {relation} {target} was already confirmed by {by}"
                          " (an edge is entered once)", source=source, relation=relation, target=target,
                          by=edge.get("by"))
        append_line(store, layout.DECISIONS, jsonio.dumps_line(entry))
    return entry


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
    from memstack.kb.index import queries

    if not isinstance(subject, str) or not subject.strip():
        raise bad("SUBJECT", repr(subject), "must be non-empty text")
    depth = check_depth(depth)
    edges = all_edges(store)
    edge_ends = {e["from"] for e in edges} | {e["to"] for e in edges}
    items: dict[tuple[Any, ...], dict[str, Any]] = {}
    reached, frontier = {subject}, {subject}
    for step in range(1, depth + 1):
        found: set[str] = set()
        for name in sorted(frontier):
            for edge in edges:
                if name in (edge["from"], edge["to"]):
                    item = _edge_item(edge, step)
                    items.setdefault(item_key(item)[1:], item)
                    found.add(edge["to"] if edge["from"] == name else edge["from"])
            current = [f for f in queries.valid_at(store, now_ms, name) if f["object"] != name]
            known = edge_ends | queries.known_subjects(store, {f["object"] for f in current})
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


_WORD = r"(?<![\w-]){}(?![\w-])"


def touching(store: Path, threads: list[str]) -> list[dict[str, Any]]:
    """The edges with an end named (a whole word, any case) in one of `threads` (an agent's open threads)."""
    found = []
    for edge in all_edges(store):
        ends = [re.compile(_WORD.format(re.escape(edge[key])), re.IGNORECASE) for key in ("from", "to")]
        if any(end.search(thread) for end in ends for thread in threads):
            found.append(edge)
    return found
