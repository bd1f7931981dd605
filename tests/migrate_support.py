"""A store of format 1 made by the last release of that format (tag v0.1.0 of this repository, its code
run from `git archive`), for the tests of `memstack migrate`."""

import io
import json
import os
import shutil
import subprocess
import sys
import tarfile
from pathlib import Path
from typing import Any

import pytest

from helpers import HANDOFF, git

REPOSITORY = Path(__file__).resolve().parents[1]
TAG = "v0.1.0"  # the last release of store format 1
# its commit, for a clone made without tags (a CI checkout of one branch): the tests build the same code from it
TAG_COMMIT = "dc5c1a25a784175e40065c8d5d18de68decabf95"

# (agent, created_at, options): two agents, three intake days, every sub-tier
RECORDS = (
    ("alice", "2026-11-02T09:00:00Z", ("--content", "we deploy on Mondays", "--subject", "deploys", "--predicate",
                                       "decided", "--object", "monday", "--tier", "verified", "--confidence", "0.9")),
    ("alice", "2026-11-02T10:00:00Z", ("--content", "the parser is hand-written", "--tier", "observed")),
    ("bob", "2026-11-03T08:00:00Z", ("--content", "RFC 9110 defines HTTP semantics", "--source",
                                     "https://www.rfc-editor.org/rfc/rfc9110", "--tier", "fetched",
                                     "--relevance-score", "0.8")),
    ("alice", "2026-11-04T12:00:00Z", ("--content", "we deploy on Tuesdays now", "--subject", "deploys",
                                       "--predicate", "decided", "--object", "tuesday", "--tier", "verified",
                                       "--confidence", "0.95")),
)
LATE = ("alice", "2026-11-02T11:00:00Z", ("--content", "the lexer is generated", "--tier", "observed"))


def old_code(into: Path) -> Path:
    """The code of TAG (or of its commit where the clone has no tags), archived into `into` (skips the test when
    this is not a checkout holding either)."""
    held = [ref for ref in (TAG, TAG_COMMIT) if (REPOSITORY / ".git").exists() and git(
        REPOSITORY, "rev-parse", "--verify", "-q", f"{ref}^{{commit}}", check=False).returncode == 0]
    if not held:
        pytest.skip(f"the tests do not run from a git checkout holding tag {TAG}, the last release of format 1")
    archive = subprocess.run(["git", "-C", str(REPOSITORY), "archive", held[0]], capture_output=True, check=True)
    with tarfile.open(fileobj=io.BytesIO(archive.stdout)) as tar:
        tar.extractall(into, filter="data")
    return into


def old(code: Path, *args: str, cwd: Path, input: str | None = None) -> subprocess.CompletedProcess[str]:
    """`memstack ARGS` as the code of TAG runs it (its hooks too: they run `python -m memstack` with this
    PYTHONPATH)."""
    return subprocess.run([sys.executable, "-m", "memstack", *args], cwd=cwd, capture_output=True, text=True,
                          env={**os.environ, "PYTHONPATH": str(code)}, input=input)


def old_ok(code: Path, *args: str, cwd: Path, input: str | None = None) -> str:
    done = old(code, *args, cwd=cwd, input=input)
    assert done.returncode == 0, (args, done.stdout, done.stderr)
    return done.stdout


def make_store(code: Path, root: Path) -> Path:
    """A promoted store of format 1: two promotions, so one intake file's ledger lines are not together."""
    assert old(code, "--version", cwd=root.parent).stdout.strip() == f"memstack {TAG.lstrip('v')}"
    old_ok(code, "init", str(root), "--agent", "alice", "--agent", "bob", cwd=root.parent)
    for agent, at, options in RECORDS:
        old_ok(code, "intake", "write", "--agent", agent, "--created-at", at, *options, cwd=root)
    old_ok(code, "promote", cwd=root)
    old_ok(code, "handoff", "write", "--agent", "alice", cwd=root, input=HANDOFF)  # boot files that read the views
    agent, at, options = LATE
    old_ok(code, "intake", "write", "--agent", agent, "--created-at", at, *options, cwd=root)
    old_ok(code, "promote", cwd=root)
    assert "format" not in (root / "memstack.yaml").read_text()
    assert not git(root, "status", "--porcelain").stdout
    return root


def copy(store: Path, to: Path) -> Path:
    shutil.copytree(store, to, symlinks=True)
    return to


def ledger_lines(store: Path, rev: str) -> list[bytes]:
    return git_bytes(store, "show", f"{rev}:kb/promotions.jsonl").splitlines(keepends=True)


def git_bytes(cwd: Path, *args: str) -> bytes:
    return subprocess.run(["git", *args], cwd=cwd, capture_output=True, check=True).stdout


def shard_of(line: bytes) -> str:
    return "kb/promotions" + json.loads(line)["file"].removeprefix("intake")


# Fixtures for every test module (conftest.py registers this module as a plugin): the code of TAG, archived once
# per worker; a promoted store of format 1 made with it, once per module (a module may make its own `made`); a
# copy of that store for each test.
@pytest.fixture(scope="session")
def code(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return old_code(tmp_path_factory.mktemp("v0.1.0"))


@pytest.fixture(scope="module")
def made(code: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_store(code, tmp_path_factory.mktemp("format1") / "store")


@pytest.fixture
def old_store(made: Path, tmp_path: Path) -> Path:
    return copy(made, tmp_path / "store")


def migrated_ok(store: Path) -> dict[str, Any]:
    """`memstack migrate --json` in `store`, which must succeed: its document."""
    from helpers import memstack

    done = memstack("migrate", "--json", cwd=store)
    assert done.returncode == 0, done.stdout + done.stderr
    result: dict[str, Any] = json.loads(done.stdout)
    return result
