"""A write while the fact index is busy (another process holds its write lock: a fresh clone's background
build, another writer): the write is made whole, exit 0, and the index catches up with it on the next query."""

import json
import sqlite3
import subprocess
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from helpers import MEMSTACK, git, ok

T0, T1 = "2026-03-01T10:00:00Z", "2026-03-02T10:00:00Z"
HOLD_AFTER_WRITE = 3.0  # seconds the lock stays held once the fact file changed: far beyond the note's 500 ms wait


def fact_lines(store: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for path in sorted((store / "kb/facts").glob("*/*.jsonl"))
            for line in path.read_text().splitlines()]


def run_while_index_locked(store: Path, args: Sequence[str]) -> subprocess.CompletedProcess[str]:
    """`memstack ARGS` run while another connection holds the fact index's write lock: held from before the
    command starts until it has exited, or until HOLD_AFTER_WRITE seconds after a fact file changed (a
    command that waits for the lock to read the index again then finishes)."""
    before = {p: p.read_bytes() for p in (store / "kb/facts").glob("*/*.jsonl")}
    holder = sqlite3.connect(store / ".memstack/facts.sqlite3", isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")
    command = subprocess.Popen([MEMSTACK, *args], cwd=store, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               text=True)
    try:
        changed_at = None
        while command.poll() is None:
            if changed_at is None and {p: p.read_bytes() for p in (store / "kb/facts").glob("*/*.jsonl")} != before:
                changed_at = time.monotonic()
            if changed_at is not None and time.monotonic() - changed_at > HOLD_AFTER_WRITE:
                break
            time.sleep(0.01)
        assert changed_at is not None or command.poll() is not None, "the command wrote no fact"
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    out, err = command.communicate(timeout=120)
    return subprocess.CompletedProcess(command.args, command.returncode, out, err)


def decided(store: Path) -> None:
    ok(store, "capture", "--subject", "db", "--predicate", "decided", "--object", "postgres at 10.1.2.3",
       "--valid-from", T0, "--recorded-at", T0)
    git(store, "add", "-A")
    git(store, "commit", "-q", "-m", "first")
    assert len(ok(store, "recall", "--subject", "db", "--now-ts", T1)["items"]) == 1  # the index exists, in step


def test_capture_contradicts_while_the_index_is_locked_closes_the_old_decision(store: Path) -> None:
    decided(store)
    done = run_while_index_locked(store, ["capture", "--subject", "db", "--predicate", "decided", "--object",
                                          "mysql", "--valid-from", T1, "--recorded-at", T1, "--contradicts"])
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr and done.stderr == ""
    open_decisions = [f["object"] for f in fact_lines(store) if f["valid_to"] is None]
    assert open_decisions == ["mysql"]  # the old decision closed in the file itself
    assert not list((store / ".memstack/pending").glob("*.json"))  # nothing left for a later write to finish
    assert [f["object"] for f in ok(store, "recall", "--subject", "db", "--now-ts", T1)["items"]] == ["mysql"]
    history = ok(store, "fact", "history", "--subject", "db")["items"]  # the index caught up with both writes
    assert [(f["object"], f["valid_to"] is None) for f in history] == [("postgres at 10.1.2.3", False),
                                                                       ("mysql", True)]
    git(store, "add", "-A")
    assert git(store, "commit", "-q", "-m", "second", check=False).returncode == 0


def test_forget_while_the_index_is_locked_writes_the_tombstone_and_the_closing(store: Path) -> None:
    decided(store)
    [fact] = ok(store, "fact", "history", "--subject", "db")["items"]
    done = run_while_index_locked(store, ["forget", fact["id"], "--reason", "erasure request"])
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr and done.stderr == ""
    assert [f["valid_to"] is None for f in fact_lines(store)] == [False]
    [shown] = ok(store, "fact", "get-valid-at", "--ts", T0)["items"]  # the index caught up: closed, hidden
    assert shown["id"] == fact["id"] and shown["valid_to"] is not None and "10.1.2.3" not in json.dumps(shown)
    assert ok(store, "recall", "--subject", "db", "--now-ts", T1)["items"] == []
    git(store, "add", "-A")
    assert git(store, "commit", "-q", "-m", "forget", check=False).returncode == 0
