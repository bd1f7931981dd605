"""A code repository whose memory lives in `.memory/` (made by `memstack init .memory`), with code to
anchor to: `app.py` (8 lines) and `lib/util.py`, committed."""

import shutil
from pathlib import Path

import pytest

from helpers import git, memstack

APP = "import os\n\n\ndef deploy_day():\n    return 'monday'\n\n\ndef region():\n    return 'eu'\n"
UTIL = "def helper():\n    return 42\n"


@pytest.fixture(scope="session")
def _code_template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    repo = tmp_path_factory.mktemp("anchors") / "code"
    (repo / "lib").mkdir(parents=True)
    git(repo, "init", "-q", "-b", "main")
    (repo / "app.py").write_text(APP)
    (repo / "lib" / "util.py").write_text(UTIL)
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "code")
    result = memstack("init", ".memory", "--agent", "alice", cwd=repo)
    assert result.returncode == 0, result.stderr
    return repo


@pytest.fixture
def code(_code_template: Path, tmp_path: Path) -> Path:
    """The code repository; its store is `code / ".memory"`, agent alice."""
    repo = tmp_path / "code"
    shutil.copytree(_code_template, repo, symlinks=True)
    return repo
