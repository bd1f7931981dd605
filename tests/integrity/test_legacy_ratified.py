"""Tier "ratified" in the history memstack 0.1.0 wrote (store format 1): its `intake write --tier ratified` let a
writer claim that tier, and its promotion made a fact at tier ratified (id `<intake>-f`) from such a record. Every
check of that history accepts the fact where it accepts the record (a commit of format 1; `check --all` of a store
migrated from format 1), and nothing more: a fact at tier ratified that no Binder ratification made, and that 0.1.0
could not have made, is refused in a commit of format 1 and in one of format 2.
"""

import json
from pathlib import Path

import pytest
from migrate_support import copy, old_ok

from check_support import guarded_bare, push, refused
from helpers import git, memstack
from memstack.base import ids
from memstack.base.times import parse_ts

CLAIMED = ("--content", "the database is postgres 16", "--subject", "database", "--predicate", "decided",
           "--object", "postgres 16", "--tier", "ratified", "--confidence", "0.9")
SAID = "I5 fact at tier 'ratified' that no Binder ratification made"


@pytest.fixture(scope="module")
def made(code: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A store of format 1 where 0.1.0 promoted a record its writer put at tier ratified, and holds another such
    record (low confidence: the Binder's) that nothing made a fact of."""
    root = tmp_path_factory.mktemp("format1") / "store"
    old_ok(code, "init", str(root), "--agent", "alice", cwd=root.parent)
    old_ok(code, "intake", "write", "--agent", "alice", "--created-at", "2026-11-02T09:00:00Z", *CLAIMED, cwd=root)
    old_ok(code, "intake", "write", "--agent", "alice", "--created-at", "2026-11-02T10:00:00Z", "--content",
           "the cache is redis", "--tier", "ratified", "--confidence", "0.4", cwd=root)
    old_ok(code, "promote", cwd=root)
    assert not git(root, "status", "--porcelain").stdout
    return root


@pytest.fixture
def store(made: Path, tmp_path: Path) -> Path:
    return copy(made, tmp_path / "store")


def facts(store: Path) -> list[dict]:
    return [json.loads(line) for line in (store / "kb/facts/alice/2026-11.jsonl").read_text().splitlines()]


def records(store: Path) -> list[dict]:
    return [json.loads(line) for line in (store / "intake/alice/2026-11-02.jsonl").read_text().splitlines()]


def whole_history_passes(store: Path) -> None:
    root = git(store, "rev-list", "--max-parents=0", "HEAD").stdout.strip()
    for args in (("--range", f"{root}..HEAD"), ("--all",)):
        done = memstack("check", *args, cwd=store)
        assert done.returncode == 0, (args, done.stdout, done.stderr)


def forged(store: Path, record: dict, *, tier: str = "ratified") -> dict:
    """The fact 0.1.0's promotion made of `record` (its id, times and fields), at `tier`."""
    when = parse_ts(record["created_at"], "created_at")
    return {"agent": "alice", "confidence": record["confidence"], "expired_at": None,
            "id": ids.derived(record["id"], "f", when, "alice"), "intake_id": record["id"], "object": "redis",
            "predicate": "decided", "recorded_at": when, "source": None, "subject": "cache", "superseded_by": None,
            "table": "knowledge", "tier": tier, "valid_from": when, "valid_to": None}


def append_fact(store: Path, fact: dict) -> None:
    with (store / "kb/facts/alice/2026-11.jsonl").open("a") as handle:
        handle.write(json.dumps(fact, separators=(",", ":"), sort_keys=True) + "\n")


def test_the_fact_0_1_0_made_from_a_writers_ratified_record_passes_every_check_of_history(store: Path,
                                                                                            tmp_path: Path) -> None:
    made = facts(store)
    assert [(f["tier"], f["id"][-2:]) for f in made] == [("ratified", "-f")]  # what 0.1.0 made: no -r, no decision
    whole_history_passes(store)
    migrated = memstack("migrate", cwd=store)
    assert migrated.returncode == 0, migrated.stdout + migrated.stderr
    whole_history_passes(store)
    remote = guarded_bare(tmp_path / "new.git")
    code, said = push(store, str(remote), "HEAD:main", verify=True)  # the clone's pre-push, the remote's pre-receive
    assert code == 0, said


def test_a_ratified_fact_0_1_0_could_not_have_made_is_refused_in_a_commit_of_format_1(store: Path) -> None:
    """A fact at tier ratified recorded later than its ratified record (promotion records it at the record's
    time), and one from a record at tier verified: neither is 0.1.0's, each is refused alone."""
    pending = records(store)[1]
    later = parse_ts(pending["created_at"], "created_at") + 1
    append_fact(store, {**forged(store, pending), "recorded_at": later,
                        "id": ids.derived(pending["id"], "f", later, "alice")})
    git(store, "commit", "-qam", "a ratified fact at another time than its record's", "--no-verify")
    done = memstack("check", "--range", "HEAD~1..HEAD", cwd=store)
    assert done.returncode == 1 and done.stdout.count(" I5 ") == 1 and SAID in done.stdout, done.stdout + done.stderr
    git(store, "reset", "-q", "--hard", "HEAD~1")
    verified = {**pending, "id": f"{later:012x}{'ab' * 6}{ids.agent_tag('alice')}", "tier": "verified",
                "created_at": "2026-11-02T10:00:00.001Z"}
    with (store / "intake/alice/2026-11-02.jsonl").open("a") as handle:
        handle.write(json.dumps(verified, separators=(",", ":"), sort_keys=True) + "\n")
    append_fact(store, forged(store, verified))
    git(store, "commit", "-qam", "a ratified fact from a verified record", "--no-verify")
    done = memstack("check", "--range", "HEAD~1..HEAD", cwd=store)
    assert done.returncode == 1 and done.stdout.count(" I5 ") == 1 and SAID in done.stdout, done.stdout + done.stderr


def test_a_fact_at_tier_ratified_no_ratification_made_is_refused_in_a_commit_of_format_2(store: Path) -> None:
    """After the migration, even a fact made as 0.1.0's promotion made one of its writer's ratified record is
    refused: only a person's ratification makes that tier now (the hook, then `check --range` of the commit sneaked
    past it)."""
    migrated = memstack("migrate", cwd=store)
    assert migrated.returncode == 0, migrated.stdout + migrated.stderr
    append_fact(store, forged(store, records(store)[1]))
    refused(store, SAID)
    git(store, "commit", "-qam", "a ratified fact, past the hook", "--no-verify")
    done = memstack("check", "--range", "HEAD~1..HEAD", cwd=store)
    assert done.returncode == 1 and SAID in done.stdout, done.stdout + done.stderr


def test_a_writers_ratified_record_still_pending_at_the_migration_is_promoted_at_tier_verified(
        code: Path, store: Path) -> None:
    """This memstack's promotion of such a record makes no fact at tier ratified (its commit would be refused for
    ever): the writer's claim counts as the strongest a writer may give."""
    old_ok(code, "intake", "write", "--agent", "alice", "--created-at", "2026-11-02T11:00:00Z", "--content",
           "the database is postgres 17", "--subject", "database", "--predicate", "decided", "--object",
           "postgres 17", "--tier", "ratified", "--confidence", "0.95", cwd=store)
    git(store, "add", "-A")
    git(store, "commit", "-qm", "a record at tier ratified, not promoted by 0.1.0")
    migrated = memstack("migrate", cwd=store)
    assert migrated.returncode == 0, migrated.stdout + migrated.stderr
    promoted = memstack("promote", cwd=store)
    assert promoted.returncode == 0, promoted.stdout + promoted.stderr
    pending = records(store)[2]
    [made] = [f for f in facts(store) if f["intake_id"] == pending["id"]]
    assert pending["tier"] == "ratified" and made["tier"] == "verified" and made["table"] == "knowledge"
    whole_history_passes(store)
