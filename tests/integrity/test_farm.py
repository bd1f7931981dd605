"""A large check hands the records of fact files and ledger shards to a second process (integrity/farm.py,
base/farm.py): its answer is the one the check gives alone, also when that process dies or cannot start."""

import sys
from pathlib import Path

import pytest

from check_support import JAN, fact, intake, jsonl, write
from helpers import git
from memstack.base import farm as second
from memstack.base import layout
from memstack.integrity import check, farm, rules


def _staged_with_bad_lines(repo: Path) -> None:
    """Forty facts (three invalid) and a ledger shard of forty lines (two invalid), staged."""
    facts = [fact(f"f{n}", valid_from=JAN + n, recorded_at=JAN + 1000 + n) for n in range(40)]
    facts[5]["confidence"] = 2  # beyond the schema's maximum
    facts[17]["table"] = "nowhere"
    del facts[33]["subject"]
    write(repo, "kb/facts/alice/2026-01.jsonl", jsonl(*facts))
    records = [intake(n) for n in range(40)]
    write(repo, "intake/alice/2026-01-01.jsonl", jsonl(*records))
    lines = [{"intake_id": r["id"], "agent": "alice", "sub_tier": "binder", "fact_id": None,
              "promoted_at": JAN, "via": "rules", "file": "intake/alice/2026-01-01.jsonl"} for r in records]
    lines[8]["sub_tier"] = "attic"
    lines[30]["agent"] = "bob"  # not the shard's agent
    write(repo, "kb/promotions/alice/2026-01-01.jsonl", jsonl(*lines))
    git(repo, "add", "-A")


def _violations(repo: Path) -> list[str]:
    return [f"{v.path}:{v.line} {v.rule} {v.what}" for v in check.staged(repo).violations if v.rule == "I5"]


@pytest.mark.parametrize("worker", ["answers", "dies"])
def test_a_check_that_hands_its_records_over_finds_what_it_finds_alone(repo: Path, worker: str,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    _staged_with_bad_lines(repo)
    alone = _violations(repo)
    assert len([v for v in alone if "invalid" in v or "not the folder's agent" in v]) == 5, alone
    started: list[second.Farm] = []
    real = second.Farm._started

    def started_here(self: second.Farm) -> bool:
        started.append(self)
        return real(self)

    monkeypatch.setattr(farm, "START", 0)  # every line handed over, a few lines a batch
    monkeypatch.setattr(second, "BATCH", 500)
    monkeypatch.setattr(second.Farm, "_started", started_here)
    if worker == "dies":  # a second process that ends at once: what it was handed is validated here
        monkeypatch.setattr(sys, "executable", "/bin/false")
    assert _violations(repo) == alone
    assert started and all(f.proc is None for f in started)  # started, then ended with the check
    answered = sum(f.answered for f in started)  # batches the second process validated
    assert (answered > 0) if worker == "answers" else (answered == 0)


def test_the_second_process_validates_what_it_is_handed(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(farm, "START", 0)
    place = layout.classify("kb/facts/alice/2026-01.jsonl")
    good, bad = jsonl(fact("a")).rstrip(), jsonl(fact("b", confidence=7)).rstrip()
    lines = [(1, good), (2, bad), (3, b"{not json"), (4, good)]
    worker = farm.Records()
    try:
        assert worker.records("kb/facts/alice/2026-01.jsonl", place, lines) == []  # handed over
        assert worker.proc is not None
        found = worker.collect()
        assert worker.answered == 1 and not worker.dead  # answered by the second process, not redone here
    finally:
        worker.close()
    assert sorted(found) == sorted(rules.records("kb/facts/alice/2026-01.jsonl", place, lines))
    assert [v.line for v in sorted(found)] == [2, 3]
