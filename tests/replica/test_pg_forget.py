"""The PostgreSQL replica holds no forgotten content: after `memstack forget` is committed, `pg sync`
leaves every forgotten row as the read verbs show it, and `--pg` answers as the files do."""

import json
from pathlib import Path

import psycopg

from helpers import git, memstack
from memstack.replica.tables import SCHEMA, TABLES

DAY = "2026-03-02T10:00:00Z"
GONE = "[forgotten: a phone number]"


def ok(store: Path, *args: str) -> dict:
    result = memstack(*args, "--json", cwd=store)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


def commit(store: Path) -> None:
    git(store, "add", "-A")
    done = git(store, "commit", "-q", "-m", "memory", check=False)
    assert done.returncode == 0, done.stdout + done.stderr


def holding(dsn: str, text: str) -> list[str]:
    """The replica's rows (as text, every column) that hold `text`."""
    found = []
    with psycopg.connect(dsn) as conn:
        for table in TABLES:
            for (row,) in conn.execute(f"SELECT t::text FROM {SCHEMA}.{table.name} t"):
                if text in row:
                    found.append(f"{table.name}: {row}")
    return found


def test_the_replica_holds_no_forgotten_content_and_answers_as_the_files(store: Path, pg_dsn: str) -> None:
    record = ok(store, "intake", "write", "--content", "Ada's phone is 555-0199", "--subject", "ada",
                "--predicate", "prefers", "--object", "phone 555-0199", "--tier", "verified", "--confidence",
                "0.9", "--created-at", DAY)["record"]
    commit(store)
    assert memstack("promote", "--now-ts", DAY, cwd=store).returncode == 0
    assert ok(store, "pg", "sync", pg_dsn)["mode"] == "full"
    assert len(holding(pg_dsn, "555-0199")) == 2  # the intake row and the fact row
    ok(store, "forget", record["id"], "--reason", "a phone number")
    assert ok(store, "pg", "sync", pg_dsn)["mode"] == "unchanged"  # not committed: not replicated yet
    commit(store)
    ok(store, "pg", "sync", pg_dsn)
    assert holding(pg_dsn, "555-0199") == []
    assert len(holding(pg_dsn, GONE)) == 2
    from_files = ok(store, "fact", "get-valid-at", "--ts", DAY)
    assert from_files["items"][0]["object"] == GONE
    assert ok(store, "fact", "get-valid-at", "--ts", DAY, "--pg", pg_dsn) == from_files
    for args in (["recall", "--subject", "ada", "--now-ts", DAY], ["fact", "history", "--subject", "ada"]):
        assert ok(store, *args)["items"] == [] and ok(store, *args, "--pg", pg_dsn) == ok(store, *args), args
    git(store, "commit", "-q", "--allow-empty", "-m", "later")
    ok(store, "pg", "sync", pg_dsn)  # an incremental sync keeps them forgotten
    assert holding(pg_dsn, "555-0199") == []
