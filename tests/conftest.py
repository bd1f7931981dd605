"""Fixtures: real git repositories in temporary folders, never the real $HOME; the order and the skips
of the collected tests (slow ones first; the ones that need the network only when asked for)."""

import compileall
import os
import shutil
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import memstack
from memstack.workflows import install

# The fixtures of the support modules, registered once for every test here: a session fixture imported into a test
# module would be that module's own, made again for each module importing it.
pytest_plugins = ["check_support", "excise_support", "migrate_support", "pgcluster"]


@pytest.fixture(autouse=True, scope="session")
def _compiled() -> None:
    """memstack's modules compiled to bytecode once, as `pip install` does: a run starts thousands of `memstack`
    processes, and where PYTHONDONTWRITEBYTECODE is set (or after an edit to an editable install) each of
    them would otherwise compile every changed module again (compileall writes only what is out of date)."""
    compileall.compile_dir(os.path.dirname(memstack.__file__), quiet=2)  # a read-only install: as it is


@pytest.fixture(autouse=True, scope="session")
def _isolated(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """Never touch the real $HOME, git config or pre-commit cache; give git an identity. The running
    Python's folder goes first on PATH, as activating its venv does: a server's pre-receive hook runs
    `memstack` from PATH and this repository's own hooks `python`, also when the venv's pytest was run
    without activating it (the tests that need the venv off PATH take it off themselves)."""
    home = tmp_path_factory.mktemp("home")
    with pytest.MonkeyPatch.context() as patch:
        bindir = os.path.dirname(sys.executable)
        if bindir not in os.environ.get("PATH", "").split(os.pathsep):
            patch.setenv("PATH", os.pathsep.join(filter(None, [bindir, os.environ.get("PATH")])))
        patch.setenv("HOME", str(home))
        patch.setenv("PRE_COMMIT_HOME", str(home / ".cache" / "pre-commit"))
        patch.setenv("GIT_CONFIG_NOSYSTEM", "1")
        patch.setenv("GIT_CONFIG_GLOBAL", str(home / ".gitconfig"))
        for name, value in (("GIT_AUTHOR_NAME", "Test Agent"), ("GIT_AUTHOR_EMAIL", "agent@example.com"),
                            ("GIT_COMMITTER_NAME", "Test Agent"), ("GIT_COMMITTER_EMAIL", "agent@example.com")):
            patch.setenv(name, value)
        for name in ("MEMSTACK_HOME", "WILLOW_HOME", "MEMSTACK_AGENT"):
            patch.delenv(name, raising=False)
        yield


@pytest.fixture(scope="session")
def _store_template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("template") / "store"
    install.init(root, ["alice", "bob"])
    return root


@pytest.fixture
def store(tmp_path: Path, _store_template: Path) -> Path:
    """A new store made by `memstack init` with agents alice (the default) and bob, hooks installed."""
    root = tmp_path / "store"
    shutil.copytree(_store_template, root, symlinks=True)
    return root


NETWORK = "MEMSTACK_TEST_NETWORK"


# The modules one worker runs whole: each makes a costly fixture once for the module (two clones met in every way,
# a store made by an older release, a store larger than the memory limit, a signed store with its remotes, an
# excised one, the corpus's committed before-states, histories of decisions, a team after a sync, a team before and
# after a forget, 9,000 records promoted once, clones of an older release with one migrated), which a module split
# between the workers would make on each.
WHOLE_MODULES = frozenset({"tests/workflows/test_promote_merge.py", "tests/kb/test_disagree.py",
                           "tests/workflows/test_forget_team.py", "tests/workflows/test_promote_scale.py",
                           "tests/workflows/test_upgrade_clones.py", "tests/workflows/test_migrate.py",
                           "tests/test_scale.py",
                           "tests/integrity/test_signed_binder.py", "tests/integrity/test_erasure_receive.py",
                           "tests/integrity/test_corpus.py", "tests/replica/test_pg_reads.py",
                           "tests/workflows/test_sync_excise.py", "tests/replica/test_pg_sync.py"})


def _module(nodeid: str) -> str:
    return nodeid.split("::", 1)[0]


@pytest.hookimpl(optionalhook=True, tryfirst=True)
def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> Any:
    """pytest-xdist's `--dist load` (what `-n` alone gives) with WHOLE_MODULES each handed to one worker as one
    unit of work, the rest a test at a time, in the order of the collection (`--no-loadscope-reorder`,
    pyproject.toml): a worker that frees takes the next unit. (`--dist loadgroup` would do it by mark, but it
    relies on a private attribute of the test ids that pytest 9 no longer reads.)"""
    if config.getvalue("dist") != "load":
        return None  # a --dist of the command line: as it says
    from xdist.scheduler import LoadScopeScheduling

    class WholeModules(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            return _module(nodeid) if _module(nodeid) in WHOLE_MODULES else nodeid

    return WholeModules(config, log)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The tests marked `slow` first, then WHOLE_MODULES, then the rest: pytest-xdist hands out the tests in
    this order as a worker frees (pytest_xdist_make_scheduler), so a long test or module never starts last
    and keeps one core busy after the other has finished (a stable sort: the rest keep their order).

    The tests marked `network` install from a package index: skipped, saying so, unless
    MEMSTACK_TEST_NETWORK=1 (`.ci/run` sets it), so the README's `pytest` never reaches the network."""
    items.sort(key=lambda item: (item.get_closest_marker("slow") is None, _module(item.nodeid) not in WHOLE_MODULES))
    if os.environ.get(NETWORK) != "1":
        offline = pytest.mark.skip(reason=f"pip installs from the package index (the network): run with {NETWORK}=1"
                                          " (.ci/run does)")
        for item in items:
            if item.get_closest_marker("network"):
                item.add_marker(offline)
