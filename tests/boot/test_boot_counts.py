"""The boot files count the knowledge they do not show: the older months' shards are counted once and
the counts remembered (repo/counts.py), so a rebuild after a promotion re-reads only the folder of the
agent whose knowledge changed, not the whole view."""

import json
from pathlib import Path

from memstack.base import files
from memstack.boot import context as boot
from memstack.repo.counts import CachedCounts
from memstack.repo.sources import WorktreeSource


class Reads(WorktreeSource):
    """The work tree, noting each file read."""

    def __init__(self, root: Path) -> None:
        super().__init__(root)
        self.read_paths: list[str] = []

    def read(self, relpath: str) -> bytes | None:
        self.read_paths.append(relpath)
        return super().read(relpath)


def shard(entries: int, month: str) -> bytes:
    lines = [json.dumps({"id": f"{month}-{n:03}", "subject": f"s{n}", "predicate": "p", "object": "o",
                         "valid_from": n, "recorded_at": n}) for n in range(entries)]
    return ("[\n" + ",\n".join(lines) + "\n]\n").encode()


def summary(store: Path) -> tuple[int, list[str]]:
    source, counts = Reads(store), CachedCounts(store)
    _, count = boot.knowledge_summary(source, counts)
    counts.save()
    return count, source.read_paths


def test_the_older_months_are_counted_once_then_only_where_a_shard_was_replaced(tmp_path: Path) -> None:
    folder = tmp_path / "kb" / "knowledge" / "alice"
    folder.mkdir(parents=True)
    for month, entries in (("2026-01", 5), ("2026-02", 5), ("2026-03", boot.BOOT_FACTS + 5)):
        (folder / f"{month}.json").write_bytes(shard(entries, month))
    other = tmp_path / "kb" / "knowledge" / "bob"
    other.mkdir()
    (other / "2025-12.json").write_bytes(shard(7, "2025-12"))
    newest = "kb/knowledge/alice/2026-03.json"
    assert summary(tmp_path) == (boot.BOOT_FACTS + 5 + 5 + 5 + 7, [newest, "kb/knowledge/alice/2026-02.json",
                                                                   "kb/knowledge/alice/2026-01.json",
                                                                   "kb/knowledge/bob/2025-12.json"])
    assert summary(tmp_path) == (boot.BOOT_FACTS + 22, [newest])  # nothing changed: only the shown month
    files.write_atomic(folder / "2026-02.json", shard(6, "2026-02"))  # as a rebuild replaces a shard
    count, read = summary(tmp_path)
    assert count == boot.BOOT_FACTS + 23 and "kb/knowledge/bob/2025-12.json" not in read
    assert "kb/knowledge/alice/2026-02.json" in read
