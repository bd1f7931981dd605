"""Human-confirmed relations between subjects (Willow's `mem_binder_edge`).

An edge is a `kind: edge` line of `kb/binder.jsonl` (append-only): `from`,
`relation`, `to`, who confirmed it (`by`) and when (`decided_at`). `memstack
related` walks them (kb/related.py).
"""

import re
from pathlib import Path
from typing import Any

from memstack.base import jsonio, layout, logfiles
from memstack.base.errors import bad
from memstack.base.files import append_line, locked
from memstack.base.names import check_printable
from memstack.kb import binder

MAX_DEPTH = 5  # the most steps `memstack related` walks (kb/related.py)
FIELDS = {"from": "--from", "to": "--to", "relation": "--relation"}


def all_edges(store: Path) -> list[dict[str, Any]]:
    """Every edge of the Binder, in the order confirmed."""
    return [d for d in logfiles.read_log(store, layout.DECISIONS) if d.get("kind") == "edge"]


def add(store: Path, source: str, target: str, relation: str, by: str, now_ms: int,
        note: str | None = None, *, via: str | None = None) -> dict[str, Any]:
    """Append a confirmed edge; returns it. Bad or repeated input raises MemstackError (exit 2)."""
    entry: dict[str, Any] = {"kind": "edge", "from": source, "to": target, "relation": relation,
                             "decided_at": now_ms, "by": by}
    for key, option in FIELDS.items():
        if not isinstance(entry[key], str) or not entry[key].strip():
            raise bad(option, repr(entry[key]), "must be non-empty text")
        check_printable(entry[key], option)
    if source == target:
        raise bad("--to", repr(target), "an edge joins two different subjects")
    binder.check_entry(store, entry, note, via)
    with locked(store, layout.DECISIONS + ".decide"):
        for edge in all_edges(store):
            if (edge.get("from"), edge.get("relation"), edge.get("to")) == (source, relation, target):
                raise bad("--relation", repr(relation), "{source} {relation} {target} was already confirmed by {by}"
                          " (an edge is entered once)", source=source, relation=relation, target=target,
                          by=edge.get("by"))
        append_line(store, layout.DECISIONS, jsonio.dumps_line(entry))
    return entry


_WORD = r"(?<![\w-]){}(?![\w-])"


def touching(store: Path, threads: list[str]) -> list[dict[str, Any]]:
    """The edges with an end named (a whole word, any case) in one of `threads` (an agent's open threads)."""
    found = []
    for edge in all_edges(store):
        ends = [re.compile(_WORD.format(re.escape(edge[key])), re.IGNORECASE) for key in ("from", "to")]
        if any(end.search(thread) for end in ends for thread in threads):
            found.append(edge)
    return found
