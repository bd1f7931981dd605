"""Shared set-up of the excise tests: a store holding an intake record promoted to a fact, a SOIL record and a
sealed handoff, all forgotten; the bytes of every object of a repository."""

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from helpers import copied_to, git, made_from, memstack

DAY = "2026-03-02T10:00:00Z"
# Distinctive texts: the byte-level proof looks for each of them in every object of the repository.
INTAKE_TEXT = "Quaxelbrand phone is 555-0199"
TITLE = "Quaxeltitle"
SOIL_TEXT = "Quaxelsoilvalue"
THREAD = "Quaxelthread to finish"
CELL = "Quaxelcell"
SOIL_NUMBER = 5550199  # a short value, not a string: its marker hashes its JSON text
SECRETS = (INTAKE_TEXT, TITLE, SOIL_TEXT, THREAD, CELL, "Quaxel", str(SOIL_NUMBER))
HANDOFF = f"""---
agent: alice
date: 2026-03-02
session: s1
---

# Session

Talked about Quaxel plans.

## Open threads

- {THREAD}

## Capability table

| capability | status |
|---|---|
| {CELL} | ok |
"""
HANDOFF_PATH = "handoffs/alice/session_handoff-2026-03-02_alice.md"
Forgotten = tuple[Path, dict[str, str]]  # a store after `forgotten_store`, and the names it returned


def ok(store: Path, *args: str, env: dict[str, str] | None = None) -> Any:
    result = memstack(*args, "--json", cwd=store, env=env)
    assert result.returncode == 0, result.stdout + result.stderr
    return json.loads(result.stdout) if result.stdout.strip() else {}


def commit(store: Path, message: str = "memory") -> str:
    git(store, "add", "-A")
    done = git(store, "commit", "-q", "-m", message, check=False)
    assert done.returncode == 0, done.stdout + done.stderr
    return git(store, "rev-parse", "HEAD").stdout.strip()


def every_object(repo: Path) -> bytes:
    """The bytes of every object reachable from any ref (`git rev-list --all --objects | git cat-file --batch`;
    `--batch='%(objectname) %(rest)'` reads the object name before the path rev-list gives with it)."""
    listed = subprocess.run(["git", "rev-list", "--all", "--objects"], cwd=repo, capture_output=True, check=True)
    found = subprocess.run(["git", "cat-file", "--batch=%(objectname) %(objecttype) %(rest)"], cwd=repo,
                           input=listed.stdout, capture_output=True, check=True).stdout
    assert b" missing\n" not in found
    return found


def every_object_any(repo: Path) -> bytes:
    """Also the unreachable objects still in the repository (loose or packed)."""
    listed = subprocess.run(["git", "cat-file", "--batch-all-objects", "--batch"], cwd=repo, capture_output=True,
                            check=True)
    return listed.stdout


def forgotten_store(store: Path) -> dict[str, str]:
    """A store holding an intake record promoted to a fact, a SOIL record and a sealed handoff, all forgotten
    (and committed): the names excise takes."""
    record = ok(store, "intake", "write", "--content", INTAKE_TEXT, "--title", TITLE, "--tier", "verified",
                "--confidence", "0.9", "--keyword", "quaxelkw", "--created-at", DAY)["record"]
    ok(store, "intake", "write", "--content", "an unrelated note that stays", "--tier", "verified",
       "--confidence", "0.9", "--created-at", DAY)
    ok(store, "soil", "put", "notes", "contact", "--value", json.dumps({"phone": SOIL_TEXT}))
    ok(store, "soil", "put", "notes", "kept", "--value", json.dumps({"stays": "visible"}))
    ok(store, "soil", "put", "notes", "phone", "--value", str(SOIL_NUMBER))
    handoff = memstack("handoff", "write", "--agent", "alice", "-", cwd=store, input=HANDOFF)
    assert handoff.returncode == 0, handoff.stderr
    commit(store, "memory")
    assert memstack("promote", "--now-ts", DAY, cwd=store).returncode == 0
    fact_id = f"{record['id']}-f"
    ok(store, "forget", record["id"], "notes/contact", "notes/phone", HANDOFF_PATH, "--reason", "erasure request")
    commit(store, "forget")
    return {"intake": record["id"], "fact": fact_id, "soil": "notes/contact", "number": "notes/phone",
            "handoff": HANDOFF_PATH}


@pytest.fixture(scope="session")
def _forgotten_template(_store_template: Path, tmp_path_factory: pytest.TempPathFactory) -> Forgotten:
    """`forgotten_store` of a new store, made once per test process; and the names it returned."""
    return made_from(_store_template, tmp_path_factory, "forgotten", forgotten_store)


@pytest.fixture
def forgotten(_forgotten_template: Forgotten, tmp_path: Path) -> Forgotten:
    """A copy of a store after `forgotten_store` (tmp_path / "store"), and the names excise takes."""
    template, names = _forgotten_template
    return copied_to(template, tmp_path / "store"), dict(names)
