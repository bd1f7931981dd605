"""What promotion finds pending: each intake file's records less the intake ids of its ledger shard
(kb/promotions/<agent>/YYYY-MM-DD.jsonl), reading only the files and shards that changed since the
last promotion (pending.py); whatever the history (resets, rewritten files, ratifications, no record
of the last promotion), what it finds is what a read of every file finds."""

import json
import os
import random
import time
from pathlib import Path

import pytest

from helpers import git, ledger_files, ledger_lines, memstack
from memstack.intake import log as intake
from memstack.workflows.promote import pending

NOW = "2026-06-01T00:00:00Z"


def write(store: Path, n: int, agent: str = "alice", day: int = 1, **fields: object) -> dict:
    rec = intake.make_record(agent=agent, content=f"record {n}", created_at=f"2026-02-{day:02d}T{n % 24:02d}:00:00Z",
                             **fields)  # type: ignore[arg-type]
    intake.write(store, rec)
    return rec


def promote(store: Path) -> dict:
    result = memstack("promote", "--now-ts", NOW, "--json", cwd=store)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


def scan(store: Path) -> tuple[pending.Found, list[str]]:
    """pending.scan, and the ids of the records it handed on."""
    taken: list[str] = []
    return pending.scan(store, lambda relpath, number, record: taken.append(record["id"])), sorted(taken)


def unpromoted(store: Path) -> list[str]:
    """The intake ids no ledger line names, from every file."""
    done = {line["intake_id"] for line in ledger_lines(store)}
    return sorted(r["id"] for path in (store / "intake").rglob("*.jsonl")
                  for r in map(json.loads, path.read_text().splitlines()) if r["id"] not in done)


def test_a_promotion_reads_and_writes_only_the_shards_of_the_files_with_pending_records(store: Path) -> None:
    for agent in ("alice", "bob"):
        for day in (1, 2, 3):
            write(store, day, agent, day, tier="verified", confidence=0.9, subject=f"{agent}{day}",
                  predicate="uses", object="x")
            write(store, 10 + day, agent, day, title=f"maybe {day}")
    promote(store)
    assert sorted(ledger_files(store)) == [f"kb/promotions/{a}/2026-02-0{d}.jsonl" for a in ("alice", "bob")
                                           for d in (1, 2, 3)]
    for path, data in ledger_files(store).items():  # each shard holds its intake file's records
        assert {json.loads(x)["file"] for x in data.splitlines()} == {"intake" + path[len("kb/promotions"):]}
    assert scan(store)[0].read == []  # nothing changed: no file opened
    late = write(store, 20, "bob", 2, tier="verified", confidence=0.9, subject="late", predicate="uses", object="y")
    found, taken = scan(store)
    assert found.read == ["intake/bob/2026-02-02.jsonl"] and taken == [late["id"]]
    before = ledger_files(store)
    promote(store)
    changed = git(store, "show", "--name-only", "--format=", "HEAD", "--", "kb/promotions").stdout.split()
    assert changed == ["kb/promotions/bob/2026-02-02.jsonl"]
    after = ledger_files(store)
    assert after["kb/promotions/bob/2026-02-02.jsonl"].startswith(before["kb/promotions/bob/2026-02-02.jsonl"])
    assert {p: d for p, d in after.items() if "bob/2026-02-02" not in p} == \
        {p: d for p, d in before.items() if "bob/2026-02-02" not in p}
    assert memstack("check", "--all", cwd=store).returncode == 0


def test_a_ratified_record_is_found_from_its_own_shard(store: Path) -> None:
    keep = write(store, 1, "bob", 4, title="keep me")
    write(store, 2, "alice", 5, tier="verified", confidence=0.9, subject="s", predicate="p", object="o")
    promote(store)
    assert memstack("binder", "ratify", keep["id"], "--by", "ada", cwd=store).returncode == 0
    found, taken = scan(store)
    assert found.read == [] and taken == []
    assert [d["intake_id"] for d in found.ratified] == [keep["id"]] and found.by_id[keep["id"]] == keep
    assert found.files == {keep["id"]: "intake/bob/2026-02-04.jsonl"}
    assert promote(store)["ratified"] == 1
    shard = ledger_files(store)["kb/promotions/bob/2026-02-04.jsonl"].splitlines()
    assert [(json.loads(x)["sub_tier"], json.loads(x)["via"]) for x in shard] == [("binder", "rules"),
                                                                                   ("knowledge", "binder")]
    assert scan(store)[0].ratified == []  # made knowledge: not found again
    pending.forget(store)
    assert scan(store)[0].ratified == []  # nor from the whole decisions log


def test_a_reset_reads_again_the_files_whose_shards_it_changed(store: Path) -> None:
    for day in (1, 2):
        write(store, day, "alice", day, tier="verified", confidence=0.9, subject=f"s{day}", predicate="p", object="x")
    promote(store)
    first = git(store, "rev-parse", "HEAD").stdout.strip()
    later = write(store, 5, "alice", 2, tier="verified", confidence=0.9, subject="t", predicate="p", object="y")
    promote(store)
    git(store, "reset", "-q", "--hard", first)  # the shard of day 2 and its intake file go back
    found, taken = scan(store)
    assert found.read == ["intake/alice/2026-02-02.jsonl"] and taken == [] == unpromoted(store)
    git(store, "reset", "-q", "--hard", "HEAD@{1}")  # forward again: day 2 read again, nothing pending
    assert scan(store)[1] == [] == unpromoted(store)
    assert later["id"] in {line["intake_id"] for line in ledger_lines(store)}


def test_what_is_found_is_what_a_read_of_every_file_finds(store: Path) -> None:
    rng = random.Random(7)
    commits = [git(store, "rev-parse", "HEAD").stdout.strip()]
    for n in range(12):
        for _ in range(rng.randrange(1, 4)):
            agent, day = rng.choice(("alice", "bob")), rng.randrange(1, 5)
            if rng.random() < 0.6:
                write(store, 100 * n + day, agent, day, tier="verified", confidence=0.9,
                      subject=f"s{rng.randrange(4)}", predicate="p", object=f"o{n}")
            else:
                write(store, 100 * n + day, agent, day, title=f"maybe {n}")
        waiting = [r["id"] for r in json.loads(memstack("binder", "list", "--json", cwd=store).stdout)["items"]
                   if "id" in r]
        if waiting and rng.random() < 0.5:
            verb = rng.choice(("ratify", "reject"))
            assert memstack("binder", verb, rng.choice(waiting), "--by", "ada", cwd=store).returncode == 0
        if rng.random() < 0.2 and len(commits) > 1:
            git(store, "reset", "-q", "--hard", rng.choice(commits))
        found, taken = scan(store)
        assert taken == unpromoted(store)
        pending.forget(store)
        whole, everything = scan(store)  # no record of the last promotion: every file read
        assert everything == taken and [d["intake_id"] for d in whole.ratified] == \
            [d["intake_id"] for d in found.ratified]
        if rng.random() < 0.7:
            promote(store)
            commits.append(git(store, "rev-parse", "HEAD").stdout.strip())
            assert scan(store)[1] == [] == unpromoted(store)
    assert memstack("check", "--all", cwd=store).returncode == 0


def test_a_shard_git_rewrote_is_read_again_and_an_unchanged_folders_shards_are_not_looked_at(
        store: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for day in (1, 2, 3):
        write(store, day, "alice", day, tier="verified", confidence=0.9, subject=f"s{day}", predicate="p", object="x")
    promote(store)  # makes the shards: their folder has just changed
    promote(store)  # nothing pending; the folder changed under two seconds ago, so it is not trusted yet
    looked: list[str] = []
    signature = pending.signature
    monkeypatch.setattr(pending, "signature", lambda path: looked.append(str(path)) or signature(path))

    def shards_looked_at() -> int:
        return len([p for p in looked if "/kb/promotions/" in p and p.endswith(".jsonl")])

    assert scan(store)[0].read == [] and shards_looked_at() == 3
    folder = store / "kb" / "promotions" / "alice"
    hour_ago = time.time_ns() - 3600 * 10**9
    os.utime(folder, ns=(hour_ago, hour_ago))  # as if it had changed an hour ago
    promote(store)  # records the folder as it is now
    looked.clear()
    assert scan(store)[0].read == []
    assert shards_looked_at() == 0 and len(looked) == 3 + 1  # the three intake files and alice's shard folder
    late = write(store, 9, "alice", 2, tier="verified", confidence=0.9, subject="t", predicate="p", object="y")
    git(store, "add", "-A")
    git(store, "commit", "-q", "--no-verify", "-m", "one more, not promoted")
    git(store, "checkout", "-q", "-b", "other")
    promote(store)  # on the branch: day 2's shard routes it; the record of this promotion is saved
    os.utime(folder, ns=(hour_ago, hour_ago))
    promote(store)  # the folder recorded again, trusted
    git(store, "checkout", "-q", "-")  # back: git writes day 2's shard as it was, the intake file is the same
    looked.clear()
    found, taken = scan(store)
    assert found.read == ["intake/alice/2026-02-02.jsonl"] and taken == [late["id"]] == unpromoted(store)
    assert shards_looked_at() == 3  # the folder moved
