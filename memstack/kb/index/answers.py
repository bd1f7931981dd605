"""Answering from the fact index: the lines its rows point at, read and checked, and a query retried
when a line moved.

Each row keeps where its fact's line is (file, byte offset, length), not the line: an answer
reads the line from the file (`Lines`), so it is byte for byte what the file holds, and checks
that it is the fact the row names (the line ends where the row says and holds the row's id). A
line not where the index says (a file changed between the sync and the read: `Moved`) marks its
file for the next sync to read again, and `answer` asks once more, up to ATTEMPTS times; a
listing that streams cannot start again, so there it is an error (`listed_moved`).
"""

import os
import sqlite3
from collections import OrderedDict
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TypeVar

import orjson

from memstack.base import follow
from memstack.base.errors import MemstackError
from memstack.base.sqlitecache import writing
from memstack.kb import factfiles
from memstack.kb.facts import Fact
from memstack.kb.index import build, schema

T = TypeVar("T")


class Moved(Exception):
    """A line is not where the index says: its file changed after the index was synced."""

    def __init__(self, file_id: int) -> None:
        self.file_id = file_id


ROW = "facts.file_id, facts.pos, facts.len, facts.id"  # what `Lines.fact` takes
OPEN_FILES = 64  # file descriptors one query keeps open


class Lines:
    """Reads the facts the index's rows point at, each checked to be the fact its row names."""

    def __init__(self, store: Path, db: sqlite3.Connection) -> None:
        self.store = store
        self.paths: dict[int, str] = dict(db.execute("SELECT file_id, relpath FROM files"))
        self.fds: OrderedDict[int, int] = OrderedDict()

    def _fd(self, file_id: int) -> int:
        fd = self.fds.get(file_id)
        if fd is not None:
            self.fds.move_to_end(file_id)
            return fd
        try:
            fd = os.open(self.store / self.paths[file_id], os.O_RDONLY | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0))
        except (OSError, KeyError):
            raise Moved(file_id) from None
        self.fds[file_id] = fd
        while len(self.fds) > OPEN_FILES:
            os.close(self.fds.popitem(last=False)[1])
        return fd

    def _read(self, file_id: int, pos: int, length: int) -> bytes:
        data = os.pread(self._fd(file_id), length + 1, pos)
        if len(data) != length + 1 or data[-1] != 0x0A:
            raise Moved(file_id)
        return data

    @staticmethod
    def _parsed(data: bytes, file_id: int, fact_id: str) -> Fact:
        try:
            fact = orjson.loads(data)
        except orjson.JSONDecodeError:
            raise Moved(file_id) from None
        if not isinstance(fact, dict) or fact.get("id") != fact_id:
            raise Moved(file_id)
        return fact

    def fact(self, file_id: int, pos: int, length: int, fact_id: str) -> Fact:
        return self._parsed(self._read(file_id, pos, length), file_id, fact_id)

    def line(self, file_id: int, pos: int, length: int, fact_id: str) -> bytes:
        """The line a row points at, unparsed (a listing parses only what it hands out), checked to end
        where the row says and to hold the row's id: as memstack writes it (compact JSON), else parsed (a
        line another tool wrote, with spaces or escapes)."""
        data = self._read(file_id, pos, length)
        if b'"id":"%s"' % fact_id.encode() not in data:
            self._parsed(data, file_id, fact_id)
        return data[:-1]

    def close(self) -> None:
        for fd in self.fds.values():
            os.close(fd)
        self.fds.clear()


ATTEMPTS = 3  # a file that changes under a query this many times running is a writer gone wild


@contextmanager
def reading(store: Path, budget: int | None = None) -> Iterator[tuple[sqlite3.Connection, Lines] | None]:
    """`build.opened`'s index and a reader of the lines its rows point at (one snapshot of the rows for
    the whole block); None as `opened` says. A line not where its row says raises `Moved` inside it."""
    with build.opened(store, budget) as db:
        if db is None:
            yield None
            return
        lines = Lines(store, db)
        try:
            db.execute("BEGIN")  # one snapshot of the rows for the whole answer
            try:
                yield db, lines
            finally:
                db.execute("COMMIT")
        finally:
            lines.close()


def answer(store: Path, budget: int | None, ask: Callable[[sqlite3.Connection, Lines], T],
           from_files: Callable[[], T] | None = None) -> T:
    """`ask` the index (kept in step with the files), or `from_files` while it is far behind."""
    for _ in range(ATTEMPTS):
        with reading(store, budget) as found:
            if found is None:
                assert from_files is not None
                return from_files()
            try:
                return ask(*found)
            except Moved as moved:
                stale = moved.file_id
        db = schema.DB.cached(store)
        with writing(db):  # the next sync reads that file again
            follow.reread(db, stale)
    raise MemstackError(f"{store / factfiles.FACTS_DIR}: the fact files changed under {ATTEMPTS} queries running"
                        " (a writer that does not stop?) — try again")


def listed_moved(store: Path, file_id: int) -> MemstackError:
    """A line moved while a listing streamed: its file is marked for the next sync to re-read, and the
    listing stops (an answer half written cannot start again). Called once the listing's read is over."""
    db = schema.DB.cached(store)
    with writing(db):
        found = db.execute("SELECT relpath FROM files WHERE file_id = ?", (file_id,)).fetchone()
        follow.reread(db, file_id)
    return MemstackError(f"{store / (found[0] if found else factfiles.FACTS_DIR)}: changed while the facts were"
                         " listed — run the command again")


