"""The fact index's layout on disk: positions of lines in the fact files, not copies of the lines."""

import sqlite3
from pathlib import Path
from typing import Any

import pytest

from memstack.kb import factfiles, facts, factstore
from memstack.kb.index import catchup, queries, schema

JAN = 1_767_225_600_000  # 2026-01-01T00:00:00Z
REL = "kb/facts/alice/2026-01.jsonl"


def add(root: Path, subject: str, object: str = "o", predicate: str = "decided", valid_from: int = 0) -> dict[str, Any]:
    return factstore.add(root, subject=subject, predicate=predicate, object=object, valid_from=valid_from,
                         recorded_at=JAN, agent="alice")


def every_answer(root: Path) -> list[Any]:
    """What the index answers about every subject, and at a few instants, as of now and back then."""
    subjects = sorted({f["subject"] for f in factfiles.scan(root)})
    return [factstore.get_valid_at(root, ts) for ts in (1, 5, 10, 20)] + \
        [factstore.history(root, s) for s in subjects] + [factstore.recall(root, s, 10, 50) for s in subjects]


def reference(root: Path) -> list[Any]:
    subjects = sorted({f["subject"] for f in factfiles.scan(root)})
    return [factstore.scan_valid_at(root, ts) for ts in (1, 5, 10, 20)] + \
        [factstore.scan_history(root, s) for s in subjects] + [factstore.scan_recall(root, s, 10, 50) for s in subjects]


def test_the_index_holds_no_copy_of_the_lines(tmp_path: Path) -> None:
    add(tmp_path, "a", object="a distinctive object text")
    factstore.get_valid_at(tmp_path, 1)
    db = sqlite3.connect(tmp_path / schema.DB_NAME)
    try:
        columns = [row[1] for row in db.execute("PRAGMA table_info(facts)")]
        assert db.execute("PRAGMA user_version").fetchone()[0] == schema.VERSION
    finally:
        db.close()
    assert "line" not in columns and {"pos", "len"} <= set(columns)
    assert b"a distinctive object text" not in (tmp_path / schema.DB_NAME).read_bytes()


def test_the_open_facts_are_read_from_their_own_index_not_from_every_version(tmp_path: Path) -> None:
    """`binder list`'s disagreements and a promotion's supersede ask for open facts only: they read the
    index of the open facts, so they cost what is open, not every version ever recorded."""
    for n in range(3):
        add(tmp_path, "a", object=f"version {n}", valid_from=n)
    assert queries.crowded(tmp_path) == [("a", "decided")]  # three open facts of one key
    db = sqlite3.connect(tmp_path / schema.DB_NAME)
    try:
        plans = [" ".join(str(step[-1]) for step in db.execute("EXPLAIN QUERY PLAN " + query, args))
                 for query, args in ((queries.CROWDED, ()), (queries.OPEN_BY_KEY, ("a", "decided")))]
    finally:
        db.close()
    assert all("USING INDEX facts_open" in plan for plan in plans), plans


def test_an_index_of_the_old_layout_is_rebuilt_not_misread(tmp_path: Path) -> None:
    fact = add(tmp_path, "a", object="the truth")
    schema.DB.drop(tmp_path)
    # The layout of VERSION 2: every line copied into the index. This one claims another object.
    (tmp_path / ".memstack").mkdir(exist_ok=True)
    db = sqlite3.connect(tmp_path / schema.DB_NAME)
    data = (tmp_path / REL).read_bytes()
    st = (tmp_path / REL).stat()
    db.executescript(
        "CREATE TABLE files (file_id INTEGER PRIMARY KEY, relpath TEXT NOT NULL UNIQUE, ino INTEGER, size INTEGER,"
        " mtime_ns INTEGER, ctime_ns INTEGER, indexed INTEGER NOT NULL, crc INTEGER NOT NULL, adler INTEGER NOT NULL);"
        "CREATE TABLE facts (file_id INTEGER NOT NULL, id TEXT NOT NULL, subject TEXT NOT NULL,"
        " predicate TEXT NOT NULL, valid_from INTEGER NOT NULL, valid_to INTEGER, recorded_at INTEGER NOT NULL,"
        " expired_at INTEGER, line BLOB NOT NULL); PRAGMA user_version = 2;")
    import zlib

    db.execute("INSERT INTO files VALUES (1, ?, ?, ?, ?, ?, ?, ?, ?)",
               (REL, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns, len(data), zlib.crc32(data),
                zlib.adler32(data)))
    lie = data.replace(b"the truth", b"a stale copy").rstrip(b"\n")
    db.execute("INSERT INTO facts VALUES (1, ?, 'a', 'decided', 0, NULL, ?, NULL, ?)", (fact["id"], JAN, lie))
    db.commit()
    db.close()
    assert factstore.get_valid_at(tmp_path, 1) == [fact]
    assert factstore.history(tmp_path, "a") == [fact]
    db = sqlite3.connect(tmp_path / schema.DB_NAME)
    try:
        assert db.execute("PRAGMA user_version").fetchone()[0] == schema.VERSION
    finally:
        db.close()


def test_closings_move_the_lines_after_them_and_the_index_follows(tmp_path: Path) -> None:
    for name in "abcdefgh":
        add(tmp_path, name, valid_from=0)
    factstore.get_valid_at(tmp_path, 1)  # the index is built; from here on writes tell it what moved
    starts: list[int] = []
    real_rows = schema.rows

    def rows(relpath: str, data: bytes, start: int, end: int, file_id: int) -> Any:
        starts.append(start)
        return real_rows(relpath, data, start, end, file_id)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(schema, "rows", rows)
        # Closings in the middle and at both ends of one file, one and several in one rewrite.
        factstore.invalidate(tmp_path, subject="c", predicate="decided", valid_to=5, recorded_at=JAN)
        factstore.close_many(tmp_path, [factstore.Closing(f["id"], 10, JAN) for f in factfiles.scan(tmp_path)
                                        if f["subject"] in ("a", "e", "h")])
        add(tmp_path, "i", valid_from=3)
        factstore.capture(tmp_path, subject="b", predicate="decided", object="new", valid_from=7, recorded_at=JAN,
                          agent="alice", contradicts=True)
        assert every_answer(tmp_path) == reference(tmp_path)
    assert starts == []  # all of it from what the writes told the index: no file read again


def test_a_line_moved_behind_the_index_is_found_again(tmp_path: Path) -> None:
    for name in "abc":
        add(tmp_path, name)
    factstore.get_valid_at(tmp_path, 1)
    path = tmp_path / REL
    # Lines written by hand in another spelling: every line after the first moves.
    lines = path.read_bytes().splitlines()
    rewritten = [line.replace(b'"subject":', b'"subject": ') for line in lines]
    path.write_bytes(b"\n".join(rewritten) + b"\n")
    # The index is not told, and its sync does not look (as in a write between a sync and a read).
    real_sync, calls = catchup.sync, []

    def late_sync(db: Any, root: Path, budget: Any = None) -> bool:
        calls.append(1)
        return True if len(calls) == 1 else real_sync(db, root, budget)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(catchup, "sync", late_sync)
        assert factstore.get_valid_at(tmp_path, 1) == factstore.scan_valid_at(tmp_path, 1)
    assert len(calls) == 2  # the misplaced line sent the query back to sync once
    assert [f["subject"] for f in factstore.get_valid_at(tmp_path, 1)] == ["a", "b", "c"]


def test_many_files_and_ids_located_where_they_are(tmp_path: Path) -> None:
    made = []
    for month in range(3):
        for agent in ("alice", "bob"):
            made.append(factstore.add(tmp_path, subject=f"s{month}", predicate="p", object=agent, valid_from=0,
                                      recorded_at=JAN + month * 31 * 86_400_000, agent=agent))
    factstore.get_valid_at(tmp_path, 1)
    where = queries.locate(tmp_path, [f["id"] for f in made] + ["no-such-id"])
    assert {i: (rel, f) for i, (rel, f) in where.items()} == {f["id"]: (factfiles.relpath_for(f), f) for f in made}
    assert facts.is_open(made[0])
