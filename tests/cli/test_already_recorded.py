"""Saying a thing twice records it once: an identical capture or nest answers "already recorded" with the
existing id (exit 0, nothing written); `capture --contradicts` with nothing open says so."""

import json
from pathlib import Path

from helpers import memstack, tree_snapshot
from mcp_support import ok, run, server

DECISION = ("--subject", "deploys", "--predicate", "decided", "--object", "friday")


def open_facts(store: Path, subject: str = "deploys") -> list[dict]:
    history = json.loads(memstack("fact", "history", "--subject", subject, "--json", "--limit", "100",
                                  cwd=store).stdout)["items"]
    return [f for f in history if f["valid_to"] is None]


def test_an_identical_open_decision_captured_three_times_is_one_fact(store: Path) -> None:
    first = memstack("capture", *DECISION, "--json", cwd=store)
    assert first.returncode == 0, first.stderr
    [fact] = json.loads(first.stdout)
    files = tree_snapshot(store)
    for extra in ((), ("--valid-from", "now"), ("--contradicts",)):
        again = memstack("capture", *DECISION, *extra, cwd=store)
        assert again.returncode == 0, again.stderr
        assert again.stdout.startswith(f"already recorded: {fact['id']}  ") and "(nothing written)" in again.stdout
        assert json.loads(memstack("capture", *DECISION, *extra, "--json", cwd=store).stdout) == [fact]
    assert tree_snapshot(store) == files
    assert [f["id"] for f in open_facts(store)] == [fact["id"]]
    changed = memstack("capture", *DECISION[:4], "--object", "monday", "--contradicts", "--json", cwd=store)
    new, closed = json.loads(changed.stdout)
    assert closed["id"] == fact["id"] and [f["id"] for f in open_facts(store)] == [new["id"]]


def test_contradicts_with_nothing_open_records_the_decision_and_says_so(store: Path) -> None:
    result = memstack("capture", *DECISION, "--contradicts", cwd=store)
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("captured ")
    assert result.stderr == "nothing open to contradict for deploys/decided: recorded as a new decision\n"
    assert len(open_facts(store)) == 1


def test_the_same_document_nested_twice_is_one_record(store: Path, tmp_path: Path) -> None:
    doc = tmp_path / "0004-deploys.md"
    doc.write_text("# Deploys\n\nWe deploy on Fridays.\n")
    first = json.loads(memstack("nest", str(doc), "--json", cwd=store).stdout)
    assert first["already_recorded"] is False
    files = tree_snapshot(store)
    again = memstack("nest", str(doc), "--agent", "bob", cwd=store)
    assert again.returncode == 0, again.stderr
    assert again.stdout == (f"already recorded: {doc} is {first['record']['id']} in {first['path']}"
                            " (nothing written)\n")
    assert json.loads(memstack("nest", str(doc), "--json", cwd=store).stdout) == {**first, "already_recorded": True}
    assert tree_snapshot(store) == files
    doc.write_text("# Deploys\n\nWe deploy on Mondays now.\n")  # a new version of the document is new
    changed = json.loads(memstack("nest", str(doc), "--json", cwd=store).stdout)
    assert changed["already_recorded"] is False and changed["record"]["id"] != first["record"]["id"]


def test_the_capture_tool_answers_an_identical_decision_with_the_existing_fact(store: Path) -> None:
    async def session() -> None:
        async with server("--store", str(store)) as client:
            arguments = {"subject": "deploys", "predicate": "decided", "object": "friday"}
            first = await ok(client, "capture", **arguments)
            again = await ok(client, "capture", **arguments, contradicts=True)
            assert again == first and len(first) == 1

    run(session)
    assert len(open_facts(store)) == 1


def test_a_bad_argument_is_refused_also_when_the_decision_is_already_recorded(store: Path) -> None:
    """The arguments are checked before the store is asked: a time in the future is refused for a decision
    already recorded as for a new one (it was answered "already recorded", exit 0)."""
    assert memstack("capture", *DECISION, cwd=store).returncode == 0
    files = tree_snapshot(store)
    for args in (DECISION, ("--subject", "other", "--predicate", "decided", "--object", "x")):
        refused = memstack("capture", *args, "--recorded-at", "2099-01-01T00:00:00Z", cwd=store)
        assert refused.returncode == 2 and "lies in the future" in refused.stderr, refused.stdout + refused.stderr
    assert tree_snapshot(store) == files
