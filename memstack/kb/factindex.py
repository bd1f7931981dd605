"""The fact store's query index: SQLite in `<store>/.memstack/facts.sqlite3`; derived, never the truth.

Every query first brings the index up to date with the fact files, cheaply: a
file whose (inode, size, mtime, ctime) is unchanged is skipped (ctime too: an
edit in place that keeps the size and puts the mtime back still moves it); a
file that grew with the bytes already indexed intact (their CRC-32 and Adler-32
still match) is read from where the index stopped; any other change re-reads
that file whole; a file that is gone drops its rows. A write made by memstack
tells the index what it changed (`note_append`, `note_rewrite`), so the next
query re-reads nothing. Deleting `.memstack/` is always safe: the next query rebuilds it.

Each row keeps where its fact's line is (file, byte offset, length), not the
line: an answer reads the line from the file, so it is byte for byte what the
file holds, and checks that it is the fact the row names (the line ends where
the row says and holds the row's id). A line not where the index says (a file
changed between the sync and the read) makes the query sync again and retry.
An index of another layout (say, one that kept copies of the lines) is dropped
and rebuilt on first use (VERSION).

When the index is far behind (a fresh clone, a large pull: more than
BUILD_BUDGET bytes to read), a query about one subject is answered from the
files instead (a byte search, then parsing only the matching lines), and a
detached `python -m memstack.factindex STORE` catches the index up. The
journal is WAL, so no query ever waits for that build.
"""

import os
import sqlite3
from collections import OrderedDict
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager, nullcontext
from pathlib import Path
from typing import Any, TypeVar

import orjson

from memstack.base import files, follow, progress, sqlitecache
from memstack.base.errors import MemstackError
from memstack.base.sqlitecache import writing
from memstack.kb import factfiles, facts
from memstack.kb.facts import Fact

DB_NAME = ".memstack/facts.sqlite3"
VERSION = 3  # an index written by another layout version is dropped and rebuilt

_TABLES = (
    follow.files_table(),
    "CREATE TABLE facts (file_id INTEGER NOT NULL, id TEXT NOT NULL, subject TEXT NOT NULL, predicate TEXT NOT NULL,"
    " valid_from INTEGER NOT NULL, valid_to INTEGER, recorded_at INTEGER NOT NULL, expired_at INTEGER,"
    " pos INTEGER NOT NULL, len INTEGER NOT NULL)",
)
_INDEXES = (
    "CREATE INDEX IF NOT EXISTS facts_by_subject ON facts (subject, predicate)",
    "CREATE INDEX IF NOT EXISTS facts_by_id ON facts (id)",
    "CREATE INDEX IF NOT EXISTS facts_by_file ON facts (file_id, pos)",
)
_INSERT = "INSERT INTO facts VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
_INT64 = range(-(2**63), 2**63)

T = TypeVar("T")


# --- opening and syncing -------------------------------------------------------------------------

DB = sqlitecache.Database(DB_NAME, VERSION, (*_TABLES, *_INDEXES), what="fact index",
                          source="the fact files on the next query")


@contextmanager
def opened(store: Path, budget: int | None = None) -> Iterator[sqlite3.Connection | None]:
    """The index, up to date with the fact files (built on first use).

    With a `budget`, None instead when catching up would mean reading more than
    `budget` bytes of fact files (a fresh clone, a large pull): a background
    process catches the index up, and the caller answers from the files meanwhile.
    """
    with DB.guard:
        db, current = DB.repaired(store, lambda db: sync(db, store, None if _last_build_failed(store) else budget))
        try:
            yield db if current else None
        finally:
            if not current:
                start_build(store)  # once the caller has its answer: the build does not compete with it


def drop(store: Path) -> None:
    """Delete the index (it is rebuilt on the next query)."""
    DB.drop(store)


def sync(db: sqlite3.Connection, store: Path, budget: int | None = None) -> bool:
    """Bring the index up to date with the fact files, re-reading only what changed.

    Returns False, having done nothing, if that would read more than `budget` bytes.
    """
    known = follow.known(db)
    changed, gone = follow.stale(known, factfiles.list_files(store))
    if not changed and not gone:
        return True
    if budget is not None and sum(follow.cost(known.get(rel), st) for rel, st in changed) > budget:
        return False
    with writing(db):
        known = follow.known(db)  # again under the write lock: another process may have caught up meanwhile
        changed, gone = follow.stale(known, factfiles.list_files(store))
        bulk = not known and len(changed) > 0
        if bulk:  # a first build: load, then index (several times faster than indexing row by row)
            for (name,) in db.execute("SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'facts'"
                                      ).fetchall():
                db.execute(f'DROP INDEX "{name}"')
        for relpath in gone:
            _forget(db, known[relpath].file_id)
        total = sum(follow.cost(known.get(rel), st) for rel, st in changed)
        with (progress.bar(total, "indexing facts", "B") if total >= SHOW_PROGRESS else nullcontext()) as shown:
            for relpath, st in changed:
                _refresh(db, store, relpath, known.get(relpath))
                if shown is not None:
                    shown.update(follow.cost(known.get(relpath), st))
        if bulk:
            for sql in _INDEXES:
                db.execute(sql)
    return True


# --- catching up in the background ---------------------------------------------------------------

SHOW_PROGRESS = 2**20  # bytes to index from which a bar is drawn (under a terminal): a catch-up of a few
# appended lines never pays for importing tqdm
BUILD_BUDGET = 32 * 2**20  # bytes of fact files a query indexes itself (~1 s) before it answers from the files
_BUILD_LOCK = ".memstack/locks/facts-index-build.lock"
_BUILD_FAILED = ".memstack/facts-index-build.failed"


def start_build(store: Path) -> None:
    """Catch the index up in a detached process, unless one is already at it."""
    if building(store):
        return
    import subprocess
    import sys

    # Through a short-lived middle process (a shell that starts the build in the background and exits at
    # once, ~2 ms), so the build is nobody's child to reap (no zombie in a long-running server, no warning
    # about a child left running), in a session of its own.
    subprocess.run(["/bin/sh", "-c", '"$@" &', "sh", sys.executable, "-m", "memstack.kb.factindex", str(store)],
                   stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False,
                   start_new_session=True)


def building(store: Path) -> bool:
    from filelock import FileLock, Timeout

    files.local_dir(store, "locks")
    try:
        with FileLock(str(store / _BUILD_LOCK)).acquire(timeout=0):
            return False
    except Timeout:
        return True


def _last_build_failed(store: Path) -> bool:
    """A background build failed on the files as they are now: catch up in the foreground and say why."""
    try:
        failed = (store / _BUILD_FAILED).stat().st_mtime_ns
    except FileNotFoundError:
        return False
    return all(st.st_mtime_ns <= failed for _, st in factfiles.list_files(store))


def main(argv: Sequence[str] | None = None) -> int:
    """`python -m memstack.factindex STORE`: bring the store's index up to date (what start_build runs)."""
    import sys

    from filelock import FileLock, Timeout

    store = Path((sys.argv[1:] if argv is None else argv)[0]).resolve()
    files.local_dir(store, "locks")
    try:
        lock = FileLock(str(store / _BUILD_LOCK)).acquire(timeout=0)
    except Timeout:
        return 0  # another build is at it
    with lock:
        try:
            with opened(store):
                pass
        except MemstackError as exc:
            (store / _BUILD_FAILED).write_text(exc.message + "\n", encoding="utf-8")
            return 2
        (store / _BUILD_FAILED).unlink(missing_ok=True)
    return 0


def _forget(db: sqlite3.Connection, file_id: int) -> None:
    db.execute("DELETE FROM facts WHERE file_id = ?", (file_id,))
    follow.forget(db, file_id)


def _refresh(db: sqlite3.Connection, store: Path, relpath: str, known: follow.Known | None) -> None:
    got = follow.read(store / relpath)
    if got is None:
        if known is not None:
            _forget(db, known.file_id)
        return
    data, st = got
    end = data.rfind(b"\n") + 1  # an unfinished last line (a write in progress) waits for the next sync
    if known is None:
        known = follow.add(db, relpath)
    elif not known.intact(data, end):  # changed other than by growing: read it again whole
        known = known.emptied()
        db.execute("DELETE FROM facts WHERE file_id = ?", (known.file_id,))
    try:
        db.executemany(_INSERT, _rows(relpath, data, known.indexed, end, known.file_id))
    except OverflowError:  # an integer beyond 64 bits: find the line to name it
        for number, line in enumerate(data[:end].split(b"\n")[:-1], start=1):
            if line_problem(line):
                raise MemstackError(f"{relpath}:{number}: I5 {line_problem(line)}") from None
        raise
    follow.save(db, known.extended(memoryview(data)[known.indexed:end]), st, len(data))


def _rows(relpath: str, data: bytes, start: int, end: int, file_id: int) -> Iterator[tuple[Any, ...]]:
    number = data.count(b"\n", 0, start)
    loads = orjson.loads
    pos = start
    for line in data[start:end].split(b"\n")[:-1]:
        number += 1
        at, pos = pos, pos + len(line) + 1
        try:
            fact = loads(line)
            row = (file_id, fact["id"], fact["subject"], fact["predicate"], fact["valid_from"], fact["valid_to"],
                   fact["recorded_at"], fact["expired_at"], at, len(line))
        except (orjson.JSONDecodeError, KeyError, TypeError):
            row = None
        # The fast check, once per line of a million; `_problem` says what exactly is wrong.
        if row is None or not (type(row[1]) is str and type(row[2]) is str and type(row[3]) is str
                               and type(row[4]) is int and type(row[6]) is int
                               and (row[5] is None or type(row[5]) is int)
                               and (row[7] is None or type(row[7]) is int)):
            raise MemstackError(f"{relpath}:{number}: I5 {line_problem(line)}")
        yield row


def _row(file_id: int, fact: Fact, pos: int, length: int) -> tuple[Any, ...]:
    return (file_id, fact["id"], fact["subject"], fact["predicate"], fact["valid_from"], fact["valid_to"],
            fact["recorded_at"], fact["expired_at"], pos, length)


def line_problem(line: bytes) -> str | None:
    """What the index cannot take in a line (the full schema check is `memstack check`'s)."""
    if not line.strip():
        return "empty line — a fact file holds one JSON fact per line"
    try:
        fact = orjson.loads(line)
    except orjson.JSONDecodeError:
        return "not valid JSON — a fact file holds one JSON fact per line"
    if not isinstance(fact, dict):
        return "not a fact: a line must be a JSON object"
    for key in ("id", "subject", "predicate"):
        if type(fact.get(key)) is not str:
            return f"not a fact: {key} must be text (schemas/fact.schema.json)"
    for key, nullable in (("valid_from", False), ("recorded_at", False), ("valid_to", True), ("expired_at", True)):
        value = fact.get(key)
        if not ((nullable and value is None and key in fact) or (type(value) is int and value in _INT64)):
            return f"not a fact: {key} must be integer milliseconds" + (" or null" if nullable else "") \
                + " (schemas/fact.schema.json)"
    return None


# --- what writes tell the index ------------------------------------------------------------------

@contextmanager
def _if_current(store: Path, relpath: str, before: os.stat_result | None
                ) -> Iterator[tuple[Any, follow.Known | None]]:
    """The index and its row for `relpath`, if the index exists and held the file as it was `before`."""
    if not (store / DB_NAME).exists():
        yield None, None
        return
    try:
        db = DB.connect(store)
        db.execute("PRAGMA busy_timeout = 500")  # busy (a build under way): leave it to the next sync
    except sqlite3.Error:
        yield None, None  # the next query repairs or rebuilds it
        return
    try:
        with writing(db):
            row = follow.known(db).get(relpath)
            if before is None:
                current = row is None
            else:
                current = row is not None and not follow.moved(row, before) and row.indexed == before.st_size
            yield (db, row) if current else (None, None)
    except sqlite3.Error:
        pass  # rolled back: the file's signature no longer matches, so the next query re-reads it
    finally:
        db.close()


def note_append(store: Path, relpath: str, before: os.stat_result | None, after: os.stat_result,
                lines: Sequence[bytes], new: Sequence[Fact]) -> None:
    """Record facts just appended to `relpath` (whose stat was `before`, is now `after`)."""
    with _if_current(store, relpath, before) as (db, known):
        if db is None:
            return
        data = b"".join(lines)
        if known is None:
            known = follow.add(db, relpath)
        rows, pos = [], known.indexed
        for fact, line in zip(new, lines, strict=True):
            rows.append(_row(known.file_id, fact, pos, len(line) - 1))
            pos += len(line)
        db.executemany(_INSERT, rows)
        follow.save(db, known.extended(data), after, known.indexed + len(data))


def note_rewrite(store: Path, relpath: str, before: os.stat_result, after: os.stat_result, data: bytes,
                 closed: Iterable[tuple[int, int, bytes, Fact]]) -> None:
    """Record facts just closed by rewriting `relpath` (now `data`): each closed fact's old line was
    `data_before[start:end]` (its newline at `end`), and is now `line` (with its newline).

    The lines after a closed one moved by the difference in length: their rows move with them.
    New positions are written negated first (-pos - 1), so a row moved once is never moved again.
    """
    with _if_current(store, relpath, before) as (db, known):
        if db is None or known is None:
            return
        spans = sorted(closed, key=lambda span: span[0])
        shift = 0
        for number, (start, end, line, fact) in enumerate(spans):
            db.execute("UPDATE facts SET valid_to = ?, expired_at = ?, pos = ?, len = ? WHERE file_id = ? AND pos = ?",
                       (fact["valid_to"], fact["expired_at"], -(start + shift) - 1, len(line) - 1, known.file_id,
                        start))
            shift += len(line) - (end + 1 - start)
            upto = spans[number + 1][0] if number + 1 < len(spans) else 2**62
            if shift:
                db.execute("UPDATE facts SET pos = -(pos + ?) - 1 WHERE file_id = ? AND pos > ? AND pos < ?",
                           (shift, known.file_id, start, upto))
        db.execute("UPDATE facts SET pos = -pos - 1 WHERE file_id = ? AND pos < 0", (known.file_id,))
        follow.save(db, known.emptied().extended(data), after, len(data))


# --- queries -------------------------------------------------------------------------------------

_LISTING = " ORDER BY subject, valid_from, recorded_at, id"
_VALID = "valid_from <= :ts AND (valid_to IS NULL OR valid_to > :ts)"
# As of transaction time X: recorded by X, and a closing recorded after X not yet known.
_VALID_AS_OF = ("recorded_at <= :as_of AND valid_from <= :ts"
                " AND (valid_to IS NULL OR valid_to > :ts OR expired_at > :as_of)")
# SQLite's lower() folds ASCII only; Python's str.lower() folds no other character to an ASCII
# letter of these words (only KELVIN SIGN folds to ASCII, to 'k'), so the two agree.
_RECALL = ("subject = :subject AND lower(predicate) IN ({}) AND " + _VALID
           + " ORDER BY valid_from DESC, recorded_at DESC, id DESC LIMIT :limit"
           ).format(", ".join(f"'{p}'" for p in facts.RECALL_PREDICATES))


LOCATE_FROM_FILES = 16  # up to this many ids are found in the files while the index catches up


class _Moved(Exception):
    """A line is not where the index says: its file changed after the index was synced."""

    def __init__(self, file_id: int) -> None:
        self.file_id = file_id


_ROW = "facts.file_id, facts.pos, facts.len, facts.id"  # what `_Lines.fact` takes
_OPEN_FILES = 64  # file descriptors one query keeps open


class _Lines:
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
            raise _Moved(file_id) from None
        self.fds[file_id] = fd
        while len(self.fds) > _OPEN_FILES:
            os.close(self.fds.popitem(last=False)[1])
        return fd

    def _read(self, file_id: int, pos: int, length: int) -> bytes:
        data = os.pread(self._fd(file_id), length + 1, pos)
        if len(data) != length + 1 or data[-1] != 0x0A:
            raise _Moved(file_id)
        return data

    @staticmethod
    def _parsed(data: bytes, file_id: int, fact_id: str) -> Fact:
        try:
            fact = orjson.loads(data)
        except orjson.JSONDecodeError:
            raise _Moved(file_id) from None
        if not isinstance(fact, dict) or fact.get("id") != fact_id:
            raise _Moved(file_id)
        return fact  # type: ignore[no-any-return]

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


_ATTEMPTS = 3  # a file that changes under a query this many times running is a writer gone wild


@contextmanager
def _reading(store: Path, budget: int | None = None) -> Iterator[tuple[sqlite3.Connection, _Lines] | None]:
    """`opened`'s index and a reader of the lines its rows point at; None as `opened` says.

    A line not where its row says (`_Moved`, raised inside the block) marks its file for a
    re-read, and the block runs again on the synced index: use it as `for attempt in _attempts()`.
    """
    with opened(store, budget) as db:
        if db is None:
            yield None
            return
        lines = _Lines(store, db)
        try:
            db.execute("BEGIN")  # one snapshot of the rows for the whole answer
            try:
                yield db, lines
            finally:
                db.execute("COMMIT")
        finally:
            lines.close()


def _answer(store: Path, budget: int | None, ask: Callable[[sqlite3.Connection, _Lines], T],
            from_files: Callable[[], T] | None = None) -> T:
    """`ask` the index (kept in step with the files), or `from_files` while it is far behind."""
    for _ in range(_ATTEMPTS):
        with _reading(store, budget) as found:
            if found is None:
                assert from_files is not None
                return from_files()
            try:
                return ask(*found)
            except _Moved as moved:
                stale = moved.file_id
        db = DB.cached(store)
        with writing(db):  # the next sync reads that file again
            follow.reread(db, stale)
    raise MemstackError(f"{store / factfiles.FACTS_DIR}: the fact files changed under {_ATTEMPTS} queries running"
                        " (a writer that does not stop?) — try again")


def _select(store: Path, where: str, params: dict[str, Any],
            from_files: Callable[[], list[Fact]] | None = None) -> list[Fact]:
    """Facts from the index; if it is far behind and `from_files` is given, that answers instead."""
    def ask(db: sqlite3.Connection, lines: _Lines) -> list[Fact]:
        return [lines.fact(*row) for row in db.execute(f"SELECT {_ROW} FROM facts WHERE {where}", params)]

    return _answer(store, None if from_files is None else BUILD_BUDGET, ask, from_files)


# The last subject answered from the files, kept while every fact file is as it was (the index's own test
# of a file unchanged): a command that asks twice (recall, then what the subject holds besides) searches once.
_LAST_ABOUT: list[Any] = [None, []]


def _about(store: Path, subject: str) -> list[Fact]:
    import copy

    key = (store, subject, [(relpath, follow.signature(st)) for relpath, st in factfiles.list_files(store)])
    with DB.guard:
        if _LAST_ABOUT[0] == key:
            return copy.deepcopy(_LAST_ABOUT[1])  # type: ignore[no-any-return]
    found = [f for _, f in factfiles.scan_for(store, [subject]) if f["subject"] == subject]
    with DB.guard:
        _LAST_ABOUT[:] = [key, copy.deepcopy(found)]
    return found


def valid_at(store: Path, ts: int, subject: str | None = None, as_of: int | None = None) -> list[Fact]:
    where = _VALID if as_of is None else _VALID_AS_OF
    if subject is not None:
        where = "subject = :subject AND " + where
    from_files = None if subject is None else (lambda: facts.valid_at(_about(store, subject), ts, subject, as_of))
    found = _select(store, where + _LISTING, {"ts": ts, "subject": subject, "as_of": as_of}, from_files)
    if as_of is None:
        return found
    return [f for f in (facts.believed_at(f, as_of) for f in found) if f is not None]  # (a no-op on from_files')


def each_valid_at(store: Path, ts: int, as_of: int | None = None) -> Iterator[Fact]:
    """`valid_at` of every subject, one fact at a time (a listing of the whole store, never held whole).

    Lines are read as the rows come; a line moved meanwhile cannot send an answer half written
    back to the start, so it is an error (its file is marked, the next query re-reads it).
    """
    where = (_VALID if as_of is None else _VALID_AS_OF) + _LISTING
    try:
        with _reading(store) as found:
            assert found is not None
            db, lines = found
            for row in db.execute(f"SELECT {_ROW} FROM facts WHERE {where}", {"ts": ts, "as_of": as_of}):
                fact = lines.fact(*row)
                if as_of is not None:
                    fact = facts.believed_at(fact, as_of)  # type: ignore[assignment]
                    if fact is None:
                        continue
                yield fact
    except _Moved as moved:
        raise _listed_moved(store, moved.file_id) from None


def _listed_moved(store: Path, file_id: int) -> MemstackError:
    """A line moved while a listing streamed: its file is marked for the next sync to re-read, and the
    listing stops (an answer half written cannot start again). Called once the listing's read is over."""
    db = DB.cached(store)
    with writing(db):
        found = db.execute("SELECT relpath FROM files WHERE file_id = ?", (file_id,)).fetchone()
        follow.reread(db, file_id)
    return MemstackError(f"{store / (found[0] if found else factfiles.FACTS_DIR)}: changed while the facts were"
                         " listed — run the command again")


def history(store: Path, subject: str) -> list[Fact]:
    return _select(store, "subject = :subject" + _LISTING, {"subject": subject},
                   lambda: facts.history(_about(store, subject), subject))


def versions(store: Path, subject: str, predicate: str) -> list[Fact]:
    """Every fact of one subject and predicate, open or closed, oldest first."""
    return _select(store, "subject = :subject AND predicate = :predicate" + _LISTING,
                   {"subject": subject, "predicate": predicate},
                   lambda: [f for f in facts.history(_about(store, subject), subject) if f["predicate"] == predicate])


def open_by_key(store: Path, keys: Iterable[tuple[str, str]]) -> dict[tuple[str, str], list[Fact]]:
    """The open facts of many (subject, predicate) keys, oldest first, in one pass over one connection."""
    wanted = list(keys)

    def ask(db: sqlite3.Connection, lines: _Lines) -> dict[tuple[str, str], list[Fact]]:
        query = f"SELECT {_ROW} FROM facts WHERE subject = ? AND predicate = ? AND valid_to IS NULL" + _LISTING
        return {key: [lines.fact(*row) for row in db.execute(query, key)] for key in wanted}

    return _answer(store, None, ask)


def crowded(store: Path) -> list[tuple[str, str]]:
    """The (subject, predicate) keys holding two or more open facts: where a disagreement can be."""
    with opened(store) as db:
        assert db is not None
        rows = db.execute("SELECT subject, predicate FROM facts WHERE valid_to IS NULL GROUP BY subject, predicate"
                          " HAVING count(*) > 1 ORDER BY subject, predicate").fetchall()
    return [(subject, predicate) for subject, predicate in rows]


# --- the same queries walked row by row, for a listing to page (pages.py): nothing held but the page ---

_RECALL_ALL = _RECALL.replace(" LIMIT :limit", "")
_COLUMNS = f"subject, valid_from, recorded_at, {_ROW}"


def _walk(store: Path, where: str, params: dict[str, Any],
          from_files: Callable[[], list[Fact]] | None) -> Iterator[facts.Row]:
    """The rows of `where` (ordered there) one at a time, each with its line read but not parsed; with
    `from_files`, the files answer while the index is far behind (as `_select`)."""
    try:
        with _reading(store, None if from_files is None else BUILD_BUDGET) as found:
            if found is None:
                assert from_files is not None
                answer = from_files()  # inside: the background build starts once this is done
            else:
                db, lines = found
                for subject, valid_from, recorded_at, file_id, pos, length, ident in db.execute(
                        f"SELECT {_COLUMNS} FROM facts WHERE {where}", params):
                    yield facts.Row(subject, valid_from, recorded_at, ident, lines.line(file_id, pos, length, ident))
                return
    except _Moved as moved:
        raise _listed_moved(store, moved.file_id) from None
    for fact in answer:
        yield facts.Row.of(fact)


def valid_at_rows(store: Path, ts: int, subject: str | None = None, as_of: int | None = None) -> Iterator[facts.Row]:
    """`valid_at`'s facts in listing order, as rows (with `as_of`, `Row.fact(as_of)` gives them as believed)."""
    where = _VALID if as_of is None else _VALID_AS_OF
    if subject is not None:
        where = "subject = :subject AND " + where
    return _walk(store, where + _LISTING, {"ts": ts, "subject": subject, "as_of": as_of},
                 None if subject is None else (lambda: facts.valid_at(_about(store, subject), ts, subject, as_of)))


def history_rows(store: Path, subject: str) -> Iterator[facts.Row]:
    return _walk(store, "subject = :subject" + _LISTING, {"subject": subject},
                 lambda: facts.history(_about(store, subject), subject))


def recall_rows(store: Path, subject: str, now_ts: int) -> Iterator[facts.Row]:
    """Every fact `recall` could give, most recent first (the caller pages them)."""
    return _walk(store, _RECALL_ALL, {"subject": subject, "ts": now_ts},
                 lambda: facts.recall(_about(store, subject), subject, now_ts, 2**63 - 1))


def recall(store: Path, subject: str, now_ts: int, limit: int) -> list[Fact]:
    return _select(store, _RECALL, {"subject": subject, "ts": now_ts, "limit": limit},
                   lambda: facts.recall(_about(store, subject), subject, now_ts, limit))


def locate(store: Path, ids: Sequence[str]) -> dict[str, tuple[str, Fact]]:
    """Where each of `ids` is (store-relative file) and what it holds now; missing ids are left out."""
    def from_files() -> dict[str, tuple[str, Fact]]:
        found: dict[str, tuple[str, Fact]] = {}
        wanted = set(ids)
        for relpath, fact in factfiles.scan_for(store, ids):
            if fact["id"] in wanted:
                found.setdefault(fact["id"], (relpath, fact))
        return found

    def ask(db: sqlite3.Connection, lines: _Lines) -> dict[str, tuple[str, Fact]]:
        found: dict[str, tuple[str, Fact]] = {}
        for at in range(0, len(ids), 500):
            chunk = list(ids[at:at + 500])
            marks = ", ".join("?" * len(chunk))
            for row in db.execute(f"SELECT {_ROW} FROM facts WHERE facts.id IN ({marks})", chunk):
                fact = lines.fact(*row)
                found.setdefault(fact["id"], (lines.paths[row[0]], fact))
        return found

    return _answer(store, BUILD_BUDGET if len(ids) <= LOCATE_FROM_FILES else None, ask, from_files)


def known_subjects(store: Path, names: Iterable[str]) -> set[str]:
    """Which of `names` are the subject of some fact (open or closed): one indexed lookup each."""
    wanted = sorted(set(names))
    if not wanted:
        return set()
    found: set[str] = set()
    with opened(store) as db:
        assert db is not None
        for at in range(0, len(wanted), 500):
            chunk = wanted[at:at + 500]
            marks = ", ".join("?" * len(chunk))
            found.update(s for (s,) in db.execute(f"SELECT DISTINCT subject FROM facts WHERE subject IN ({marks})",
                                                  chunk))
    return found


def freshness(store: Path) -> dict[str, Any]:
    """Whether the index is in step with the fact files (`memstack status`), from their stats alone:
    the index is opened read-only, neither built nor synced, and no fact file is read."""
    on_disk = factfiles.list_files(store)
    known: dict[str, follow.Known] = {}
    exists = DB.path(store).is_file()
    try:
        with DB.read_only(store) as db:
            if db is not None:
                known = follow.known(db)
    except sqlite3.DatabaseError:
        known = {}  # unreadable: the next query drops and rebuilds it
    changed, gone = follow.stale(known, on_disk)
    return {"exists": exists, "fresh": not changed and not gone, "files_behind": len(changed) + len(gone),
            "bytes_behind": sum(follow.cost(known.get(rel), st) for rel, st in changed),
            "building": building(store) if exists else False}


if __name__ == "__main__":
    raise SystemExit(main())
