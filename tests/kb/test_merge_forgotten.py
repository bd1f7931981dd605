"""A fact forgotten on one side (closed by `forget`, no successor) and superseded on the other: the merge keeps the
successor's closing, the checks accept that re-closing and nothing else (docs/merge.md). The team flows are in
tests/workflows/test_forget_team.py; these are the rule's edges."""

from fact_support import RECORDED, fact, line
from memstack.base.forgotten import Forgotten, closing_at
from memstack.integrity.rules import closing_problems
from memstack.kb import merge

FACTS = "kb/facts/alice/2026-01.jsonl"
FORGOTTEN_AT = RECORDED + 5000
ONE = fact("fact-one-0000")
SUCCESSOR = {**ONE, "valid_to": 3000, "expired_at": RECORDED + 7000, "superseded_by": fact("fact-two-0000")["id"]}


def forgot(record: dict, ms: int = FORGOTTEN_AT) -> dict:
    valid_to, expired_at = closing_at(record, ms)
    return {**record, "valid_to": valid_to, "expired_at": expired_at, "superseded_by": None}


def tombstones(ms: int = FORGOTTEN_AT) -> Forgotten:
    return Forgotten([{"forgets": ONE["id"], "kind": "fact", "reason": "personal data", "by": "Alice",
                       "agent": "alice", "forgotten_at": ms}])


def test_the_successors_closing_is_kept_in_either_direction_when_a_tombstone_says_the_other() -> None:
    for ours, theirs in ((forgot(ONE), SUCCESSOR), (SUCCESSOR, forgot(ONE))):
        result = merge.merge(FACTS, line(ONE), line(ours), line(theirs), lambda: tombstones())
        assert result.conflicts == [] and result.data == line(SUCCESSOR)


def test_a_closing_without_successor_that_no_tombstone_explains_is_still_a_conflict() -> None:
    for forgotten in (None, lambda: Forgotten(), lambda: tombstones(FORGOTTEN_AT + 1)):
        result = merge.merge(FACTS, line(ONE), line(forgot(ONE)), line(SUCCESSOR), forgotten)
        assert len(result.conflicts) == 1 and b"<<<<<<< ours" in result.data


def test_the_checks_accept_only_the_forgets_closing_replaced_by_a_successors() -> None:
    assert closing_problems(forgot(ONE), SUCCESSOR, lambda: tombstones()) == []
    assert closing_problems(SUCCESSOR, forgot(ONE), lambda: tombstones())  # the chain is never dropped
    assert closing_problems(forgot(ONE), SUCCESSOR, lambda: Forgotten())  # no tombstone: an edit (I2)
    assert closing_problems(forgot(ONE), SUCCESSOR, lambda: tombstones(FORGOTTEN_AT - 1))
    edited = {**SUCCESSOR, "object": "something else"}
    assert closing_problems(forgot(ONE), edited, lambda: tombstones())
