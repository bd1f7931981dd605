"""Shared set-up for the check tests: one store made by `memstack init` per session, copied per test.

`memstack init` (git init, pre-commit install, a first commit through the hook)
is the slow part of a store; copying its folder keeps the real hooks installed.
Facts are written as JSON lines directly (schemas/fact.schema.json), not through
the fact store module.
"""

import hashlib
import os
import shutil
import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import orjson
import pytest

from helpers import git
from memstack.base.ids import agent_tag
from memstack.base.times import parse_ts

JAN = 1767225600000  # 2026-01-01T00:00:00Z in ms
DAY = 86_400_000
HANDOFF = """---
agent: {agent}
date: {date}
session: {agent}-{date}
---

# Session

## Open threads

- {thread}

## Capability table

| capability | status |
|---|---|
| recall | ok |
"""


@pytest.fixture(scope="session")
def store_template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A store made once by `memstack init` with agents alice (default) and bob, hooks installed."""
    from memstack.workflows import install

    root = tmp_path_factory.mktemp("template") / "store"
    home = root.parent / "home"
    home.mkdir()
    env = {"HOME": str(home), "GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": str(home / ".gitconfig"),
           "GIT_AUTHOR_NAME": "Test Agent", "GIT_AUTHOR_EMAIL": "agent@example.com",
           "GIT_COMMITTER_NAME": "Test Agent", "GIT_COMMITTER_EMAIL": "agent@example.com"}
    with pytest.MonkeyPatch.context() as mp:
        for name, value in env.items():
            mp.setenv(name, value)
        install.init(root, ["alice", "bob"])
    return root


@pytest.fixture
def repo(store_template: Path, tmp_path: Path) -> Path:
    """A fresh copy of the template store for one test (hooks included)."""
    return copy_store(store_template, tmp_path)


def copy_store(template: Path, tmp_path: Path) -> Path:
    root = tmp_path / "store"
    shutil.copytree(template, root, symlinks=True)
    return root


@pytest.fixture(scope="session")
def states(store_template: Path,
           tmp_path_factory: pytest.TempPathFactory) -> Callable[[str, Callable[[Path], Any]], Path]:
    """`states(name, setup)`: the template store after `setup(root)` (committing through the hook), made once
    per test process (one fixture for every module: conftest.py), by name and setup."""
    made: dict[tuple[str, Callable[[Path], Any]], Path] = {}

    def state(name: str, setup: Callable[[Path], Any]) -> Path:
        if (name, setup) not in made:
            made[name, setup] = copy_store(store_template, tmp_path_factory.mktemp(name))
            setup(made[name, setup])
        return made[name, setup]

    return state


def dumps(record: dict[str, Any]) -> bytes:
    return orjson.dumps(record, option=orjson.OPT_SORT_KEYS | orjson.OPT_APPEND_NEWLINE)


def jsonl(*records: dict[str, Any]) -> bytes:
    return b"".join(dumps(r) for r in records)


def fid(name: str, recorded_at: int = JAN + 1000, agent: str = "alice") -> str:
    """The id of the fact `fact(name, ...)` makes: bound to its recorded_at and agent (memstack/base/ids.py),
    its random part taken from `name`, so a test can name a successor before writing it."""
    return f"{recorded_at:012x}{hashlib.sha256(name.encode()).hexdigest()[:12]}{agent_tag(agent)}"


def fact(name: str, *, agent: str = "alice", subject: str = "project", predicate: str = "decided",
         obj: str = "use git", valid_from: int = JAN, recorded_at: int = JAN + 1000, **more: Any) -> dict[str, Any]:
    record = {"id": fid(name, recorded_at, agent), "subject": subject, "predicate": predicate, "object": obj,
              "valid_from": valid_from, "valid_to": None, "confidence": 0.9, "recorded_at": recorded_at,
              "table": "knowledge", "expired_at": None, "superseded_by": None, "source": "test", "agent": agent,
              "intake_id": None}
    record.update(more)
    return record


def closed(record: dict[str, Any], *, valid_to: int, expired_at: int, superseded_by: str | None) -> dict[str, Any]:
    return {**record, "valid_to": valid_to, "expired_at": expired_at, "superseded_by": superseded_by}


def intake(n: int, *, agent: str = "alice", day: str = "2026-01-01", **more: Any) -> dict[str, Any]:
    """Intake record `n`, its id bound to its created_at and agent (memstack/base/ids.py) unless `id` is given."""
    record = {"content": f"observation {n}", "title": "", "source": "test",
              "agent": agent, "tier": "observed", "confidence": 0.5, "keywords": [], "tags": [],
              "created_at": f"{day}T10:{n // 60 % 60:02d}:{n % 60:02d}.000Z"}
    record.update(more)
    created = parse_ts(record["created_at"], "created_at") if isinstance(record["created_at"], str) else 0
    return {"id": f"{created:012x}{n:012x}{agent_tag(agent)}", **record}


def write(root: Path, relpath: str, data: bytes | str) -> Path:
    path = root / relpath
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data.encode() if isinstance(data, str) else data)
    return path


def append(root: Path, relpath: str, data: bytes) -> None:
    path = root / relpath
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("ab") as handle:
        handle.write(data)


def head(root: Path) -> str:
    return git(root, "rev-parse", "HEAD").stdout.strip()


def commit(root: Path, message: str = "change", *, verify: bool = True,
           add: bool = True) -> subprocess.CompletedProcess[str]:
    """`git add -A` (unless add is False) then a real `git commit`, through the installed hook unless verify
    is False."""
    if add:
        git(root, "add", "-A")
    args = ["commit", "-q", "-m", message] + ([] if verify else ["--no-verify"])
    return git(root, *args, check=False)


def sneak(root: Path, message: str = "sneaked past the hook") -> str:
    """`git commit --no-verify`: what a clone without hooks (or a hurried human) does."""
    proc = commit(root, message, verify=False)
    assert proc.returncode == 0, proc.stderr
    return head(root)


def committed(root: Path, message: str = "change", *, add: bool = True) -> str:
    """Commit through the hook and insist it was accepted; returns the new HEAD."""
    before = head(root)
    proc = commit(root, message, add=add)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    after = head(root)
    assert after != before
    return after


def refused(root: Path, *expected: str, add: bool = True) -> str:
    """Commit through the hook and insist it was refused, naming each expected text; returns the output."""
    before = head(root)
    proc = commit(root, "should be refused", add=add)
    output = proc.stdout + proc.stderr
    assert proc.returncode != 0, output
    assert head(root) == before
    for text in expected:
        assert text in output, f"{text!r} not in:\n{output}"
    return output


def flagged(root: Path, *expected: str) -> str:
    """`git add -A`, then `memstack check --staged` in this process (what the hook runs, without
    pre-commit's start-up): insist it exits 1 naming each expected text; returns the output."""
    import contextlib
    import io

    from memstack.cli.main import main

    git(root, "add", "-A")
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        code = main(["check", "--staged", "--store", str(root)])
    output = out.getvalue()
    assert code == 1, output
    for text in expected:
        assert text in output, f"{text!r} not in:\n{output}"
    return output


def handoff_text(agent: str = "alice", date: str = "2026-01-02", thread: str = "finish the check") -> str:
    return HANDOFF.format(agent=agent, date=date, thread=thread)


def run_check(root: Path, *args: str, stdin: str | None = None,
              env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    from helpers import memstack

    return memstack("check", *args, cwd=root, input=stdin, env=env)


@pytest.fixture
def bare(tmp_path: Path) -> Iterator[Path]:
    """A bare repository with memstack's pre-receive hook installed."""
    yield guarded_bare(tmp_path / "remote.git")


def guarded_bare(path: Path) -> Path:
    """A new bare repository at `path` with memstack's pre-receive hook installed."""
    from memstack.base.resources import data_dir

    subprocess.run(["git", "init", "-q", "--bare", "-b", "main", str(path)], check=True)
    hook = path / "hooks" / "pre-receive"
    shutil.copyfile(data_dir("hooks") / "pre-receive", hook)
    os.chmod(hook, 0o755)
    return path


# ---- a store with two remotes, and an attack every gate must refuse --------------------------------

def push(root: Path, remote: str, *refspecs: str, verify: bool = False) -> tuple[int, str]:
    """`git push REMOTE REFSPECS`, the clone's pre-push hook skipped unless `verify`."""
    proc = git(root, "push", *([] if verify else ["--no-verify"]), remote, *refspecs, check=False)
    return proc.returncode, proc.stdout + proc.stderr


def with_remotes(repo: Path, bare: Path, tmp_path: Path) -> Path:
    """The store `repo` with two remotes: `guarded` (`bare`, hooks/pre-receive) and `plain` (no hook: only
    the clone's pre-push hook guards it), both at `tmp_path`."""
    plain = tmp_path / "plain.git"
    git(tmp_path, "init", "-q", "--bare", "-b", "main", str(plain))
    git(repo, "remote", "add", "guarded", str(bare))
    git(repo, "remote", "add", "plain", str(plain))
    return repo


def publish(root: Path) -> None:
    """Push main, as it is, to both remotes (the guarded one checks it)."""
    for remote in ("guarded", "plain"):
        code, out = push(root, remote, "main")
        assert code == 0, out


def refused_everywhere(root: Path, *expected: str) -> None:
    """The work tree's change is refused at commit; sneaked in, by --range, pre-push and pre-receive."""
    refused(root, *expected)
    base = head(root)
    bad = sneak(root)
    proc = run_check(root, "--range", f"{base}..{bad}")
    assert proc.returncode == 1, proc.stdout + proc.stderr
    for text in expected:
        assert text in proc.stdout, f"--range: {text!r} not in:\n{proc.stdout}"
    for remote, verify in (("plain", True), ("guarded", False)):
        where = root.parent / f"{'plain' if remote == 'plain' else 'remote'}.git"
        before = git(where, "rev-parse", "main").stdout.strip()
        code, out = push(root, remote, "main", verify=verify)
        assert code != 0, out
        for text in expected:
            assert text in out, f"push to {remote}: {text!r} not in:\n{out}"
        assert git(where, "rev-parse", "main").stdout.strip() == before
