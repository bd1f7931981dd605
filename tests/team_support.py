"""A team: one store pushed to a real bare remote guarded by hooks/pre-receive, and clones of it."""

import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

from helpers import git, memstack


def ok(repo: Path, *args: str) -> Any:
    """`memstack ARGS --json` in `repo`, which must succeed: its document ({} for no output)."""
    result = memstack(*args, "--json", cwd=repo)
    assert result.returncode == 0, result.stdout + result.stderr
    return json.loads(result.stdout) if result.stdout.strip() else {}


def guarded_remote(store: Path, tmp_path: Path) -> Path:
    """A bare repository with memstack's pre-receive hook, holding the store's main branch."""
    from memstack.base.resources import data_dir

    remote = tmp_path / "remote.git"
    subprocess.run(["git", "init", "-q", "--bare", "-b", "main", str(remote)], check=True)
    hook = remote / "hooks" / "pre-receive"
    shutil.copyfile(data_dir("hooks") / "pre-receive", hook)
    os.chmod(hook, 0o755)
    git(store, "remote", "add", "origin", str(remote))
    pushed = git(store, "push", "-q", "origin", "main", check=False)
    assert pushed.returncode == 0, pushed.stdout + pushed.stderr
    return remote


def clone(remote: Path, path: Path) -> Path:
    """A clone with the hooks and drivers installed (`memstack install`), as a new teammate makes one."""
    git(path.parent, "clone", "-q", str(remote), str(path))
    installed = memstack("install", cwd=path)
    assert installed.returncode == 0, installed.stderr
    return path


def pushed(repo: Path) -> None:
    """`git push origin HEAD` through the clone's pre-push hook and the remote's pre-receive; insist it was accepted."""
    done = git(repo, "push", "-q", "origin", "HEAD", check=False)
    assert done.returncode == 0, done.stdout + done.stderr


def check_history(repo: Path) -> None:
    """`memstack check --range` over the whole history passes (every commit, merges included)."""
    root = git(repo, "rev-list", "--max-parents=0", "HEAD").stdout.split()[0]
    audit = memstack("check", "--range", f"{root}..HEAD", cwd=repo)
    assert audit.returncode == 0, audit.stdout + audit.stderr


def fact_files(repo: Path) -> dict[str, bytes]:
    return {str(p.relative_to(repo)): p.read_bytes() for p in sorted((repo / "kb/facts").rglob("*.jsonl"))}
