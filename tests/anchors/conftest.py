"""A code repository whose memory lives in `.memory/` (made by `memstack init .memory`), with code to
anchor to: `app.py` (8 lines) and `lib/util.py`, committed."""

import shutil
from pathlib import Path

import pytest

from helpers import code_with_memory

APP = "import os\n\n\ndef deploy_day():\n    return 'monday'\n\n\ndef region():\n    return 'eu'\n"
UTIL = "def helper():\n    return 42\n"


@pytest.fixture(scope="session")
def _code_template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return code_with_memory(tmp_path_factory.mktemp("anchors") / "code", {"app.py": APP, "lib/util.py": UTIL})


@pytest.fixture
def code(_code_template: Path, tmp_path: Path) -> Path:
    """The code repository; its store is `code / ".memory"`, agent alice."""
    repo = tmp_path / "code"
    shutil.copytree(_code_template, repo, symlinks=True)
    return repo
