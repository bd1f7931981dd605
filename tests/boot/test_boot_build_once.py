"""The boot files are built once a promotion: the commit's check (I4) takes the build the promotion made
from the work tree when the index it checks answers every question that build asked alike (the blob id of
each file read, each folder's names, each shard's count), and builds again when any answer differs. The
check still compares the staged files with that build: a hand-edited willow.md is refused."""

import json
from pathlib import Path

import pytest

from helpers import HANDOFF, git, memstack
from memstack.boot import context as boot
from memstack.integrity import check
from memstack.repo import objects
from memstack.repo.sources import GitSource, WorktreeSource


def shard(month: str, entries: int, subject: str = "s") -> bytes:
    lines = [json.dumps({"id": f"{month}-{n:03}", "subject": f"{subject}{n}", "predicate": "p", "object": "o",
                         "valid_from": n, "recorded_at": n}) for n in range(entries)]
    return ("[\n" + ",\n".join(lines) + "\n]\n").encode()


def committed_store(store: Path) -> Path:
    """A store with a handoff and three months of alice's knowledge view, its boot files built, committed."""
    assert memstack("handoff", "write", "--agent", "alice", input=HANDOFF, cwd=store).returncode == 0
    folder = store / "kb/knowledge/alice"
    folder.mkdir(parents=True)
    for month, entries in (("2026-01", 5), ("2026-02", 6), ("2026-03", boot.BOOT_FACTS + 5)):
        (folder / f"{month}.json").write_bytes(shard(month, entries))
    assert memstack("boot", "rebuild", cwd=store).returncode == 0
    git(store, "add", "-A")
    git(store, "commit", "-q", "--no-verify", "-m", "knowledge (views written by hand: no fact files)")
    return store


class Reads(GitSource):
    """The index, noting each file read (a shard's count is kept by blob id, as a check keeps it)."""

    def __init__(self, store: Path, cat: objects.CatFile) -> None:
        super().__init__(store, cat, None, counts={})
        self.read_paths: list[str] = []

    def read(self, relpath: str) -> bytes | None:
        self.read_paths.append(relpath)
        return super().read(relpath)


def test_a_build_from_an_index_holding_what_the_work_tree_build_read_is_taken_not_made(store: Path) -> None:
    committed_store(store)
    made = boot.build(WorktreeSource(store))
    with objects.CatFile(store) as cat:
        index = Reads(store, cat)
        assert boot.build(index) == made
    assert index.read_paths == []  # no shard, no handoff read: the build's inputs were compared by blob id


CHANGES = {  # a change of the work tree left unstaged: the index answers one question otherwise
    "a file read (the newest month)": lambda store: (store / "kb/knowledge/alice/2026-03.json").write_bytes(
        shard("2026-03", boot.BOOT_FACTS + 5, subject="t")),
    "a shard only counted (an older month)": lambda store: (store / "kb/knowledge/alice/2026-01.json").write_bytes(
        shard("2026-01", 9)),
    "a folder's names (a new month)": lambda store: (store / "kb/knowledge/alice/2026-04.json").write_bytes(
        shard("2026-04", 2)),
    "a handoff": lambda store: memstack("handoff", "write", "--agent", "bob", input=HANDOFF, cwd=store),
}


@pytest.mark.parametrize("change", sorted(CHANGES))
def test_a_build_from_an_index_that_differs_in_any_input_is_made_from_the_index(store: Path, change: str) -> None:
    committed_store(store)
    with objects.CatFile(store) as cat:
        from_index = boot.build(GitSource(store, cat, None))
    CHANGES[change](store)
    from_worktree = boot.build(WorktreeSource(store))  # the last build of this process now
    assert from_worktree != from_index
    with objects.CatFile(store) as cat:
        assert boot.build(GitSource(store, cat, None)) == from_index


def test_the_check_after_a_build_in_the_same_process_still_refuses_a_hand_edited_willow(store: Path) -> None:
    committed_store(store)
    boot.rebuild(store)  # this process's last build reads the very files the index holds
    (store / "willow.md").write_text((store / "willow.md").read_text() + "- a line of my own\n")
    git(store, "add", "willow.md")
    found = check.staged(store).violations
    assert [(v.path, v.rule) for v in found] == [("willow.md", "I4")]
