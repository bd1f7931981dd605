"""The fact store as a library: records, windows, closings, the bulk API (explicit store, explicit times)."""

import os
from pathlib import Path
from typing import Any

import pytest

from memstack.base import files
from memstack.base.errors import MemstackError
from memstack.kb import factfiles, facts, factstore
from memstack.kb.factstore import Closing
from memstack.kb.index import build, catchup, schema

DAY = 86_400_000
JAN = 1_767_225_600_000  # 2026-01-01T00:00:00Z


def add(root: Path, subject: str = "acme", predicate: str = "decided", object: str = "postgres",
        valid_from: int = JAN, recorded_at: int = JAN, agent: str = "alice", **more: Any) -> dict[str, Any]:
    return factstore.add(root, subject=subject, predicate=predicate, object=object, valid_from=valid_from,
                         recorded_at=recorded_at, agent=agent, **more)


def fact_bytes(root: Path) -> dict[str, bytes]:
    return {rel: (root / rel).read_bytes() for rel, _ in factfiles.list_files(root)}


def test_add_appends_one_open_fact_to_the_agents_month_file(tmp_path: Path) -> None:
    fact = add(tmp_path, recorded_at=JAN + 31 * DAY - 1, agent="bob", confidence="0.25", source="chat")
    assert fact == {**fact, "valid_to": None, "expired_at": None, "superseded_by": None, "intake_id": None,
                    "table": "knowledge", "confidence": 0.25, "source": "chat", "agent": "bob"}
    assert factfiles.read(tmp_path, "kb/facts/bob/2026-01.jsonl") == [fact]
    later = add(tmp_path, recorded_at=JAN + 31 * DAY, agent="bob")  # the first instant of February, UTC
    assert factfiles.read(tmp_path, "kb/facts/bob/2026-02.jsonl") == [later]
    assert [rel for rel, _ in factfiles.list_files(tmp_path)] == ["kb/facts/bob/2026-01.jsonl",
                                                                  "kb/facts/bob/2026-02.jsonl"]


def test_ids_are_fresh_unless_given_and_never_reused(tmp_path: Path) -> None:
    first, second = add(tmp_path), add(tmp_path)
    assert first["id"] != second["id"] and first["id"][:12] == f"{JAN:012x}"
    chosen = add(tmp_path, id="promo-0123456789abcdef", intake_id="0123456789abcdef")
    assert chosen["id"] == "promo-0123456789abcdef"
    before = fact_bytes(tmp_path)
    with pytest.raises(MemstackError, match="already exists"):
        add(tmp_path, id="promo-0123456789abcdef")
    with pytest.raises(MemstackError, match="given twice"):
        factstore.append_many(tmp_path, [facts.make(subject="s", predicate="p", object="o", valid_from=1,
                                                    recorded_at=1, agent="alice", id="same-id-00")] * 2)
    assert fact_bytes(tmp_path) == before


@pytest.mark.parametrize(("field", "value", "message"), [
    ("subject", "", "bad subject"), ("subject", "   ", "bad subject"), ("predicate", "", "bad predicate"),
    ("valid_from", "yesterday", "bad valid-from"), ("valid_from", "99999999999999999", "bad valid-from"),
    ("recorded_at", -1, "bad recorded-at"), ("recorded_at", 1.5, "bad recorded-at"),
    ("confidence", 1.01, "bad confidence"), ("confidence", float("nan"), "bad confidence"),
    ("confidence", "inf", "bad confidence"), ("agent", "Alice", "bad agent"), ("agent", "../x", "bad agent"),
    ("table", "binder", "bad table"), ("id", "UPPER-case", "id"),
])
def test_bad_input_names_the_field_and_writes_nothing(tmp_path: Path, field: str, value: Any, message: str) -> None:
    add(tmp_path)
    before = fact_bytes(tmp_path)
    with pytest.raises(MemstackError, match=message) as caught:
        add(tmp_path, **{field: value})
    assert caught.value.code == 2
    assert fact_bytes(tmp_path) == before


def test_the_window_is_half_open(tmp_path: Path) -> None:
    old = add(tmp_path, object="postgres", valid_from=1000, recorded_at=5000)
    new, closed = factstore.capture(tmp_path, subject="acme", predicate="decided", object="mysql", valid_from=3000,
                                    recorded_at=6000, agent="alice", contradicts=True)
    assert [f["id"] for f in closed] == [old["id"]]
    assert factstore.get_valid_at(tmp_path, 999) == []
    assert [f["object"] for f in factstore.get_valid_at(tmp_path, 1000)] == ["postgres"]  # valid_from belongs
    assert [f["object"] for f in factstore.get_valid_at(tmp_path, 2999)] == ["postgres"]
    assert [f["object"] for f in factstore.get_valid_at(tmp_path, 3000)] == ["mysql"]  # valid_to is the successor's
    assert [f["object"] for f in factstore.get_valid_at(tmp_path, "1970-01-01T00:00:03Z")] == ["mysql"]


def test_as_of_answers_as_the_store_believed_then(tmp_path: Path) -> None:
    old = add(tmp_path, object="postgres", valid_from=1000, recorded_at=5000)
    new, _ = factstore.capture(tmp_path, subject="acme", predicate="decided", object="mysql", valid_from=3000,
                               recorded_at=6000, agent="alice", contradicts=True)
    assert factstore.get_valid_at(tmp_path, 4000, as_of=4999) == []  # nothing recorded yet
    believed = factstore.get_valid_at(tmp_path, 4000, as_of=5999)  # the closing (at 6000) not yet known
    assert believed == [old]
    assert [f["id"] for f in factstore.get_valid_at(tmp_path, 4000, as_of=6000)] == [new["id"]]
    assert factstore.get_valid_at(tmp_path, 4000, as_of=5999) == factstore.scan_valid_at(tmp_path, 4000, as_of=5999)


def test_history_lists_every_version_in_a_stable_order(tmp_path: Path) -> None:
    a = add(tmp_path, predicate="prefers", object="tea", valid_from=1000, recorded_at=1000, id="fact-aaaaaaaa")
    b = add(tmp_path, predicate="decided", object="go", valid_from=1000, recorded_at=1000, id="fact-bbbbbbbb")
    c, _ = factstore.capture(tmp_path, subject="acme", predicate="prefers", object="coffee", valid_from=2000,
                             recorded_at=3000, agent="bob", contradicts=True)
    add(tmp_path, subject="other", valid_from=0)
    got = factstore.history(tmp_path, "acme")
    assert [f["id"] for f in got] == [a["id"], b["id"], c["id"]]
    assert got[0]["valid_to"] == 2000 and got[0]["superseded_by"] == c["id"]
    assert got == factstore.scan_history(tmp_path, "acme")


def test_closing_rewrites_only_that_line_and_only_the_closing_fields(tmp_path: Path) -> None:
    lines = [add(tmp_path, subject=f"s{i}", valid_from=1000, recorded_at=2000) for i in range(5)]
    rel = "kb/facts/alice/1970-01.jsonl"
    before = (tmp_path / rel).read_bytes().splitlines(keepends=True)
    [closed] = factstore.invalidate(tmp_path, subject="s2", predicate="decided", valid_to=4000, recorded_at=5000)
    after = (tmp_path / rel).read_bytes().splitlines(keepends=True)
    assert after[:2] == before[:2] and after[3:] == before[3:] and after[2] != before[2]
    assert closed == {**lines[2], "valid_to": 4000, "expired_at": 5000, "superseded_by": None}
    assert factfiles.read(tmp_path, rel)[2] == closed


def test_a_crash_mid_rewrite_leaves_the_old_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    add(tmp_path, valid_from=1000, recorded_at=2000)
    before = fact_bytes(tmp_path)

    def crash(*args: Any) -> None:
        raise OSError("power cut")

    monkeypatch.setattr(files.os, "replace", crash)
    with pytest.raises(OSError, match="power cut"):
        factstore.invalidate(tmp_path, subject="acme", predicate="decided", valid_to=4000, recorded_at=5000)
    monkeypatch.undo()
    assert fact_bytes(tmp_path) == before
    assert factstore.open_facts(tmp_path, "acme", "decided") == factfiles.read(tmp_path, "kb/facts/alice/1970-01.jsonl")


def test_invalidate_refuses_when_nothing_is_open_or_the_window_would_be_empty(tmp_path: Path) -> None:
    with pytest.raises(MemstackError, match="nothing to invalidate"):
        factstore.invalidate(tmp_path, subject="acme", predicate="decided", valid_to=4000, recorded_at=5000)
    add(tmp_path, valid_from=4000, recorded_at=5000)
    before = fact_bytes(tmp_path)
    for valid_to in (4000, 3999):
        with pytest.raises(MemstackError, match="bad valid-to") as caught:
            factstore.invalidate(tmp_path, subject="acme", predicate="decided", valid_to=valid_to, recorded_at=6000)
        assert caught.value.code == 2
    with pytest.raises(MemstackError, match="bad recorded-at"):  # a closing is not recorded before its fact
        factstore.invalidate(tmp_path, subject="acme", predicate="decided", valid_to=4001, recorded_at=4999)
    factstore.invalidate(tmp_path, subject="acme", predicate="decided", valid_to=4001, recorded_at=5000)
    assert fact_bytes(tmp_path) != before
    after = fact_bytes(tmp_path)
    with pytest.raises(MemstackError, match="nothing to invalidate"):  # closed once, never again
        factstore.invalidate(tmp_path, subject="acme", predicate="decided", valid_to=9000, recorded_at=9000)
    assert fact_bytes(tmp_path) == after


def test_invalidate_names_a_known_successor_and_leaves_it_open(tmp_path: Path) -> None:
    old = add(tmp_path, object="postgres", valid_from=1000, recorded_at=1000)
    successor = add(tmp_path, object="mysql", valid_from=3000, recorded_at=2000)
    [closed] = factstore.invalidate(tmp_path, subject="acme", predicate="decided", valid_to=3000, recorded_at=2500)
    assert closed["id"] == old["id"] and closed["superseded_by"] == successor["id"]
    assert factstore.open_facts(tmp_path, "acme", "decided") == [successor]
    other = add(tmp_path, predicate="prefers", object="tea", valid_from=1000, recorded_at=1000)
    [closed] = factstore.invalidate(tmp_path, subject="acme", predicate="prefers", valid_to=2000, recorded_at=2500)
    assert closed["id"] == other["id"] and closed["superseded_by"] is None


def test_invalidate_with_object_closes_one_value_of_many(tmp_path: Path) -> None:
    tea = add(tmp_path, predicate="prefers", object="tea", valid_from=1000, recorded_at=1000)
    jam = add(tmp_path, predicate="prefers", object="jam", valid_from=1000, recorded_at=1000)
    [closed] = factstore.invalidate(tmp_path, subject="acme", predicate="prefers", object="tea", valid_to=2000,
                                    recorded_at=3000)
    assert closed["id"] == tea["id"]
    assert factstore.open_facts(tmp_path, "acme", "prefers") == [jam]


def test_capture_contradicts_closes_the_prior_and_keeps_it(tmp_path: Path) -> None:
    prior = add(tmp_path, object="postgres", valid_from=1000, recorded_at=1000)
    new, closed = factstore.capture(tmp_path, subject="acme", predicate="decided", object="mysql", valid_from=5000,
                                    recorded_at=6000, agent="bob", contradicts=True, confidence=0.7)
    assert closed == [{**prior, "valid_to": 5000, "expired_at": 6000, "superseded_by": new["id"]}]
    assert new["table"] == "knowledge" and new["confidence"] == 0.7 and new["valid_to"] is None
    assert [f["id"] for f in factstore.history(tmp_path, "acme")] == [prior["id"], new["id"]]
    plain, none_closed = factstore.capture(tmp_path, subject="acme", predicate="decided", object="redis",
                                           valid_from=7000, recorded_at=7000, agent="bob")
    assert none_closed == [] and len(factstore.open_facts(tmp_path, "acme", "decided")) == 2


def test_capture_contradicts_refuses_to_overlap(tmp_path: Path) -> None:
    add(tmp_path, object="postgres", valid_from=5000, recorded_at=1000)
    before = fact_bytes(tmp_path)
    for valid_from in (5000, 4000):  # the open fact cannot be closed at or before its start
        with pytest.raises(MemstackError, match="bad valid-from"):
            factstore.capture(tmp_path, subject="acme", predicate="decided", object="mysql", valid_from=valid_from,
                              recorded_at=2000, agent="alice", contradicts=True)
    assert fact_bytes(tmp_path) == before
    factstore.invalidate(tmp_path, subject="acme", predicate="decided", valid_to=8000, recorded_at=2000)
    closed_state = fact_bytes(tmp_path)
    with pytest.raises(MemstackError, match="closed facts never change"):  # would overlap [5000, 8000)
        factstore.capture(tmp_path, subject="acme", predicate="decided", object="mysql", valid_from=7999,
                          recorded_at=3000, agent="alice", contradicts=True)
    assert fact_bytes(tmp_path) == closed_state
    factstore.capture(tmp_path, subject="acme", predicate="decided", object="mysql", valid_from=8000,
                      recorded_at=3000, agent="alice", contradicts=True)


def test_recall_filters_orders_and_limits(tmp_path: Path) -> None:
    add(tmp_path, predicate="DECIDED", object="a", valid_from=1000, recorded_at=1000)
    add(tmp_path, predicate="chose", object="b", valid_from=3000, recorded_at=1000)
    add(tmp_path, predicate="Pattern", object="c", valid_from=2000, recorded_at=2000)
    add(tmp_path, predicate="prefers", object="d", valid_from=2000, recorded_at=1500)
    add(tmp_path, predicate="likes", object="not recalled", valid_from=1000, recorded_at=1000)
    add(tmp_path, predicate="decided", object="not yet valid", valid_from=99_000, recorded_at=1000)
    add(tmp_path, subject="other", predicate="decided", object="other subject", valid_from=0, recorded_at=1000)
    got = factstore.recall(tmp_path, "acme", 10_000, 50)
    assert [f["object"] for f in got] == ["b", "c", "d", "a"]
    assert [f["object"] for f in factstore.recall(tmp_path, "acme", 10_000, 2)] == ["b", "c"]
    assert got == factstore.scan_recall(tmp_path, "acme", 10_000, 50)
    assert factstore.recall(tmp_path, "nobody", 10_000, 50) == []
    with pytest.raises(MemstackError, match="bad limit"):
        factstore.recall(tmp_path, "acme", 10_000, 0)


def test_an_empty_store_answers_nothing(tmp_path: Path) -> None:
    assert factstore.get_valid_at(tmp_path, 0) == [] and factstore.history(tmp_path, "x") == []
    assert factstore.recall(tmp_path, "x", 0, 5) == [] and factstore.open_facts(tmp_path, "x", "y") == []


def test_bulk_append_writes_once_per_file_and_bulk_close_rewrites_once_per_file(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    batch = [facts.make(subject=f"s{i}", predicate="p", object="o", valid_from=0, recorded_at=JAN + (i % 2) * 40 * DAY,
                        agent=("alice", "bob")[i // 2 % 2], id=f"bulk-{i:08d}") for i in range(40)]
    appends: list[str] = []
    real_append = files.append_held
    monkeypatch.setattr(files, "append_held",
                        lambda path, rel, data: (appends.append(rel), real_append(path, rel, data)))
    written = factstore.append_many(tmp_path, batch)
    assert sorted(appends) == written == ["kb/facts/alice/2026-01.jsonl", "kb/facts/alice/2026-02.jsonl",
                                          "kb/facts/bob/2026-01.jsonl", "kb/facts/bob/2026-02.jsonl"]
    assert factstore.existing_ids(tmp_path, ["bulk-00000003", "nope-00000000"]) == {"bulk-00000003"}
    rewrites: list[Path] = []
    real_write = files.write_atomic
    monkeypatch.setattr(files, "write_atomic", lambda path, data: (rewrites.append(path), real_write(path, data)))
    closed = factstore.close_many(tmp_path, [Closing(f"bulk-{i:08d}", 10, JAN + 90 * DAY, None) for i in range(40)])
    assert len(rewrites) == 4 and [f["id"] for f in closed] == [f["id"] for f in batch]
    assert all(f["valid_to"] == 10 for f in factfiles.scan(tmp_path))
    with pytest.raises(MemstackError, match="no such fact"):
        factstore.close_many(tmp_path, [Closing("nope-00000000", 10, JAN, None)])


def test_bulk_close_checks_every_closing_before_writing(tmp_path: Path) -> None:
    a = add(tmp_path, subject="a", valid_from=0, recorded_at=JAN, agent="alice")
    b = add(tmp_path, subject="b", valid_from=500, recorded_at=JAN, agent="bob")
    before = fact_bytes(tmp_path)
    with pytest.raises(MemstackError, match="bad valid-to"):
        factstore.close_many(tmp_path, [Closing(a["id"], 100, JAN, None), Closing(b["id"], 100, JAN, None)])
    assert fact_bytes(tmp_path) == before


def test_a_closing_may_change_only_the_closing_fields() -> None:
    fact = facts.make(subject="s", predicate="p", object="o", valid_from=0, recorded_at=0, agent="alice")
    assert facts.closing_problem(fact, facts.close(fact, valid_to=1, expired_at=1)) is None
    assert "not object" in str(facts.closing_problem(fact, {**facts.close(fact, valid_to=1, expired_at=1),
                                                            "object": "changed"}))
    closed = facts.close(fact, valid_to=1, expired_at=1)
    assert "already closed" in str(facts.closing_problem(closed, closed))
    with pytest.raises(MemstackError, match="already closed"):
        facts.close(closed, valid_to=2, expired_at=2)


# --- the index against the files --------------------------------------------------------------

def test_the_index_follows_changes_made_behind_its_back(tmp_path: Path) -> None:
    add(tmp_path, subject="a", valid_from=0, recorded_at=JAN)
    assert len(factstore.get_valid_at(tmp_path, 1)) == 1  # builds the index
    rel = "kb/facts/alice/2026-01.jsonl"
    extra = facts.make(subject="b", predicate="p", object="o", valid_from=0, recorded_at=JAN, agent="alice")
    with open(tmp_path / rel, "ab") as handle:  # as `git pull` would bring it
        handle.write(factfiles.jsonio.dumps_line(extra))
    assert [f["subject"] for f in factstore.get_valid_at(tmp_path, 1)] == ["a", "b"]
    (tmp_path / rel).write_bytes(factfiles.jsonio.dumps_line(extra))  # rewritten whole
    assert factstore.get_valid_at(tmp_path, 1) == [extra]
    (tmp_path / rel).unlink()
    assert factstore.get_valid_at(tmp_path, 1) == []


def test_a_grown_file_is_read_from_where_the_index_stopped(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    add(tmp_path, subject="a", valid_from=0, recorded_at=JAN)
    factstore.get_valid_at(tmp_path, 1)
    rel = "kb/facts/alice/2026-01.jsonl"
    old_size = (tmp_path / rel).stat().st_size
    with open(tmp_path / rel, "ab") as handle:
        handle.write(factfiles.jsonio.dumps_line(
            facts.make(subject="b", predicate="p", object="o", valid_from=0, recorded_at=JAN, agent="alice")))
    starts: list[int] = []
    real_rows = schema.rows
    monkeypatch.setattr(schema, "rows", lambda relpath, data, start, end, file_id: (
        starts.append(start), real_rows(relpath, data, start, end, file_id))[1])
    assert len(factstore.get_valid_at(tmp_path, 1)) == 2
    assert starts == [old_size]
    starts.clear()
    factstore.get_valid_at(tmp_path, 1)
    assert starts == []  # nothing changed: nothing read


def test_writes_through_memstack_leave_the_index_current(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    add(tmp_path, subject="a", valid_from=0, recorded_at=JAN)
    factstore.get_valid_at(tmp_path, 1)
    starts: list[int] = []
    real_rows = schema.rows
    monkeypatch.setattr(schema, "rows", lambda relpath, data, start, end, file_id: (
        starts.append(start), real_rows(relpath, data, start, end, file_id))[1])
    add(tmp_path, subject="b", valid_from=0, recorded_at=JAN)
    factstore.invalidate(tmp_path, subject="a", predicate="decided", valid_to=5, recorded_at=JAN)
    assert [f["subject"] for f in factstore.get_valid_at(tmp_path, 5)] == ["b"]
    assert starts == []
    assert factstore.get_valid_at(tmp_path, 4) == factstore.scan_valid_at(tmp_path, 4)


def test_an_unfinished_last_line_waits_and_a_bad_line_is_named(tmp_path: Path) -> None:
    add(tmp_path, subject="a", valid_from=0, recorded_at=JAN)
    rel = "kb/facts/alice/2026-01.jsonl"
    line = factfiles.jsonio.dumps_line(
        facts.make(subject="b", predicate="p", object="o", valid_from=0, recorded_at=JAN, agent="alice"))
    with open(tmp_path / rel, "ab") as handle:
        handle.write(line[:20])
    assert [f["subject"] for f in factstore.get_valid_at(tmp_path, 1)] == ["a"]
    with open(tmp_path / rel, "ab") as handle:
        handle.write(line[20:])
    assert [f["subject"] for f in factstore.get_valid_at(tmp_path, 1)] == ["a", "b"]
    with open(tmp_path / rel, "ab") as handle:
        handle.write(b'{"id": "x"}\n')
    with pytest.raises(MemstackError, match=r"2026-01\.jsonl:3: I5 not a fact: subject"):
        factstore.get_valid_at(tmp_path, 1)


def test_a_corrupt_or_deleted_index_is_rebuilt(tmp_path: Path) -> None:
    add(tmp_path, subject="a", valid_from=0, recorded_at=JAN)
    expected = factstore.get_valid_at(tmp_path, 1)
    schema.DB.drop(tmp_path)
    (tmp_path / schema.DB_NAME).write_bytes(b"this is not a database" * 100)
    assert factstore.get_valid_at(tmp_path, 1) == expected
    schema.DB.drop(tmp_path)
    assert factstore.get_valid_at(tmp_path, 1) == expected


def test_a_symlinked_fact_file_is_refused(tmp_path: Path) -> None:
    add(tmp_path, subject="a", valid_from=0, recorded_at=JAN)
    os.symlink(tmp_path / "kb/facts/alice/2026-01.jsonl", tmp_path / "kb/facts/alice/2026-02.jsonl")
    with pytest.raises(MemstackError, match="symlink"):
        factstore.get_valid_at(tmp_path, 1)


@pytest.mark.parametrize(("line", "message"), [
    (b"\n", "empty line"), (b"{not json\n", "not valid JSON"), (b"[1]\n", "must be a JSON object"),
    (b'{"id":"x","subject":"s","predicate":"p","valid_from":"2026","valid_to":null,"recorded_at":1,'
     b'"expired_at":null}\n', "valid_from must be integer"),
    (b'{"id":"x","subject":"s","predicate":"p","valid_from":1,"valid_to":null,"recorded_at":1,'
     b'"expired_at":99999999999999999999}\n', "expired_at must be integer"),
    (b'{"id":"x","subject":"s","predicate":"p","valid_from":1,"recorded_at":1,"expired_at":null}\n',
     "valid_to must be integer milliseconds or null"),
])
def test_a_line_the_index_cannot_take_is_named(tmp_path: Path, line: bytes, message: str) -> None:
    add(tmp_path, subject="a", valid_from=0, recorded_at=JAN)
    factstore.get_valid_at(tmp_path, 1)
    with open(tmp_path / "kb/facts/alice/2026-01.jsonl", "ab") as handle:
        handle.write(line)
    with pytest.raises(MemstackError, match=rf"kb/facts/alice/2026-01\.jsonl:2: I5 .*{message}"):
        factstore.get_valid_at(tmp_path, 1)


def index_current(root: Path) -> bool:
    db = schema.DB.connect(root)
    try:
        return catchup.sync(db, root, budget=0)
    finally:
        db.close()


def test_a_far_behind_index_answers_from_the_files_and_catches_up_in_the_background(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import time

    monkeypatch.setattr(build, "BUILD_BUDGET", 0)  # anything to index counts as "too much for one query"
    fact = add(tmp_path, subject="a", valid_from=0, recorded_at=JAN)
    add(tmp_path, subject="b", valid_from=0, recorded_at=JAN)
    assert not index_current(tmp_path)
    assert factstore.get_valid_at(tmp_path, 1, "a") == [fact]  # answered from the files...
    deadline = time.monotonic() + 120
    while not index_current(tmp_path) or build.building(tmp_path):  # ...while a detached process builds
        assert time.monotonic() < deadline, "the background build never finished"
        time.sleep(0.05)
    assert factstore.get_valid_at(tmp_path, 1) == factstore.scan_valid_at(tmp_path, 1)


def test_a_failed_background_build_brings_the_error_to_the_foreground(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(build, "BUILD_BUDGET", 0)
    monkeypatch.setattr(build, "start_build", lambda root: None)
    add(tmp_path, subject="a", valid_from=0, recorded_at=JAN)
    rel = tmp_path / "kb/facts/alice/2026-01.jsonl"
    good = rel.read_bytes()
    rel.write_bytes(good + b"{broken\n")
    assert len(factstore.get_valid_at(tmp_path, 1, "a")) == 1  # the files answer; the bad line is elsewhere
    assert build.main([str(tmp_path)]) == 2  # what the background build does, and it fails
    with pytest.raises(MemstackError, match=r"2026-01\.jsonl:2: I5 not valid JSON"):
        factstore.get_valid_at(tmp_path, 1, "a")
    rel.write_bytes(good)  # fixed: the files answer again, and the next build succeeds
    os.utime(rel, ns=(rel.stat().st_mtime_ns + 10**9,) * 2)
    assert len(factstore.get_valid_at(tmp_path, 1, "a")) == 1
    assert build.main([str(tmp_path)]) == 0 and index_current(tmp_path)


def test_a_line_written_another_way_is_still_found_and_closed(tmp_path: Path) -> None:
    import json

    add(tmp_path, subject="a", valid_from=0, recorded_at=JAN)
    spaced = facts.make(subject="b", predicate="decided", object="o", valid_from=0, recorded_at=JAN, agent="alice")
    rel = tmp_path / "kb/facts/alice/2026-01.jsonl"
    with open(rel, "a", encoding="utf-8") as handle:  # as another tool would write it: spaces, its own key order
        handle.write(json.dumps(dict(reversed(list(spaced.items())))) + "\n")
    add(tmp_path, subject="c", valid_from=0, recorded_at=JAN)
    before = rel.read_bytes().splitlines(keepends=True)
    [closed] = factstore.invalidate(tmp_path, subject="b", predicate="decided", valid_to=5, recorded_at=JAN)
    after = rel.read_bytes().splitlines(keepends=True)
    assert closed == {**spaced, "valid_to": 5, "expired_at": JAN}
    assert after[0] == before[0] and after[2] == before[2] and factfiles.read(tmp_path, str(rel.relative_to(
        tmp_path)))[1] == closed


def test_threads_and_processes_share_the_index_safely(tmp_path: Path) -> None:
    import subprocess
    import sys
    import threading

    add(tmp_path, subject="a", valid_from=0, recorded_at=JAN)
    errors: list[BaseException] = []

    def ask() -> None:
        try:
            for _ in range(30):
                assert factstore.get_valid_at(tmp_path, 1, "a")
        except BaseException as exc:  # noqa: BLE001 - collected and re-raised below
            errors.append(exc)

    writer = ("import sys; from pathlib import Path; from memstack.kb import factstore\n"
              "for n in range(20): factstore.add(Path(sys.argv[1]), subject='w', predicate='p', object=str(n),"
              " valid_from=0, recorded_at=1767225600000 + n, agent='bob')")
    other = subprocess.Popen([sys.executable, "-c", writer, str(tmp_path)])
    threads = [threading.Thread(target=ask) for _ in range(4)]
    for thread in threads:
        thread.start()
    for n in range(20):
        add(tmp_path, subject="a", object=str(n), valid_from=0, recorded_at=JAN + n)
    for thread in threads:
        thread.join()
    assert other.wait() == 0 and errors == []
    assert factstore.get_valid_at(tmp_path, 1) == factstore.scan_valid_at(tmp_path, 1)
    assert len(factstore.get_valid_at(tmp_path, 1)) == 41
