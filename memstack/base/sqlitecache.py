"""A derived SQLite index of a store (a cache of its files, never the truth), opened one way for all.

An index declares its file (store-relative), its layout version and the statements that make
its tables (`Database`); this module opens it, the same way for the fact index and the search index:

- One open connection per store and process, kept (opening a WAL database costs ~2 ms, as its
  -wal file is made anew whenever no connection holds it): checked against the file's inode (the
  index may have been deleted) and the process id (a connection must not cross a fork); the
  CACHE_SIZE most recently used stay open. `guard` lets one thread at a time use them.
- The journal is WAL, kept in the file: a query never waits for a writer, not even for a build that
  takes seconds (a rollback journal locks readers out once a big transaction spills to disk).
  synchronous=NORMAL: a cache, a power cut may lose its last commits, no more.
- `PRAGMA user_version` holds the layout version: a file of another version has its tables dropped
  and made anew, on first use (under `writing`, and under the index's lock file if it has one).
- `repaired`: a corrupt file (sqlite3.DatabaseError itself) is deleted and built again; locked,
  I/O or full-disk errors are not ours to repair and are reported (MemstackError).
- `writing`: one write transaction, taken at once (BEGIN IMMEDIATE).
- `settle`: a long-running process (the MCP server) calls it after each request, so that a request
  that failed half way cannot leave a transaction open on a kept connection for the next one.
"""

import os
import sqlite3
import threading
from collections import OrderedDict
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TypeVar

from memstack.base import files, locks
from memstack.base.errors import MemstackError

T = TypeVar("T")
CACHE_SIZE = 8  # open connections kept per index (stores a process uses at once)
LOCK_TIMEOUT = 600  # seconds a process waits for an index's lock file
_DATABASES: "list[Database]" = []  # every kind of index this process knows (settle)


@contextmanager
def writing(db: sqlite3.Connection) -> Iterator[None]:
    """One write transaction, taken at once (other processes wait for it, then see its result)."""
    db.execute("BEGIN IMMEDIATE")
    try:
        yield
    except BaseException:
        db.execute("ROLLBACK")
        raise
    db.execute("COMMIT")


def settle() -> None:
    """Every kept connection of every index out of any transaction a failed request left open."""
    for database in _DATABASES:
        database.settle()


class Database:
    """One kind of derived index: `<store>/<name>`, of layout `version`, made by `schema`.

    `what` names it in errors ("fact index"), `source` says what rebuilds it ("the fact files on the
    next query"); `lock`, a lock of `.memstack/locks/`, if its writers also serialize on a lock file
    (held while the layout is made and while the file is deleted).
    """

    def __init__(self, name: str, version: int, schema: Sequence[str], *, what: str, source: str,
                 lock: str | None = None) -> None:
        self.name, self.version, self.schema = name, version, tuple(schema)
        self.what, self.source, self.lock = what, source, lock
        self.guard = threading.RLock()
        self._open: OrderedDict[Path, tuple[int, int, sqlite3.Connection]] = OrderedDict()
        _DATABASES.append(self)

    def settle(self) -> None:
        """Roll back a transaction left open on a kept connection (by a request that failed half way);
        the connections another thread is using are left to it."""
        if not self.guard.acquire(blocking=False):
            return
        try:
            for pid, _, db in self._open.values():
                if pid == os.getpid() and db.in_transaction:
                    db.execute("ROLLBACK")
        finally:
            self.guard.release()

    def path(self, store: Path) -> Path:
        return store / self.name

    def cached(self, store: Path) -> sqlite3.Connection:
        """This process's connection to the store's index (opened, and its layout made, if need be)."""
        with self.guard:
            entry = self._open.get(store)
            try:
                inode = os.stat(self.path(store)).st_ino
            except (FileNotFoundError, NotADirectoryError):  # not there (`connect` says why if it cannot be)
                inode = None
            if entry is not None and entry[:2] == (os.getpid(), inode):
                self._open.move_to_end(store)
                return entry[2]
            self._uncache(store)
            db = self.connect(store)
            self._open[store] = (os.getpid(), os.stat(self.path(store)).st_ino, db)
            while len(self._open) > CACHE_SIZE:
                self._uncache(next(iter(self._open)))
            return db

    def _uncache(self, store: Path) -> None:
        entry = self._open.pop(store, None)
        if entry is not None and entry[0] == os.getpid():
            entry[2].close()

    def connect(self, store: Path) -> sqlite3.Connection:
        """A new connection of its own (the caller closes it), the layout made if the file has another."""
        path = self.path(store)
        files.local_dir(store, "")
        if path.is_dir() or path.is_symlink():
            raise MemstackError(f"{path}: not the {self.what} file memstack keeps there (a folder or a link) —"
                                f" remove it; the index is rebuilt from {self.source}")
        db = sqlite3.connect(path, timeout=60, isolation_level=None, check_same_thread=False)
        try:
            db.execute("PRAGMA synchronous=NORMAL")
            if db.execute("PRAGMA user_version").fetchone()[0] != self.version:
                with self.held(store):
                    db.execute("PRAGMA journal_mode=WAL")
                    with writing(db):
                        if db.execute("PRAGMA user_version").fetchone()[0] != self.version:
                            self._make(db)
        except BaseException:
            db.close()
            raise
        return db

    def _make(self, db: sqlite3.Connection) -> None:
        """Drop every table (virtual ones first: they drop their own shadow tables), make the layout."""
        for (name,) in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'"
                                  " AND sql LIKE 'CREATE VIRTUAL TABLE%'").fetchall():
            db.execute(f'DROP TABLE IF EXISTS "{name}"')
        for (name,) in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'"
                                  " AND name NOT LIKE 'sqlite%'").fetchall():
            db.execute(f'DROP TABLE IF EXISTS "{name}"')
        for sql in self.schema:
            db.execute(sql)
        db.execute(f"PRAGMA user_version = {self.version}")

    @contextmanager
    def held(self, store: Path) -> Iterator[None]:
        """The index's lock file, if it has one (waited for up to LOCK_TIMEOUT seconds)."""
        if self.lock is None:
            yield
            return
        try:
            with locks.acquire(files.lock_path(store, self.lock), wait=LOCK_TIMEOUT, poll=0.005):
                yield
        except locks.Busy:
            raise MemstackError(f"{self.path(store)}: another memstack process has held the {self.what}'s lock"
                                " for over 10 minutes") from None

    def drop(self, store: Path) -> None:
        """Delete the index (it is rebuilt on next use)."""
        with self.guard, self.held(store):
            self._uncache(store)
            for suffix in ("", "-wal", "-shm"):
                (store / (self.name + suffix)).unlink(missing_ok=True)

    def repaired(self, store: Path, use: Callable[[sqlite3.Connection], T]) -> tuple[sqlite3.Connection, T]:
        """The cached connection and what `use` made of it; a corrupt index is dropped and `use` runs
        again on a new one (an index is only a cache)."""
        with self.guard:
            try:
                db = self.cached(store)
                return db, use(db)
            except sqlite3.DatabaseError as exc:
                if type(exc) is not sqlite3.DatabaseError:  # locked, I/O, full disk: not ours to repair
                    raise MemstackError(f"{self.path(store)}: {exc}") from None
            self.drop(store)
            db = self.cached(store)
            return db, use(db)

    @contextmanager
    def read_only(self, store: Path) -> Iterator[sqlite3.Connection | None]:
        """The index as it is, opened read-only (neither made nor synced): None if there is no file,
        or one of another layout version. sqlite3.DatabaseError if it is unreadable."""
        path = self.path(store)
        if not path.is_file():
            yield None
            return
        db = sqlite3.connect(f"{path.as_uri()}?mode=ro", uri=True, timeout=5)
        try:
            yield db if db.execute("PRAGMA user_version").fetchone()[0] == self.version else None
        finally:
            db.close()
