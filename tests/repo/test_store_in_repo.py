"""A store in a folder of a code repository (`memstack init .memory`), and hooks that run
without the virtual environment on PATH: real repositories, real commits through the
installed hooks, the real pre-commit framework with the published `.pre-commit-hooks.yaml`."""

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from helpers import MEMSTACK, git, memstack
from memstack import __version__

ROOT = Path(__file__).resolve().parents[2]
BARE_PATH = "/usr/bin:/bin"  # no virtual environment on it
HANDOFF = "## Open threads\n- a thread\n\n## Capability table\n| capability | status |\n|---|---|\n| x | ok |\n"
CONFIG = """\
# The project's own hooks: this comment must survive
repos:
  - repo: local
    hooks:
      - id: project-hook  # and this one
        name: the project's hook
        entry: "true"
        language: system
"""


def _code_repo(tmp_path: Path) -> Path:
    repo = tmp_path / "code"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    (repo / "README.md").write_text("# a project\n")
    (repo / ".pre-commit-config.yaml").write_text(CONFIG)
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "code")
    return repo


@pytest.fixture(scope="session")
def _code_with_memory(tmp_path_factory: pytest.TempPathFactory) -> Path:
    repo = _code_repo(tmp_path_factory.mktemp("template"))
    result = memstack("init", ".memory", "--agent", "alice", cwd=repo)
    assert result.returncode == 0, result.stderr
    return repo


@pytest.fixture
def code(_code_with_memory: Path, tmp_path: Path) -> Path:
    """A code repository whose memory lives in `.memory/`, made by `memstack init .memory`."""
    repo = tmp_path / "code"
    shutil.copytree(_code_with_memory, repo, symlinks=True)
    return repo


def _commit(repo: Path, message: str, path: str = BARE_PATH, *extra: str) -> subprocess.CompletedProcess[str]:
    git(repo, "add", "-A")
    return subprocess.run(["git", "commit", "-q", *extra, "-m", message], cwd=repo, capture_output=True, text=True,
                          env={**os.environ, "PATH": path})


def _sealed(repo: Path) -> Path:
    assert memstack("handoff", "write", "--agent", "alice", cwd=repo / ".memory", input=HANDOFF).returncode == 0
    assert _commit(repo, "a handoff").returncode == 0
    [handoff] = (repo / ".memory" / "handoffs" / "alice").iterdir()
    return handoff


def test_init_in_a_work_tree_makes_a_folder_and_commits_only_the_store(tmp_path: Path) -> None:
    repo = _code_repo(tmp_path)
    (repo / "app.py").write_text("print('work in progress')\n")
    git(repo, "add", "app.py")
    result = memstack("init", ".memory", "--agent", "alice", "--json", cwd=repo)
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    assert "1 other staged file left staged, not committed" in report["message"]
    assert report["folder"] == ".memory" and report["repository"] == str(repo.resolve())
    assert not (repo / ".memory" / ".git").exists()  # no nested repository
    committed = git(repo, "show", "--name-only", "--format=", "HEAD").stdout.split()
    assert "app.py" not in committed and ".pre-commit-config.yaml" in committed
    assert ".github/workflows/memstack.yml" in committed and ".memory/memstack.yaml" in committed
    assert all(p.startswith((".memory/", ".pre-commit-config.yaml", ".github/")) for p in committed)
    assert git(repo, "status", "--porcelain").stdout == "A  app.py\n"  # still staged, not committed
    config = (repo / ".pre-commit-config.yaml").read_text()
    assert config.startswith("# The project's own hooks: this comment must survive")
    assert "# and this one" in config and "id: project-hook" in config and "id: memstack-check" in config
    assert "memstack.python" in config and "/tmp" not in config  # the launcher, no machine's path
    assert f'version: "{__version__}"' in (repo / ".memory" / "memstack.yaml").read_text() or \
        f"version: {__version__}" in (repo / ".memory" / "memstack.yaml").read_text()
    attrs = git(repo, "check-attr", "merge", "diff", "--", ".memory/intake/alice/2026-01-01.jsonl").stdout
    assert "merge: memstack" in attrs and "diff: memstack" in attrs  # the store's own .gitattributes applies
    assert "MEMSTACK_STORE: .memory" in (repo / ".github/workflows/memstack.yml").read_text()
    again = memstack("init", ".memory", cwd=repo)
    assert again.returncode == 0 and "nothing changed" in again.stdout


def test_a_tampered_handoff_is_refused_by_a_commit_without_the_venv_on_path(code: Path) -> None:
    handoff = _sealed(code)
    with handoff.open("a") as out:
        out.write("edited after sealing\n")
    proc = _commit(code, "tamper")
    output = proc.stdout + proc.stderr
    assert proc.returncode == 1, output
    assert ".memory/handoffs/alice/" in output and "I3 sealed handoff edited" in output
    assert "git checkout HEAD -- .memory/handoffs/alice/" in output  # a fix the user can paste at the top
    assert "memstack check (staged memory against HEAD)" in output and "Failed" in output


def test_a_code_only_commit_passes_and_every_command_finds_the_store_from_anywhere(code: Path) -> None:
    (code / "src").mkdir()
    (code / "src" / "app.py").write_text("print(1)\n")
    proc = _commit(code, "code only")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    wrote = memstack("intake", "write", "--agent", "alice", "--content", "the build uses make", cwd=code / "src")
    assert wrote.returncode == 0, wrote.stderr
    assert list((code / ".memory" / "intake" / "alice").iterdir())
    listed = memstack("intake", "list", "--json", cwd=code / "src")
    assert listed.returncode == 0 and "the build uses make" in listed.stdout
    assert memstack("check", cwd=code / "src").returncode == 0


def test_range_pre_receive_and_review_see_store_relative_paths(code: Path, tmp_path: Path) -> None:
    handoff = _sealed(code)
    base = git(code, "rev-parse", "HEAD").stdout.strip()
    with handoff.open("a") as out:
        out.write("edited\n")
    assert _commit(code, "skipped the hook", BARE_PATH, "--no-verify").returncode == 0
    proc = memstack("check", "--range", f"{base}..HEAD", cwd=code)
    assert proc.returncode == 1 and "I3 sealed handoff edited" in proc.stdout
    review = memstack("review", f"{base}..HEAD", cwd=code)
    assert review.returncode == 0 and ".memory/handoffs/alice/" in review.stdout
    bare = tmp_path / "remote.git"
    git(tmp_path, "init", "-q", "--bare", str(bare))
    hook = bare / "hooks" / "pre-receive"
    shutil.copy(ROOT / "hooks" / "pre-receive", hook)
    hook.chmod(0o755)
    git(code, "remote", "add", "origin", str(bare))
    hooked = subprocess.run(["git", "push", "-q", "origin", "HEAD:refs/heads/main"], cwd=code,
                            capture_output=True, text=True, env={**os.environ, "PATH": BARE_PATH})
    assert hooked.returncode != 0, hooked.stdout + hooked.stderr  # the pre-push hook, no venv on PATH
    assert "memstack check (the commits being pushed)" in hooked.stdout + hooked.stderr
    assert "I3 sealed handoff edited" in hooked.stdout + hooked.stderr
    push = subprocess.run(["git", "push", "-q", "--no-verify", "origin", "HEAD:refs/heads/main"], cwd=code,
                          capture_output=True, text=True, env={**os.environ, "MEMSTACK": MEMSTACK})
    assert push.returncode != 0 and "I3 sealed handoff edited" in push.stderr  # the server's pre-receive
    assert git(bare, "branch", "--list").stdout == ""


def test_the_merge_driver_merges_logs_of_a_store_in_a_folder(code: Path) -> None:
    log = code / ".memory" / "intake" / "alice" / "2026-01-01.jsonl"

    def write(rid: str) -> None:
        assert memstack("intake", "write", "--agent", "alice", "--content", rid, "--created-at",
                        "2026-01-01T10:00:00Z", cwd=code).returncode == 0

    write("first")
    assert _commit(code, "first").returncode == 0
    git(code, "checkout", "-q", "-b", "other")
    write("theirs")
    assert _commit(code, "theirs").returncode == 0
    git(code, "checkout", "-q", "main")
    write("ours")
    assert _commit(code, "ours").returncode == 0
    merged = subprocess.run(["git", "merge", "-q", "--no-edit", "other"], cwd=code, capture_output=True, text=True,
                            env={**os.environ, "PATH": BARE_PATH})
    assert merged.returncode == 0, merged.stdout + merged.stderr
    contents = [json.loads(line)["content"] for line in log.read_text().splitlines()]
    assert contents == ["first", "ours", "theirs"]


def test_memory_files_staged_without_a_store_fail_the_check(tmp_path: Path) -> None:
    repo = _code_repo(tmp_path)
    (repo / "notes" / "intake" / "alice").mkdir(parents=True)
    (repo / "notes" / "intake" / "alice" / "2026-01-01.jsonl").write_text("{}\n")
    git(repo, "add", "-A")
    proc = memstack("check", "--staged", cwd=repo)
    assert proc.returncode == 2 and "no memstack store" in proc.stderr
    assert "notes/intake/alice/2026-01-01.jsonl" in proc.stderr
    git(repo, "rm", "-q", "-r", "--cached", "notes")
    proc = memstack("check", "--staged", cwd=repo)
    assert proc.returncode == 0 and "nothing to check" in proc.stdout


def test_several_stores_in_one_repository_ask_for_store_and_are_all_checked(code: Path) -> None:
    made = memstack("init", "more-memory", cwd=code)  # its first commit ran the hook over both stores
    assert made.returncode == 0, made.stderr
    assert "the repository holds another store too (.memory): outside more-memory, pass --store more-memory" \
        in made.stdout, made.stdout
    assert ".github/workflows/memstack.yml was there already and checks the store it names (MEMSTACK_STORE), not" \
        " more-memory: add a job for it" in made.stdout, made.stdout
    proc = memstack("intake", "list", cwd=code)
    assert proc.returncode == 2 and "2 memstack stores" in proc.stderr and "--store" in proc.stderr
    assert memstack("intake", "list", "--store", ".memory", cwd=code).returncode == 0
    handoff = _sealed(code)
    with handoff.open("a") as out:
        out.write("edited\n")
    (code / "more-memory" / "kb" / "notes.txt").write_text("stray\n")
    proc = _commit(code, "two stores, two problems")
    assert proc.returncode == 1
    assert "I3 sealed handoff edited" in proc.stderr and "more-memory/kb/notes.txt: I5 stray file" in proc.stderr
    summary = proc.stderr.strip().splitlines()[-1]  # one summary for the two stores, no commits in it
    assert summary.startswith("memstack check: 2 violations (I3, I5) — the staged changes (against HEAD), in 2"
                              " stores (.memory, more-memory)"), summary


@pytest.mark.slow
@pytest.mark.network
def test_the_published_hooks_check_a_store_in_a_folder(code: Path) -> None:
    """The real pre-commit framework installs this repository's `.pre-commit-hooks.yaml`
    (as a user's `repo:` entry would) and runs `memstack-check` on the staged change. pre-commit
    pip-installs the repository into its own environment, from the package index: `network`."""
    handoff = _sealed(code)
    with handoff.open("a") as out:
        out.write("edited after sealing\n")
    git(code, "add", "-A")
    proc = subprocess.run([sys.executable, "-m", "pre_commit", "try-repo", str(ROOT), "memstack-check"],
                          cwd=code, capture_output=True, text=True)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "I3 sealed handoff edited" in proc.stdout and "Failed" in proc.stdout


# ---- init: by full path, all-or-nothing, resumable, refuses a busy folder ------------------------------

def test_init_by_full_path_without_the_venv_on_path(tmp_path: Path) -> None:
    proc = subprocess.run([MEMSTACK, "init", str(tmp_path / "mem"), "--agent", "alice"], capture_output=True,
                          text=True, env={**os.environ, "PATH": BARE_PATH})
    assert proc.returncode == 0, proc.stderr
    assert git(tmp_path / "mem", "log", "--format=%s").stdout == "memstack init\n"


def test_a_failed_init_leaves_nothing_behind(tmp_path: Path) -> None:
    repo = _code_repo(tmp_path)
    refusing = CONFIG.replace('entry: "true"', 'entry: "false"').replace("language: system",
                                                                        "language: system\n        always_run: true")
    (repo / ".pre-commit-config.yaml").write_text(refusing)
    git(repo, "commit", "-q", "-am", "a hook that refuses every commit", "--no-verify")
    head = git(repo, "rev-parse", "HEAD").stdout
    result = memstack("init", ".memory", cwd=repo)
    assert result.returncode == 2 and "refused" in result.stderr and "Traceback" not in result.stderr
    assert not (repo / ".memory").exists() and not (repo / ".github").exists()
    assert (repo / ".pre-commit-config.yaml").read_text() == refusing
    assert git(repo, "rev-parse", "HEAD").stdout == head and git(repo, "status", "--porcelain").stdout == ""


def test_a_rerun_finishes_a_half_made_store(tmp_path: Path) -> None:
    """What an older memstack left when its first commit failed: files there, git initialised, no commit."""
    from memstack.base.resources import data_dir

    root = tmp_path / "mem"
    shutil.copytree(data_dir("store-template"), root)
    git(root, "init", "-q", "-b", "main")
    git(root, "add", "-A")
    result = memstack("init", str(root))
    assert result.returncode == 0, result.stderr
    assert "finished" in result.stdout and "nothing changed" not in result.stdout
    assert git(root, "log", "--format=%s").stdout == "memstack init\n"
    assert git(root, "status", "--porcelain").stdout == ""


def test_init_refuses_a_busy_folder_unless_forced(tmp_path: Path) -> None:
    root = tmp_path / "papers"
    root.mkdir()
    (root / "draft.txt").write_text("mine\n")
    refused = memstack("init", str(root))
    assert refused.returncode == 2 and "not empty" in refused.stderr and "--force" in refused.stderr
    assert sorted(p.name for p in root.iterdir()) == ["draft.txt"]
    forced = memstack("init", str(root), "--force")
    assert forced.returncode == 0, forced.stderr
    assert "draft.txt" in git(root, "ls-files").stdout


def test_init_refuses_a_busy_folder_of_a_work_tree(tmp_path: Path) -> None:
    repo = _code_repo(tmp_path)
    (repo / "docs").mkdir()
    (repo / "docs" / "guide.md").write_text("# guide\n")
    refused = memstack("init", "docs", cwd=repo)
    assert refused.returncode == 2 and "not empty" in refused.stderr
    assert not (repo / "docs" / "memstack.yaml").exists()


def test_deleting_the_store_is_refused_by_the_hook_and_by_pre_receive(code: Path, tmp_path: Path) -> None:
    bare = tmp_path / "remote.git"
    git(tmp_path, "init", "-q", "--bare", str(bare))
    _sealed(code)
    assert git(code, "push", "-q", "--no-verify", str(bare), "HEAD:refs/heads/main").returncode == 0
    hook = bare / "hooks" / "pre-receive"
    shutil.copy(ROOT / "hooks" / "pre-receive", hook)
    hook.chmod(0o755)
    git(code, "rm", "-q", "-r", ".memory")
    refused = _commit(code, "drop the memory")  # the pre-commit hook finds the deleted store in HEAD
    assert refused.returncode == 1 and "I3 sealed handoff deleted" in refused.stderr
    assert _commit(code, "drop the memory", BARE_PATH, "--no-verify").returncode == 0
    push = subprocess.run(["git", "push", "-q", "--no-verify", str(bare), "HEAD:refs/heads/main"], cwd=code,
                          capture_output=True, text=True, env={**os.environ, "MEMSTACK": MEMSTACK})
    assert push.returncode != 0 and "I3" in push.stderr and ".memory/handoffs/alice/" in push.stderr


def test_promote_in_a_folder_store_commits_only_the_folders_memory(code: Path) -> None:
    """promote's own commit, run from anywhere in the repository, holds the store's memory and
    nothing of the code (a code change in progress stays uncommitted)."""
    (code / "src").mkdir()
    (code / "src" / "app.py").write_text("print('work in progress')\n")
    (code / "README.md").write_text("# a project, edited\n")
    wrote = memstack("intake", "write", "--agent", "alice", "--content", "the build uses make", "--tier", "verified",
                     "--confidence", "0.9", cwd=code / "src")
    assert wrote.returncode == 0, wrote.stderr
    result = memstack("promote", cwd=code / "src")
    assert result.returncode == 0, result.stderr
    committed = git(code, "show", "--name-only", "--format=", "HEAD").stdout.split()
    assert committed and all(path.startswith(".memory/") for path in committed), committed
    assert any(p.startswith(".memory/kb/promotions/alice/") for p in committed)
    assert any(p.startswith(".memory/kb/knowledge/") for p in committed)
    status = git(code, "status", "--porcelain").stdout
    assert " M README.md" in status and "?? src/" in status and ".memory" not in status
    assert memstack("check", "--range", "HEAD~1..HEAD", cwd=code).returncode == 0
