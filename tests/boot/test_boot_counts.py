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
    assert summary(tmp_path) == (boot.BOOT_FACTS + 5 + 5 + 5 + 7, [newest, newest,  # hashed, then parsed
                                                                   "kb/knowledge/alice/2026-02.json",
                                                                   "kb/knowledge/alice/2026-01.json",
                                                                   "kb/knowledge/bob/2025-12.json"])
    # nothing changed: only the shown month is read, to be hashed (its recent facts are kept by blob id)
    assert summary(tmp_path) == (boot.BOOT_FACTS + 22, [newest])
    files.write_atomic(folder / "2026-02.json", shard(6, "2026-02"))  # as a rebuild replaces a shard
    count, read = summary(tmp_path)
    assert count == boot.BOOT_FACTS + 23 and "kb/knowledge/bob/2025-12.json" not in read
    assert "kb/knowledge/alice/2026-02.json" in read


def test_a_check_counts_each_shard_version_once_and_keeps_the_counts_by_blob_id(store: Path, monkeypatch) -> None:
    """A check rebuilds willow.md from git (the staged files, a commit), counting the older months' shards
    there: each blob is read to be counted once, then its count is kept by blob id in
    `.memstack/blob-counts.json`, so the next commit's check reads only the shards that changed."""
    from helpers import git, memstack
    from memstack.integrity import check
    from memstack.repo import objects

    folder = store / "kb" / "knowledge" / "alice"
    folder.mkdir(parents=True)
    months = {"2026-01": 5, "2026-02": 6, "2026-03": boot.BOOT_FACTS + 5}
    for month, entries in months.items():
        (folder / f"{month}.json").write_bytes(shard(entries, month))
    assert memstack("boot", "rebuild", cwd=store).returncode == 0
    git(store, "add", "-A")
    git(store, "commit", "-q", "--no-verify", "-m", "knowledge (views written by hand: no fact files)")

    counted: list[str] = []
    real = objects.CatFile.read
    monkeypatch.setattr(objects.CatFile, "read", lambda self, spec: counted.append(spec) or real(self, spec))
    check.audit(store)  # `check --all`: HEAD's files, willow.md rebuilt from them
    older = {git(store, "rev-parse", f"HEAD:kb/knowledge/alice/{m}.json").stdout.strip(): n
             for m, n in months.items() if m != "2026-03"}
    assert set(older) <= set(counted)
    assert older.items() <= json.loads((store / ".memstack" / "blob-counts.json").read_bytes()).items()

    files.write_atomic(folder / "2026-02.json", shard(7, "2026-02"))  # as a rebuild replaces a shard
    assert memstack("boot", "rebuild", cwd=store).returncode == 0
    git(store, "add", "-A")
    counted.clear()
    found = check.staged(store).violations
    changed = git(store, "rev-parse", ":kb/knowledge/alice/2026-02.json").stdout.strip()
    unchanged = git(store, "rev-parse", "HEAD:kb/knowledge/alice/2026-01.json").stdout.strip()
    assert changed in counted and unchanged not in counted  # the unchanged month's count is the kept one
    assert not [v for v in found if "willow" in v.path]  # and willow.md's total is right: 7 + 5 + 25
    assert json.loads((store / ".memstack" / "blob-counts.json").read_bytes())[changed] == 7


def test_a_check_parses_only_the_shown_shards_it_has_not_seen_and_builds_what_parsing_all_builds(
        store: Path) -> None:
    """The newest shards' most recent facts are kept by blob id (`.memstack/boot/recent.json`): a check of
    a commit that changes one agent's newest month parses that shard only, and builds the same boot files
    as a build that keeps nothing."""
    from helpers import HANDOFF, git, memstack
    from memstack.repo import objects
    from memstack.repo.sources import GitSource

    class IndexReads(GitSource):
        def __init__(self, cat: objects.CatFile) -> None:
            super().__init__(store, cat, None, counts={})
            self.read_paths: list[str] = []

        def read(self, relpath: str) -> bytes | None:
            self.read_paths.append(relpath)
            return super().read(relpath)

    assert memstack("handoff", "write", "--agent", "alice", input=HANDOFF, cwd=store).returncode == 0
    for agent, month, entries in (("alice", "2026-03", 12), ("bob", "2026-03", 12), ("alice", "2026-02", 5)):
        (store / "kb/knowledge" / agent).mkdir(parents=True, exist_ok=True)
        (store / f"kb/knowledge/{agent}/{month}.json").write_bytes(shard(entries, f"{agent}-{month}"))
    git(store, "add", "-A")
    shown = ["kb/knowledge/bob/2026-03.json", "kb/knowledge/alice/2026-03.json"]
    with objects.CatFile(store) as cat:
        first = IndexReads(cat)
        boot.build(first)
    assert [p for p in first.read_paths if p.startswith("kb/")] == shown
    (store / shown[0]).write_bytes(shard(13, "bob-2026-03"))
    git(store, "add", "-A")
    with objects.CatFile(store) as cat:
        second = IndexReads(cat)
        boot.build(second)
    assert [p for p in second.read_paths if p.startswith("kb/")] == shown[:1]  # alice's month: kept
    newest = [fact for path in shown for fact in json.loads((store / path).read_bytes())]  # an older month's
    every = boot.recent_facts(newest)  # facts are older (its shard here says otherwise: it is only counted)
    with objects.CatFile(store) as cat:
        assert boot.knowledge_summary(IndexReads(cat)) == (every, 12 + 13 + 5)  # kept
        (store / ".memstack/boot/recent.json").unlink()
        assert boot.knowledge_summary(IndexReads(cat)) == (every, 12 + 13 + 5)  # parsed
