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

from memstack.base import jsonio
from memstack.boot.kept import KeptFile
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
        self.file = KeptFile(source, CACHE)
        self.kept = self.file.held
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
        self.file.save(self.used, self.kept)
