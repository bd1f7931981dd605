"""`memstack review` of a migration (`memstack migrate`, store format 1 -> 2) shows it as what it is: the format
converted and the old ledger's lines moved unchanged, no promotion and no record sent to the Binder; a range that
also promotes counts only what it promoted. What waits in the Binder is what `binder list` says waits at the range's
end: a record decided or forgotten there waits no more."""

import json
from pathlib import Path

import pytest
from migrate_support import copy, ledger_lines, old_ok

from helpers import git, memstack


@pytest.fixture(scope="module")
def made(code: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A store of format 1: three records sent to the Binder, one ratified (0.1.0's next promotion made it a fact),
    one rejected, one still waiting; and a record promoted to knowledge."""
    root = tmp_path_factory.mktemp("format1") / "store"
    old_ok(code, "init", str(root), "--agent", "alice", cwd=root.parent)
    for n, idea in enumerate("ABC"):
        old_ok(code, "intake", "write", "--created-at", f"2026-11-02T09:00:0{n}Z", "--content", f"maybe {idea}",
               cwd=root)
    old_ok(code, "intake", "write", "--created-at", "2026-11-02T10:00:00Z", "--content", "we deploy on Mondays",
           "--tier", "verified", "--confidence", "0.9", cwd=root)
    old_ok(code, "promote", cwd=root)
    waiting = [item["id"] for item in json.loads(old_ok(code, "binder", "list", "--json", cwd=root))["items"]]
    assert len(waiting) == 3
    old_ok(code, "binder", "ratify", waiting[0], "--by", "Ada", cwd=root)
    old_ok(code, "binder", "reject", waiting[1], "--by", "Ada", cwd=root)
    git(root, "add", "-A")
    git(root, "commit", "-qm", "Ada decides", "--no-verify")
    old_ok(code, "promote", cwd=root)
    assert not git(root, "status", "--porcelain").stdout
    return root


@pytest.fixture
def migrated(made: Path, tmp_path: Path) -> Path:
    store = copy(made, tmp_path / "store")
    done = memstack("migrate", cwd=store)
    assert done.returncode == 0, done.stdout + done.stderr
    return store


def ok(store: Path, *args: str) -> str:
    done = memstack(*args, cwd=store)
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout


def waits(store: Path) -> list[str]:
    return [item["id"] for item in json.loads(ok(store, "binder", "list", "--json"))["items"]]


def test_the_migration_commit_is_a_format_converted_and_ledger_lines_moved_not_promotions(migrated: Path) -> None:
    moved = len(ledger_lines(migrated, "HEAD~1"))
    assert moved == 5  # three to the Binder, one to knowledge, the ratified record's
    report = json.loads(ok(migrated, "review", "HEAD~1..HEAD", "--format", "json"))
    assert report["promotions"] == {} and report["ledger_shards"] == {}
    assert report["format_change"] == {"from": 1, "to": 2} and report["ledger_lines_moved"] == moved
    assert report["binder_waiting"] == [] and report["counts"]["binder_waiting"] == 0
    assert report["violations"] == [] and report["facts_added"] == [] and report["intake_records"] == []
    text = ok(migrated, "review", "HEAD~1..HEAD")
    assert ", 0 promotions," in text and "### Promotions" not in text and "Waiting in the Binder" not in text
    assert "The store's format converted from 1 to 2 (`memstack migrate`). 5 ledger lines of `kb/promotions.jsonl`" \
           " moved unchanged to the ledger shards of their intake files" in text, text
    assert len(waits(migrated)) == 1  # what still waits, as before the migration: not the review's to list


def test_a_range_over_the_migration_and_a_promotion_counts_only_what_it_promoted(migrated: Path) -> None:
    """A record of the old records' day promoted after the migration: its shard holds the moved lines and its own;
    only its own is a promotion, and only it waits (the record that waited before the range is not this range's)."""
    base = git(migrated, "rev-parse", "HEAD~1").stdout.strip()
    written = json.loads(ok(migrated, "intake", "write", "--created-at", "2026-11-02T11:00:00Z", "--content",
                            "maybe D", "--json"))
    git(migrated, "add", "-A")
    committed = git(migrated, "commit", "-qm", "maybe D", check=False)
    assert committed.returncode == 0, committed.stdout + committed.stderr
    ok(migrated, "promote")
    report = json.loads(ok(migrated, "review", f"{base}..HEAD", "--format", "json"))
    assert report["promotions"] == {"binder": 1} and report["ledger_lines_moved"] == 5
    assert report["ledger_shards"] == {"kb/promotions/alice/2026-11-02.jsonl": 1}
    assert [item["intake_id"] for item in report["binder_waiting"]] == [written["record"]["id"]]
    assert sorted(waits(migrated))[-1:] == [written["record"]["id"]] and len(waits(migrated)) == 2


def test_a_record_forgotten_at_the_range_end_waits_no_more(store: Path) -> None:
    """`binder list` leaves out a forgotten record; so does review's waiting section."""
    base = git(store, "rev-parse", "HEAD").stdout.strip()
    for idea in ("maybe E", "maybe F"):
        ok(store, "intake", "write", "--content", idea, "--created-at", "2026-01-01T10:00:00Z")
    git(store, "add", "-A")
    git(store, "commit", "-qm", "ideas")
    ok(store, "promote", "--now-ts", "2026-01-02T00:00:00Z")
    routed = waits(store)
    assert len(routed) == 2
    ok(store, "forget", routed[0], "--reason", "not ours to keep")
    git(store, "add", "-A")
    committed = git(store, "commit", "-qm", "forget one", check=False)
    assert committed.returncode == 0, committed.stdout + committed.stderr
    assert waits(store) == routed[1:]
    report = json.loads(ok(store, "review", f"{base}..HEAD", "--format", "json"))
    assert [item["intake_id"] for item in report["binder_waiting"]] == routed[1:]
    assert report["counts"]["binder_waiting"] == 1 and report["format_change"] is None
    assert report["ledger_lines_moved"] == 0 and report["promotions"] == {"binder": 2}
