"""A store in a folder of a code repository whose own files take an unusual shape: a pre-commit configuration
written in flow style, a branch made before the store existed."""

import os
import subprocess
from pathlib import Path

from helpers import MEMSTACK, git, memstack

FLOW = 'repos: [{repo: local, hooks: [{id: mine, name: mine, entry: "true", language: system}]}]\n'


def _repo(tmp_path: Path, config: str) -> Path:
    repo = tmp_path / "code"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    (repo / "a.py").write_text("a = 1\n")
    (repo / ".pre-commit-config.yaml").write_text(config)
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "code")
    return repo


def test_memstacks_hooks_join_a_flow_style_configuration_and_run(tmp_path: Path) -> None:
    """ruamel.yaml writes a folded scalar's folds as BEL characters in flow style: the launcher would run `\\a`
    as a command and refuse every commit of a clone where `memstack install` was not run."""
    repo = _repo(tmp_path, FLOW)
    assert memstack("init", ".memory", "--agent", "alice", cwd=repo).returncode == 0
    config = (repo / ".pre-commit-config.yaml").read_text()
    assert "\a" not in config and "id: mine" in config and config.count("memstack-check") == 3
    git(repo, "config", "--unset", "memstack.python")  # a clone nobody ran `memstack install` in
    assert memstack("intake", "write", "--content", "hello", cwd=repo / ".memory").returncode == 0
    git(repo, "add", "-A")
    path = os.pathsep.join([os.path.dirname(MEMSTACK), "/usr/bin", "/bin"])  # memstack on PATH, as installed
    done = subprocess.run(["git", "commit", "-q", "-m", "memory"], cwd=repo, capture_output=True, text=True,
                          env={**os.environ, "PATH": path})
    assert done.returncode == 0, done.stdout + done.stderr


def test_the_clone_local_folder_stays_ignored_on_a_branch_made_before_the_store(tmp_path: Path) -> None:
    """The store's own .gitignore is not on a branch older than the store: its caches would be committed there
    (and removed again by the next checkout). The clone's git/info/exclude ignores them on every branch."""
    repo = _repo(tmp_path, FLOW)
    before = git(repo, "rev-parse", "HEAD").stdout.strip()
    assert memstack("init", ".memory", "--agent", "alice", cwd=repo).returncode == 0
    assert memstack("recall", "--subject", "x", cwd=repo / ".memory").returncode == 0  # makes the fact index
    assert (repo / ".memory" / ".memstack").is_dir()
    git(repo, "checkout", "-q", "-b", "old", before)
    assert ".memstack" not in git(repo, "status", "--porcelain", "--untracked-files=all").stdout


def test_init_refuses_a_git_folder_and_the_inside_of_another_store(tmp_path: Path) -> None:
    repo = _repo(tmp_path, FLOW)
    assert memstack("init", ".memory", "--agent", "alice", cwd=repo).returncode == 0
    head = git(repo, "rev-parse", "HEAD").stdout
    for path, said in ((".git/mem", "is inside a git folder"), (".memory/sub", "is inside the store at")):
        refused = memstack("init", path, "--agent", "alice", cwd=repo)
        assert refused.returncode == 2 and said in refused.stderr, refused.stderr
        assert len(refused.stderr.splitlines()) == 1 and not (repo / path).exists()
    assert git(repo, "rev-parse", "HEAD").stdout == head and git(repo, "status", "--porcelain").stdout == ""


def test_the_store_to_pass_is_named_as_the_folder_run_in_reaches_it(tmp_path: Path) -> None:
    """A second store made from a subfolder: the `--store` init suggests works pasted where init ran (it named the
    path from the repository's top, unquoted)."""
    repo = _repo(tmp_path, FLOW)
    assert memstack("init", ".memory", "--agent", "alice", cwd=repo).returncode == 0
    (repo / "docs").mkdir()
    made = memstack("init", "my notes", "--agent", "alice", cwd=repo / "docs")
    assert made.returncode == 0, made.stderr
    assert "outside docs/my notes, pass --store 'my notes' or set MEMSTACK_HOME" in made.stdout, made.stdout
    assert memstack("--store", "my notes", "status", cwd=repo / "docs").returncode == 0
