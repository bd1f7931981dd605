"""The promotion ledger as the views read it: the lines of one intake file's records.

The one place the views read the ledger (the Binder queue: which of a file's records were routed to
the binder). Format 2 keeps those lines in the file's own shard, `layout.ledger_shard(intake_file)`;
while a store still holds format 1's one-file ledger they are found there by their `file`.
"""

import weakref
from collections.abc import Iterator
from typing import Any

from memstack.base.jsonio import iter_jsonl, iter_jsonl_pieces
from memstack.base.layout import V1_LEDGER, ledger_shard
from memstack.repo.sources import Source

# the one-file ledger's binder lines by intake file, read once per source (format 1 only)
_V1: "weakref.WeakKeyDictionary[Any, dict[str, list[dict[str, Any]]]]" = weakref.WeakKeyDictionary()


def lines(source: Source, intake_file: str) -> Iterator[dict[str, Any]]:
    """The ledger lines of the records of `intake_file` (`intake/<agent>/YYYY-MM-DD.jsonl`), as read
    through `source`. (Of the one-file ledger, only the lines routed to the binder are kept.)"""
    shard = ledger_shard(intake_file)
    data = source.read(shard)
    if data is not None:
        return iter_jsonl(data, shard)
    if source not in _V1:
        by_file: dict[str, list[dict[str, Any]]] = {}
        for line in iter_jsonl_pieces(source.stream(V1_LEDGER), V1_LEDGER):
            if line.get("sub_tier") == "binder" and isinstance(line.get("file"), str):
                by_file.setdefault(line["file"], []).append(line)
        _V1[source] = by_file
    return iter(_V1[source].get(intake_file, ()))


def files_of(appended: bytes) -> set[str] | None:
    """The intake files the ledger lines `appended` to the one-file ledger name (None: a line names
    none, so any file may have changed)."""
    found: set[str] = set()
    for line in iter_jsonl(appended, V1_LEDGER):
        if not isinstance(line.get("file"), str):
            return None
        found.add(line["file"])
    return found
