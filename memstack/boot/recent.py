"""The most recent facts of each knowledge view shard, kept by the shard's blob id.

willow.md and the anchors show the BOOT_FACTS most recently recorded facts of the whole view; those are
among the BOOT_FACTS most recent of each shard, so a shard's are all a build needs of it. They are kept in
`.memstack/boot/recent.json` (per clone, never committed; none in a bare repository) by the shard's blob
id, with its count: keyed by content, never wrong. A build parses only the shards it has not seen (a
promotion changes one agent's newest month), in the work tree, the index or a commit alike. What a
build did not use is let go when it is saved.
"""

import heapq
from typing import Any

import orjson

from memstack.base import files, jsonio
from memstack.base.errors import MemstackError
from memstack.repo.sources import Source

CACHE = "recent.json"
BOOT_FACTS = 20  # the most recent valid knowledge facts an anchor carries


def _recency(fact: dict[str, Any]) -> tuple[int, str]:
    return (-int(fact.get("recorded_at", 0)), str(fact.get("id")))


def recent_facts(facts: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return heapq.nsmallest(BOOT_FACTS, facts, key=_recency)  # sorted()[:BOOT_FACTS], without sorting them all


def _entries(data: bytes | None, relpath: str) -> list[dict[str, Any]]:
    view = jsonio.loads(data, relpath) if data else []
    return [f for f in view if isinstance(f, dict)] if isinstance(view, list) else []


class Recent:
    """Each shard's most recent facts and count, by blob id (`of`); `save` keeps those used."""

    def __init__(self, source: Source) -> None:
        folder = source.cache_dir()
        kept: Any = {}
        self.path = None
        try:
            self.path = None if folder is None else files.local_dir(folder, "boot") / CACHE
            kept = {} if self.path is None else orjson.loads(self.path.read_bytes())
        except (OSError, MemstackError, orjson.JSONDecodeError):  # none yet, or a store we may not write to
            kept = {}
        self.kept: dict[str, Any] = kept if isinstance(kept, dict) else {}
        self.used: dict[str, Any] = {}

    def of(self, source: Source, relpath: str) -> tuple[list[dict[str, Any]], int]:
        """The shard's BOOT_FACTS most recent facts and how many it holds (none: a shard that is not there)."""
        sha = source.blob_id(relpath)
        if sha is None:
            return [], 0
        found = self.kept.get(sha)
        if not (isinstance(found, list) and len(found) == 2 and isinstance(found[0], list)
                and isinstance(found[1], int)):
            entries = _entries(source.read(relpath), relpath)
            found = [recent_facts(entries), len(entries)]
        self.used[sha] = found
        return found[0], found[1]

    def save(self) -> None:
        if self.path is not None and self.used != self.kept:
            try:
                files.write_atomic(self.path, orjson.dumps(self.used))
            except (OSError, MemstackError):  # a store we may not write to: the next build parses again
                self.path = None
