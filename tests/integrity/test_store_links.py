"""The store's own folders linked outside it: `.memstack` (the index, the locks, temporary files) and
`kb/files` (the Binder's documents). Every command that would write or read through them is refused
with exit 2 naming the path (I7, as every other symlink in the store), and nothing lands outside; a
committed `kb/files` link is refused by the hook.
"""

import os
from pathlib import Path

import pytest

from check_support import refused, write
from helpers import git, memstack, tree_snapshot


def linked(root: Path, relpath: str, outside: Path) -> None:
    """`relpath` of the store replaced by a symlink to the folder `outside`."""
    outside.mkdir(parents=True, exist_ok=True)
    target = root / relpath
    if target.is_dir():
        for path in sorted(target.rglob("*"), reverse=True):
            path.rmdir() if path.is_dir() else path.unlink()
        target.rmdir()
    target.parent.mkdir(parents=True, exist_ok=True)
    os.symlink(outside, target)


def assert_refused(proc: object, relpath: str) -> None:
    assert proc.returncode == 2, proc.stdout + proc.stderr  # type: ignore[attr-defined]
    line = proc.stderr.strip()  # type: ignore[attr-defined]
    assert "\n" not in line and "Traceback" not in line, line
    assert f"{relpath}: I7 is a symlink" in line, line


@pytest.mark.parametrize("args", [
    ("fact", "add", "--subject", "deploys", "--predicate", "happen", "--object", "monday"),
    ("intake", "write", "--content", "an observation"),
    ("soil", "put", "session", "lexer", "--value", '"hand-written"'),
    ("recall", "--subject", "deploys"),
    ("search", "deploys"),
    ("promote",),
    ("status",),
], ids=lambda args: " ".join(args[:2]))
def test_a_memstack_folder_linked_outside_the_store_is_refused(repo: Path, tmp_path: Path,  # noqa: F811
                                                                args: tuple[str, ...]) -> None:
    outside = tmp_path / "elsewhere"
    linked(repo, ".memstack", outside)
    before, status = tree_snapshot(repo), git(repo, "status", "--porcelain").stdout
    proc = memstack(*args, "--store", str(repo))
    assert_refused(proc, ".memstack")
    assert list(outside.iterdir()) == []  # no index, lock or temporary file landed outside
    assert tree_snapshot(repo) == before
    assert git(repo, "status", "--porcelain").stdout == status


@pytest.mark.parametrize(("inside", "args"), [
    ("locks", ("intake", "write", "--content", "an observation")),
    ("tmp", ("soil", "put", "session", "lexer", "--value", '"hand-written"')),  # an atomic write's temporary file
])
def test_a_folder_inside_memstack_linked_outside_is_refused(repo: Path, tmp_path: Path,  # noqa: F811
                                                            inside: str, args: tuple[str, ...]) -> None:
    outside = tmp_path / "elsewhere"
    (repo / ".memstack").mkdir(exist_ok=True)
    linked(repo, f".memstack/{inside}", outside)
    before = tree_snapshot(repo)
    proc = memstack(*args, "--store", str(repo))
    assert_refused(proc, f".memstack/{inside}")
    assert list(outside.iterdir()) == []
    assert tree_snapshot(repo) == before


def test_kb_files_linked_outside_the_store_is_refused_when_filing(repo: Path, tmp_path: Path) -> None:  # noqa: F811
    outside = tmp_path / "elsewhere"
    linked(repo, "kb/files", outside)
    document = write(repo, "docs/adr-1.md", "# ADR 1\n\nUse git.\n")
    git(repo, "add", "docs/adr-1.md")
    git(repo, "commit", "-q", "-m", "a document")
    before = tree_snapshot(repo)
    proc = memstack("binder", "file", str(document), "--store", str(repo))
    assert_refused(proc, "kb/files")
    assert list(outside.iterdir()) == []
    assert tree_snapshot(repo) == before  # no Binder line for a copy that was not made


def test_a_committed_kb_files_link_is_refused_by_the_hook(repo: Path, tmp_path: Path) -> None:  # noqa: F811
    linked(repo, "kb/files", tmp_path / "elsewhere")
    refused(repo, "kb/files: I7 is a symlink")


def test_a_committed_memstack_link_is_refused_by_the_hook(repo: Path, tmp_path: Path) -> None:  # noqa: F811
    """.gitignore names `.memstack/`, a folder: a symlink of that name is not ignored, so `git add -A` takes
    it, and a clone would get the link. The hook refuses it."""
    linked(repo, ".memstack", tmp_path / "elsewhere")
    refused(repo, ".memstack: I7 is a symlink")
