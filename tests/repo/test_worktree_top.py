"""The top of the work tree holding a folder is asked of git once a process (a promotion asks for its
store's several times), and asked again when a repository appears or goes between the folder and it."""

import shutil
import subprocess
from pathlib import Path

import pytest

from memstack.repo import git


def init(path: Path) -> None:
    subprocess.run(["git", "init", "-q", str(path)], check=True)


def test_the_top_is_asked_once_then_again_when_a_repository_appears_or_goes(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    outer, inner = tmp_path / "outer", tmp_path / "outer" / "a" / "b"
    inner.mkdir(parents=True)
    init(outer)
    asked: list[tuple[str, ...]] = []
    real = git.run

    def counting(cwd, *args, **kwargs):  # type: ignore[no-untyped-def]
        asked.append(args)
        return real(cwd, *args, **kwargs)

    monkeypatch.setattr(git, "run", counting)
    assert git.worktree_top(inner) == outer.resolve()
    assert git.worktree_top(inner) == outer.resolve() and git.is_worktree(inner)
    assert len(asked) == 1  # the answer taken again: no second git

    init(inner)  # a repository of its own now
    assert git.worktree_top(inner) == inner.resolve()
    shutil.rmtree(inner / ".git")
    assert git.worktree_top(inner) == outer.resolve()
    shutil.rmtree(outer / ".git")
    assert git.worktree_top(inner) is None and not git.is_worktree(inner)
    init(outer)
    assert git.is_worktree(inner) and not git.is_worktree(outer / ".git")
