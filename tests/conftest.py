"""Fixtures: real git repositories in temporary folders, never the real $HOME."""

import os
from pathlib import Path

import pytest

from memstack import install


@pytest.fixture(autouse=True, scope="session")
def _pre_commit_home(tmp_path_factory: pytest.TempPathFactory) -> None:
    # One pre-commit cache for the whole run (it is slow to create), never the real $HOME's.
    os.environ["PRE_COMMIT_HOME"] = str(tmp_path_factory.mktemp("pre-commit-home"))


@pytest.fixture(autouse=True)
def _isolated(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Never touch the real $HOME or git config; give git an identity."""
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(home / ".gitconfig"))
    for name, value in (("GIT_AUTHOR_NAME", "Test Agent"), ("GIT_AUTHOR_EMAIL", "agent@example.com"),
                        ("GIT_COMMITTER_NAME", "Test Agent"), ("GIT_COMMITTER_EMAIL", "agent@example.com")):
        monkeypatch.setenv(name, value)
    for name in ("MEMSTACK_HOME", "WILLOW_HOME", "MEMSTACK_AGENT"):
        monkeypatch.delenv(name, raising=False)


@pytest.fixture
def store(tmp_path: Path) -> Path:
    """A new store made by `memstack init` with agents alice (the default) and bob."""
    root = tmp_path / "store"
    install.init(root, ["alice", "bob"])
    return root
