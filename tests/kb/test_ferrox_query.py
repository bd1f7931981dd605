"""`memstack query memory.<verb>`: the ferrox seed's forms, held to the seed's own semantics.

The cases follow the seed's tests (explicit integer timestamps 100/150/199/200/250): half-open
windows, supersede-don't-delete, recall's predicate set (case-insensitive), recent first, the
limit; and its documents (a fact for add/invalidate/capture, null when nothing was open).
"""

import json
from pathlib import Path
from typing import Any

from helpers import git, memstack, tree_snapshot

SEED = ("subject", "predicate", "object", "valid_from", "valid_to", "confidence", "recorded_at")


def query(store: Path, *args: str, code: int = 0) -> Any:
    result = memstack("query", *args, cwd=store)
    assert result.returncode == code, result.stderr
    return json.loads(result.stdout) if code == 0 else result.stderr


def fact(store: Path, op: str, *args: str) -> Any:
    return query(store, "memory.fact", "--op", op, *args)


def add(store: Path, subject: str, predicate: str, object: str, valid_from: int, recorded_at: int) -> Any:
    return fact(store, "add", "--subject", subject, "--predicate", predicate, "--object", object,
                "--valid-from", str(valid_from), "--recorded-at", str(recorded_at))


def capture(store: Path, subject: str, predicate: str, object: str, at: int, *more: str) -> Any:
    return query(store, "memory.capture", "--subject", subject, "--predicate", predicate, "--object", object,
                 "--valid-from", str(at), "--recorded-at", str(at), *more)


def objects(found: list[dict[str, Any]]) -> list[str]:
    return [f["object"] for f in found]


def test_add_prints_the_fact_with_the_seeds_fields_valid_to_null_confidence_one(store: Path) -> None:
    added = add(store, "S", "P", "OLD", 100, 100)
    assert isinstance(added, dict) and set(SEED) <= set(added)
    assert [added[k] for k in SEED] == ["S", "P", "OLD", 100, None, 1.0, 100]
    assert fact(store, "history", "--subject", "S") == [added]
    raw = memstack("query", "memory.fact", "--op", "add", "--subject", "S", "--predicate", "Q", "--object", "",
                   "--valid-from", "100", "--recorded-at", "100", "--confidence", "0.25", "--raw", cwd=store)
    assert raw.returncode == 0 and raw.stdout.count("\n") == 1  # --raw: compact, one line
    assert json.loads(raw.stdout)["confidence"] == 0.25 and json.loads(raw.stdout)["object"] == ""


def test_supersede_dont_delete_and_half_open_windows(store: Path) -> None:
    add(store, "S", "P", "OLD", 100, 100)
    closed = fact(store, "invalidate", "--subject", "S", "--predicate", "P", "--valid-to", "200")
    assert closed["object"] == "OLD" and closed["valid_to"] == 200
    add(store, "S", "P", "NEW", 200, 200)
    history = fact(store, "history", "--subject", "S")
    assert sorted(objects(history)) == ["NEW", "OLD"]  # both versions kept
    assert next(f for f in history if f["object"] == "OLD")["valid_to"] == 200
    for ts, expected in ((50, []), (100, ["OLD"]), (150, ["OLD"]), (199, ["OLD"]), (200, ["NEW"]), (250, ["NEW"])):
        # the valid_to instant belongs to the successor
        assert objects(fact(store, "get-valid-at", "--ts", str(ts))) == expected, ts


def test_invalidate_with_nothing_open_prints_null_and_changes_nothing(store: Path) -> None:
    add(store, "S", "P", "OLD", 100, 100)
    fact(store, "invalidate", "--subject", "S", "--predicate", "P", "--valid-to", "200")
    before = tree_snapshot(store)
    assert fact(store, "invalidate", "--subject", "S", "--predicate", "P", "--valid-to", "999") is None
    assert fact(store, "invalidate", "--subject", "nobody", "--predicate", "P", "--valid-to", "999") is None
    assert tree_snapshot(store) == before
    assert fact(store, "history", "--subject", "S")[0]["valid_to"] == 200  # no double close


def test_invalidate_closes_every_open_match_and_object_narrows_it(store: Path) -> None:
    add(store, "S", "P", "v1", 100, 100)
    add(store, "S", "P", "v2", 100, 110)
    add(store, "S", "P", "v3", 100, 120)
    last = fact(store, "invalidate", "--subject", "S", "--predicate", "P", "--object", "v3", "--valid-to", "150")
    assert last["object"] == "v3" and last["valid_to"] == 150
    assert sorted(objects(fact(store, "get-valid-at", "--ts", "160"))) == ["v1", "v2"]
    last = fact(store, "invalidate", "--subject", "S", "--predicate", "P", "--valid-to", "200")
    assert last["valid_to"] == 200 and last["object"] in ("v1", "v2")
    assert fact(store, "get-valid-at", "--ts", "200") == []
    assert len(fact(store, "history", "--subject", "S")) == 3  # all retained


def test_get_valid_at_filters_by_subject_exactly(store: Path) -> None:
    add(store, "S1", "P", "x", 100, 100)
    add(store, "S2", "P", "y", 100, 100)
    assert objects(fact(store, "get-valid-at", "--ts", "150", "--subject", "S1")) == ["x"]
    assert sorted(objects(fact(store, "get-valid-at", "--ts", "150"))) == ["x", "y"]
    assert fact(store, "get-valid-at", "--ts", "150", "--subject", "s1") == []  # the seed matches subjects exactly


def test_history_is_recorded_at_ascending(store: Path) -> None:
    add(store, "S", "P", "A", 300, 300)
    add(store, "S", "Q", "B", 100, 100)
    add(store, "S", "R", "C", 50, 400)  # back-dated: valid earliest, recorded last
    assert [f["recorded_at"] for f in fact(store, "history", "--subject", "S")] == [100, 300, 400]


def test_recall_predicate_set_case_insensitive_recent_first_and_limit(store: Path) -> None:
    capture(store, "s", "decided", "a", 100)
    capture(store, "s", "Chose", "b", 200)  # predicates match case-insensitively
    capture(store, "s", "PREFERS", "c", 300)
    capture(store, "s", "pattern", "d", 350)
    add(store, "s", "noise", "drop", 100, 150)  # not a decision: never recalled
    add(store, "s", "decided", "late", 500, 500)  # not yet valid at 400
    add(store, "S", "decided", "other subject", 100, 100)
    recalled = query(store, "memory.recall", "--subject", "s", "--now-ts", "400")
    assert objects(recalled) == ["d", "c", "b", "a"]
    assert objects(query(store, "memory.recall", "--subject", "s", "--now-ts", "400", "--limit", "2")) == ["d", "c"]
    (store / "memstack.yaml").write_text((store / "memstack.yaml").read_text().replace("recall_limit: 50",
                                                                                       "recall_limit: 3"))
    assert objects(query(store, "memory.recall", "--subject", "s", "--now-ts", "400")) == ["d", "c", "b"]
    assert query(store, "memory.recall", "--subject", "nobody", "--now-ts", "400") == []


def test_recall_orders_by_recorded_at_as_the_seed_does(store: Path) -> None:
    add(store, "s", "decided", "recorded first", 300, 300)
    add(store, "s", "chose", "back-dated, recorded last", 100, 400)
    assert objects(query(store, "memory.recall", "--subject", "s", "--now-ts", "500")) == [
        "back-dated, recorded last", "recorded first"]


def test_capture_adds_and_contradicts_supersedes_without_deleting(store: Path) -> None:
    a = capture(store, "auth", "decided", "DECISION_A", 100)
    assert isinstance(a, dict) and a["object"] == "DECISION_A" and a["valid_to"] is None
    b = capture(store, "auth", "decided", "DECISION_B", 200, "--contradicts")
    assert b["object"] == "DECISION_B" and b["supersedes"] == [a["id"]]
    history = fact(store, "history", "--subject", "auth")
    assert objects(history) == ["DECISION_A", "DECISION_B"]
    assert history[0]["valid_to"] == 200 and history[0]["superseded_by"] == b["id"]
    assert objects(query(store, "memory.recall", "--subject", "auth", "--now-ts", "200")) == ["DECISION_B"]
    assert objects(query(store, "memory.recall", "--subject", "auth", "--now-ts", "199")) == ["DECISION_A"]
    c = capture(store, "auth", "chose", "jose", 250, "--confidence", "0.5")  # no --contradicts: only adds
    assert c["confidence"] == 0.5 and "supersedes" not in c
    assert objects(query(store, "memory.recall", "--subject", "auth", "--now-ts", "300")) == ["jose", "DECISION_B"]


def test_writes_pass_the_hooks_and_check_all(store: Path) -> None:
    capture(store, "auth", "decided", "a", 100)
    capture(store, "auth", "decided", "b", 200, "--contradicts")
    add(store, "S", "P", "OLD", 100, 100)
    fact(store, "invalidate", "--subject", "S", "--predicate", "P", "--valid-to", "200")
    git(store, "add", "-A")
    committed = git(store, "commit", "-m", "ferrox spellings", check=False)
    assert committed.returncode == 0, committed.stdout + committed.stderr
    assert memstack("check", "--all", cwd=store).returncode == 0


def test_reads_without_a_store_answer_nothing_and_say_so(tmp_path: Path) -> None:
    for args in (("memory.recall", "--subject", "s", "--now-ts", "100"),
                 ("memory.fact", "--op", "get-valid-at", "--ts", "100"),
                 ("memory.fact", "--op", "history", "--subject", "s")):
        result = memstack("query", *args, cwd=tmp_path)
        assert result.returncode == 0 and json.loads(result.stdout) == [], result.stderr
        assert "no memstack store here" in result.stderr
    result = memstack("query", "memory.recall", "--subject", "s", "--now-ts", "soon", cwd=tmp_path)
    assert result.returncode == 2 and "now-ts" in result.stderr  # bad input is still bad


def test_bad_usage_exits_2_naming_the_flag_and_writes_nothing(store: Path) -> None:
    before = tree_snapshot(store)
    cases = [
        (("memory.fact", "--op", "add", "--subject", "S", "--predicate", "P", "--object", "O", "--valid-from", "1"),
         "--recorded-at"),
        (("memory.fact", "--op", "add", "--predicate", "P", "--object", "O", "--valid-from", "1",
          "--recorded-at", "1"), "--subject"),
        (("memory.fact", "--op", "get-valid-at"), "--ts"),
        (("memory.fact", "--op", "history"), "--subject"),
        (("memory.fact", "--op", "invalidate", "--subject", "S", "--predicate", "P"), "--valid-to"),
        (("memory.fact", "--op", "history", "--subject", "S", "--ts", "5"), "--ts"),
        (("memory.fact", "--op", "remove", "--subject", "S"), "--op"),
        (("memory.fact", "--subject", "S"), "--op"),
        (("memory.fact", "--op", "add", "--subject", "S", "--predicate", "P", "--object", "O",
          "--valid-from", "yesterday-ish", "--recorded-at", "1"), "valid-from"),
        (("memory.fact", "--op", "add", "--subject", "S", "--predicate", "P", "--object", "O",
          "--valid-from", "1", "--recorded-at", "1", "--confidence", "1.5"), "confidence"),
        (("memory.fact", "--op", "get-valid-at", "--ts", "x"), "ts"),
        (("memory.recall", "--subject", "s"), "--now-ts"),
        (("memory.recall", "--subject", "s", "--now-ts", "1", "--limit", "0"), "limit"),
        (("memory.capture", "--subject", "s", "--predicate", "decided", "--object", "o", "--valid-from", "1"),
         "--recorded-at"),
        (("memory.thing",), "memory.thing"),
    ]
    for args, named in cases:
        result = memstack("query", *args, cwd=store)
        assert result.returncode == 2, (args, result.stdout)
        assert named in result.stderr and "Traceback" not in result.stderr, (args, result.stderr)
    assert tree_snapshot(store) == before


def test_now_is_accepted_where_a_time_is_given(store: Path) -> None:
    added = add(store, "S", "decided", "x", 100, 100)
    assert objects(query(store, "memory.recall", "--subject", "S", "--now-ts", "now")) == ["x"]
    assert fact(store, "get-valid-at", "--ts", "now", "--subject", "S") == [added]
