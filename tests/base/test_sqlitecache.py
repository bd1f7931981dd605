"""The SQLite cache's kept connections (memstack/base/sqlitecache.py): a failed request leaves none in a
transaction for the next."""

import sqlite3
from pathlib import Path

from memstack.base import sqlitecache

DB = sqlitecache.Database(".memstack/test.sqlite3", 1, ("CREATE TABLE t (x INTEGER)",), what="test index",
                          source="nothing")


def test_settle_rolls_back_what_a_failed_request_left_open(tmp_path: Path) -> None:
    db = DB.cached(tmp_path)
    db.execute("BEGIN")
    db.execute("INSERT INTO t VALUES (1)")  # a request that failed here, its transaction never ended
    sqlitecache.settle()
    assert not db.in_transaction
    db.execute("BEGIN")  # the next request can start its own
    db.execute("COMMIT")
    assert DB.cached(tmp_path).execute("SELECT count(*) FROM t").fetchone() == (0,)


def test_settle_leaves_a_connection_another_thread_is_using_alone(tmp_path: Path) -> None:
    import threading

    db = DB.cached(tmp_path)
    held, done = threading.Event(), threading.Event()

    def other() -> None:
        with DB.guard:
            db.execute("BEGIN")
            held.set()
            done.wait(5)
            db.execute("COMMIT")

    thread = threading.Thread(target=other)
    thread.start()
    held.wait(5)
    sqlitecache.settle()
    assert db.in_transaction
    done.set()
    thread.join()
    assert isinstance(db, sqlite3.Connection) and not db.in_transaction
