"""`memstack fact …`, `memstack recall`, `memstack capture` through the real command."""

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from helpers import items, memstack, tree_snapshot
from memstack.kb import factfiles

JAN = "2026-01-01T00:00:00Z"
JAN_MS = 1_767_225_600_000


def run_json(store: Path, *args: str) -> Any:
    result = memstack(*args, "--json", cwd=store)
    assert result.returncode == 0, result.stderr
    document = json.loads(result.stdout)
    if "--limit" in args or args[0] == "recall":  # a page: recall's is memory.recall_limit at most
        return document["items"]
    return items(document) if args[0] == "recall" or args[:2] in (("fact", "get-valid-at"), ("fact", "history")) \
        else document


def add(store: Path, subject: str = "acme", predicate: str = "decided", object: str = "postgres",
        valid_from: str = JAN, recorded_at: str = JAN, *more: str) -> dict[str, Any]:
    [fact] = run_json(store, "fact", "add", "--subject", subject, "--predicate", predicate, "--object", object,
                      "--valid-from", valid_from, "--recorded-at", recorded_at, *more)
    return fact  # type: ignore[no-any-return]


def test_fact_add_prints_the_fact_and_writes_it_to_the_agents_month(store: Path) -> None:
    fact = add(store, "acme", "decided", "postgres", JAN, "2026-02-03T04:05:06.789Z", "--confidence", "0.9",
               "--agent", "bob", "--table", "opus_atoms", "--source", "meeting")
    assert set(fact) == {"id", "subject", "predicate", "object", "valid_from", "valid_to", "confidence",
                         "recorded_at", "table", "expired_at", "superseded_by", "source", "agent", "intake_id"}
    assert fact["valid_from"] == JAN_MS and fact["recorded_at"] == 1_770_091_506_789
    assert (fact["valid_to"], fact["expired_at"], fact["superseded_by"], fact["intake_id"]) == (None,) * 4
    assert (fact["agent"], fact["table"], fact["confidence"], fact["source"]) == ("bob", "opus_atoms", 0.9, "meeting")
    assert factfiles.read(store, "kb/facts/bob/2026-02.jsonl") == [fact]
    default = add(store)  # the agent defaults to memory.default_agent
    assert default["agent"] == "alice" and default["confidence"] == 1.0 and default["table"] == "knowledge"


def test_human_output_shows_iso_times(store: Path) -> None:
    result = memstack("fact", "add", "--subject", "acme", "--predicate", "decided", "--object", "postgres",
                      "--valid-from", str(JAN_MS), "--recorded-at", str(JAN_MS + 1), cwd=store)
    assert result.returncode == 0, result.stderr
    assert "[2026-01-01T00:00:00.000Z, open)" in result.stdout and "recorded 2026-01-01T00:00:00.001Z" in result.stdout
    listed = memstack("fact", "get-valid-at", "--ts", JAN, cwd=store).stdout
    assert "acme | decided | postgres" in listed and "2026-01-01T00:00:00.000Z" in listed
    assert memstack("fact", "get-valid-at", "--ts", "2025-12-31T23:59:59.999Z", cwd=store).stdout.strip() \
        == "no facts valid then"


def test_get_valid_at_boundaries_subject_and_as_of(store: Path) -> None:
    old = add(store, "acme", "decided", "postgres", "2026-01-01", "2026-01-01")
    add(store, "other", "decided", "x", "2026-01-01", "2026-01-01")
    [new, closed] = run_json(store, "capture", "--subject", "acme", "--predicate", "decided", "--object", "mysql",
                             "--valid-from", "2026-03-01", "--recorded-at", "2026-03-05", "--contradicts")
    assert closed["id"] == old["id"] and closed["valid_to"] == new["valid_from"]

    def ids(*args: str) -> list[str]:
        return [f["id"] for f in run_json(store, "fact", "get-valid-at", "--subject", "acme", *args)]

    assert ids("--ts", "2026-01-01T00:00:00Z") == [old["id"]]  # valid_from belongs to the window
    assert ids("--ts", "2026-02-28T23:59:59.999Z") == [old["id"]]
    assert ids("--ts", "2026-03-01T00:00:00Z") == [new["id"]]  # valid_to belongs to the successor
    assert ids("--ts", "2025-12-31T23:59:59.999Z") == []
    assert ids("--ts", "2026-03-02", "--as-of", "2026-03-04") == [old["id"]]  # the closing was not known yet
    assert ids("--ts", "2026-03-02", "--as-of", "2026-03-05") == [new["id"]]
    [believed] = run_json(store, "fact", "get-valid-at", "--subject", "acme", "--ts", "2026-03-02",
                          "--as-of", "2026-03-04")
    assert believed == {**closed, "valid_to": None, "expired_at": None, "superseded_by": None}
    assert len(run_json(store, "fact", "get-valid-at", "--ts", "2026-02-01")) == 2


def test_history_lists_every_version_oldest_first(store: Path) -> None:
    first = add(store, "acme", "prefers", "tea", "2026-01-01", "2026-01-01")
    second = run_json(store, "capture", "--subject", "acme", "--predicate", "prefers", "--object", "coffee",
                      "--valid-from", "2026-02-01", "--recorded-at", "2026-02-01", "--contradicts")[0]
    third = run_json(store, "capture", "--subject", "acme", "--predicate", "prefers", "--object", "water",
                     "--valid-from", "2026-03-01", "--recorded-at", "2026-03-01", "--contradicts")[0]
    got = run_json(store, "fact", "history", "--subject", "acme")
    assert [f["object"] for f in got] == ["tea", "coffee", "water"]
    assert [f["superseded_by"] for f in got] == [second["id"], third["id"], None]
    assert got[0]["id"] == first["id"]
    assert run_json(store, "fact", "history", "--subject", "nobody") == []


def test_invalidate_closes_and_refuses_when_nothing_is_open(store: Path) -> None:
    fact = add(store, "acme", "decided", "postgres", "2026-01-01", "2026-01-01")
    [closed] = run_json(store, "fact", "invalidate", "--subject", "acme", "--predicate", "decided",
                        "--valid-to", "2026-02-01", "--recorded-at", "2026-02-02")
    assert closed == {**fact, "valid_to": 1_769_904_000_000, "expired_at": 1_769_990_400_000, "superseded_by": None}
    before = tree_snapshot(store)
    again = memstack("fact", "invalidate", "--subject", "acme", "--predicate", "decided", "--valid-to", "2026-03-01",
                     cwd=store)
    assert again.returncode == 2 and "nothing to invalidate" in again.stderr and again.stdout == ""
    assert tree_snapshot(store) == before


def test_invalidate_without_recorded_at_records_now(store: Path) -> None:
    add(store, "acme", "decided", "postgres", "2026-01-01", "2026-01-01")
    [closed] = run_json(store, "fact", "invalidate", "--subject", "acme", "--predicate", "decided",
                        "--valid-to", "2026-02-01")
    assert closed["expired_at"] > 1_770_000_000_000  # the wall clock, long after 2026-02-01


def test_invalidate_refuses_a_valid_to_not_after_valid_from(store: Path) -> None:
    add(store, "acme", "decided", "postgres", "2026-01-01", "2026-01-01")
    before = tree_snapshot(store)
    for valid_to in ("2026-01-01", "2025-06-01"):
        result = memstack("fact", "invalidate", "--subject", "acme", "--predicate", "decided", "--valid-to", valid_to,
                          "--recorded-at", "2026-02-01", cwd=store)
        assert result.returncode == 2 and "bad valid-to" in result.stderr
    assert tree_snapshot(store) == before


def test_capture_without_contradicts_keeps_both(store: Path) -> None:
    add(store, "acme", "decided", "postgres", "2026-01-01", "2026-01-01")
    [new] = run_json(store, "capture", "--subject", "acme", "--predicate", "decided", "--object", "redis too",
                     "--valid-from", "2026-02-01", "--recorded-at", "2026-02-01", "--confidence", "0.6")
    assert new["table"] == "knowledge" and new["confidence"] == 0.6
    assert len(run_json(store, "fact", "get-valid-at", "--ts", "2026-03-01")) == 2


def test_capture_contradicts_keeps_the_prior(store: Path) -> None:
    prior = add(store, "acme", "decided", "postgres", "2026-01-01", "2026-01-01")
    result = memstack("capture", "--subject", "acme", "--predicate", "decided", "--object", "mysql",
                      "--valid-from", "2026-02-01", "--recorded-at", "2026-02-02", "--contradicts", cwd=store)
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("captured ") and "\nclosed " in result.stdout
    history = run_json(store, "fact", "history", "--subject", "acme")
    assert [f["id"] for f in history][0] == prior["id"] and len(history) == 2
    assert history[0]["superseded_by"] == history[1]["id"] and history[0]["expired_at"] == history[1]["recorded_at"]


def test_recall_filters_orders_limits_and_reads_the_config_limit(store: Path) -> None:
    for predicate, object, day in (("Decided", "a", "01"), ("chose", "b", "04"), ("PATTERN", "c", "03"),
                                   ("prefers", "d", "02"), ("likes", "no", "05")):
        add(store, "acme", predicate, object, f"2026-01-{day}", "2026-01-01")
    add(store, "acme", "decided", "future", "2027-01-01", "2026-01-01")
    got = run_json(store, "recall", "--subject", "acme", "--now-ts", "2026-06-01")
    assert [f["object"] for f in got] == ["b", "c", "d", "a"]
    assert [f["object"] for f in run_json(store, "recall", "--subject", "acme", "--now-ts", "2026-06-01",
                                          "--limit", "1")] == ["b"]
    config = store / "memstack.yaml"
    config.write_text(config.read_text().replace("recall_limit: 50", "recall_limit: 2"))
    assert [f["object"] for f in run_json(store, "recall", "--subject", "acme", "--now-ts", "2026-06-01")] \
        == ["b", "c"]
    assert "acme | chose | b" in memstack("recall", "--subject", "acme", "--now-ts", "2026-06-01", cwd=store).stdout


def test_recall_on_an_empty_or_missing_store_is_an_empty_answer(store: Path, tmp_path: Path) -> None:
    assert run_json(store, "recall", "--subject", "acme", "--now-ts", "2026-06-01") == []
    nowhere = tmp_path / "nowhere"
    nowhere.mkdir()
    result = memstack("recall", "--subject", "acme", "--json", cwd=nowhere)
    assert result.returncode == 0 and items(json.loads(result.stdout)) == [] \
        and "no memstack store here" in result.stderr
    named = memstack("recall", "--subject", "acme", "--store", str(nowhere), cwd=nowhere)
    assert named.returncode == 2 and "not a memstack store" in named.stderr
    bad = memstack("recall", "--subject", "", cwd=nowhere)
    assert bad.returncode == 2 and "bad subject" in bad.stderr


BAD_INPUTS = [
    (("fact", "add", "--subject", "", "--predicate", "p", "--object", "o", "--valid-from", "1"), "bad subject"),
    (("fact", "add", "--subject", "s", "--predicate", " ", "--object", "o", "--valid-from", "1"), "bad predicate"),
    (("fact", "add", "--subject", "s", "--predicate", "p", "--object", "o", "--valid-from", "soon"), "bad valid-from"),
    (("fact", "add", "--subject", "s", "--predicate", "p", "--object", "o", "--valid-from", "1",
      "--recorded-at", "2026-13-01"), "bad recorded-at"),
    (("fact", "add", "--subject", "s", "--predicate", "p", "--object", "o", "--valid-from", "1",
      "--confidence", "1.5"), "bad confidence"),
    (("fact", "add", "--subject", "s", "--predicate", "p", "--object", "o", "--valid-from", "1",
      "--confidence", "nan"), "bad confidence"),
    (("fact", "add", "--subject", "s", "--predicate", "p", "--object", "o", "--valid-from", "1",
      "--agent", "../etc"), "bad agent"),
    (("fact", "add", "--subject", "s", "--predicate", "p", "--object", "o", "--valid-from", "1",
      "--table", "binder"), "bad table"),
    (("fact", "add", "--subject", "s", "--predicate", "p", "--valid-from", "1"), "--object"),
    (("fact", "get-valid-at", "--ts", "noon"), "bad ts"),
    (("fact", "get-valid-at", "--ts", "1", "--as-of", "x"), "bad as-of"),
    (("fact", "history", "--subject", ""), "bad subject"),
    (("fact", "invalidate", "--subject", "s", "--predicate", "p", "--valid-to", "never"), "bad valid-to"),
    (("capture", "--subject", "s", "--predicate", "p", "--object", "o", "--valid-from", "1", "--confidence", "-0.1"),
     "bad confidence"),
    (("recall", "--subject", "s", "--limit", "0"), "bad limit"),
    (("recall", "--subject", "s", "--now-ts", "later"), "bad now-ts"),
]


@pytest.mark.parametrize(("args", "message"), BAD_INPUTS, ids=[m + " " + a[1] for a, m in BAD_INPUTS])
def test_bad_input_exits_2_with_one_line_and_writes_nothing(store: Path, args: tuple[str, ...], message: str) -> None:
    add(store)
    before = tree_snapshot(store)
    result = memstack(*args, cwd=store)
    assert result.returncode == 2
    assert message in result.stderr and result.stdout == ""
    if not message.startswith("--"):  # argparse's own usage errors take two lines
        assert len(result.stderr.strip().splitlines()) == 1
    assert tree_snapshot(store) == before


def test_a_store_that_is_not_a_store_is_refused(store: Path, tmp_path: Path) -> None:
    result = memstack("fact", "get-valid-at", "--ts", "1", "--store", str(tmp_path))
    assert result.returncode == 2 and "not a memstack store" in result.stderr


def test_the_verbs_are_listed_and_the_command_line_stays_light(store: Path) -> None:
    listing = memstack("--help").stdout
    assert all(verb in listing for verb in ("fact", "recall", "capture"))
    fact_help = memstack("fact", "--help").stdout
    assert all(verb in fact_help for verb in ("add", "get-valid-at", "history", "invalidate"))
    probe = ("import sys, memstack.cli.main as m; m.parser(); "
             "print(sorted({'sqlite3', 'jsonschema', 'memstack.kb.index'} & set(sys.modules)))")
    loaded = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True).stdout
    assert loaded.strip() == "[]"  # deferred until a verb needs them


def test_contradicting_captures_racing_on_one_value_leave_one_version_open(store: Path) -> None:
    import subprocess

    from helpers import MEMSTACK

    for round_ in range(3):
        procs = [subprocess.Popen([MEMSTACK, "capture", "--subject", "race", "--predicate", "decided",
                                   "--object", f"r{round_}-{n}", "--valid-from", str(1000 * (round_ + 1) + n),
                                   "--recorded-at", str(10_000 + round_), "--contradicts"],
                                  cwd=store, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL) for n in range(3)]
        [p.wait() for p in procs]
        history = items(json.loads(memstack("fact", "history", "--subject", "race", "--json", cwd=store).stdout))
        assert len([f for f in history if f["valid_to"] is None]) == 1, history


def test_contradicting_captures_racing_without_times_all_land_one_after_another(store: Path) -> None:
    """Captures given no times take `now` once the subject's lock is held: one that waited for a rival's closing
    begins after it (its valid_from was taken before the lock, and it was refused as a 'bad valid-from' nobody
    gave)."""
    import subprocess

    from helpers import MEMSTACK

    procs = [subprocess.Popen([MEMSTACK, "capture", "--subject", "race", "--predicate", "chose", "--object", f"v{n}",
                               "--contradicts"], cwd=store, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                              text=True) for n in range(8)]
    said = [p.communicate()[1] for p in procs]
    assert [p.returncode for p in procs] == [0] * 8, said
    history = items(json.loads(memstack("fact", "history", "--subject", "race", "--json", cwd=store).stdout))
    assert len(history) == 8 and len([f for f in history if f["valid_to"] is None]) == 1, history
