"""The fact store's query index: SQLite in `<store>/.memstack/facts.sqlite3`; derived, never the truth.

Every query first brings the index up to date with the fact files, cheaply: a
file whose (inode, size, mtime) is unchanged is skipped; a file that grew with
the bytes already indexed intact (their CRC-32 and Adler-32 still match) is
read from where the index stopped; any other change re-reads that file whole;
a file that is gone drops its rows. A write made by memstack tells the index
what it changed (`note_append`, `note_rewrite`), so the next query re-reads
nothing. Deleting `.memstack/` is always safe: the next query rebuilds it.

Each row keeps the fact's line as written, so an answer from the index is
byte for byte what the file holds.
"""

import os
import sqlite3
import zlib
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any, NamedTuple

import orjson

from memstack import factfiles, facts
from memstack.errors import MemstackError
from memstack.facts import Fact

DB_NAME = ".memstack/facts.sqlite3"
VERSION = 1  # an index written by another layout version is dropped and rebuilt

_TABLES = (
    "CREATE TABLE files (file_id INTEGER PRIMARY KEY, relpath TEXT NOT NULL UNIQUE, ino INTEGER, size INTEGER,"
    " mtime_ns INTEGER, indexed INTEGER NOT NULL, crc INTEGER NOT NULL, adler INTEGER NOT NULL)",
    "CREATE TABLE facts (file_id INTEGER NOT NULL, id TEXT NOT NULL, subject TEXT NOT NULL, predicate TEXT NOT NULL,"
    " valid_from INTEGER NOT NULL, valid_to INTEGER, recorded_at INTEGER NOT NULL, expired_at INTEGER,"
    " line BLOB NOT NULL)",
)
_INDEXES = (
    "CREATE INDEX IF NOT EXISTS facts_by_subject ON facts (subject, predicate)",
    "CREATE INDEX IF NOT EXISTS facts_by_id ON facts (id)",
    "CREATE INDEX IF NOT EXISTS facts_by_file ON facts (file_id)",
)
_INSERT = "INSERT INTO facts VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)"
_INT64 = range(-(2**63), 2**63)

Signature = tuple[int, int, int] | tuple[None, None, None]


class Known(NamedTuple):
    """What the index holds of one file: its stat signature then, and how many bytes it has read."""

    file_id: int
    signature: Signature
    indexed: int
    crc: int
    adler: int


def signature(st: os.stat_result) -> Signature:
    return (st.st_ino, st.st_size, st.st_mtime_ns)


# --- opening and syncing -------------------------------------------------------------------------

@contextmanager
def opened(store: Path) -> Iterator[sqlite3.Connection]:
    """The index, up to date with the fact files (built on first use)."""
    try:
        db = _connect(store)
        try:
            sync(db, store)
        except BaseException:
            db.close()
            raise
    except sqlite3.DatabaseError as exc:
        if type(exc) is not sqlite3.DatabaseError:  # locked, I/O, full disk: not ours to repair
            raise MemstackError(f"{store / DB_NAME}: {exc}") from None
        drop(store)  # a corrupt index is only a cache: start it again
        db = _connect(store)
        sync(db, store)
    try:
        yield db
    finally:
        db.close()


def drop(store: Path) -> None:
    for suffix in ("", "-wal", "-shm"):
        (store / (DB_NAME + suffix)).unlink(missing_ok=True)


def _connect(store: Path) -> sqlite3.Connection:
    path = store / DB_NAME
    path.parent.mkdir(exist_ok=True)
    db = sqlite3.connect(path, timeout=60, isolation_level=None)
    try:
        # The default rollback journal: opening costs ~0.1 ms where WAL costs ~2 ms (it re-creates its
        # -wal file whenever the last connection closes), and commits are rare next to queries.
        db.execute("PRAGMA synchronous=NORMAL")
        if db.execute("PRAGMA user_version").fetchone()[0] != VERSION:
            with _writing(db):
                if db.execute("PRAGMA user_version").fetchone()[0] != VERSION:
                    for (name,) in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'").fetchall():
                        db.execute(f'DROP TABLE "{name}"')
                    for sql in (*_TABLES, *_INDEXES):
                        db.execute(sql)
                    db.execute(f"PRAGMA user_version = {VERSION}")
    except BaseException:
        db.close()
        raise
    return db


@contextmanager
def _writing(db: sqlite3.Connection) -> Iterator[None]:
    """One write transaction, taken at once (other processes wait for it, then see its result)."""
    db.execute("BEGIN IMMEDIATE")
    try:
        yield
    except BaseException:
        db.execute("ROLLBACK")
        raise
    db.execute("COMMIT")


def _known(db: sqlite3.Connection) -> dict[str, Known]:
    rows = db.execute("SELECT relpath, file_id, ino, size, mtime_ns, indexed, crc, adler FROM files")
    return {r[0]: Known(r[1], (r[2], r[3], r[4]), r[5], r[6], r[7]) for r in rows}


def sync(db: sqlite3.Connection, store: Path) -> None:
    """Bring the index up to date with the fact files; re-read only what changed."""
    def stale(known: dict[str, Known]) -> tuple[list[str], list[str]]:
        on_disk = factfiles.list_files(store)
        present = {relpath for relpath, _ in on_disk}
        changed = [rel for rel, st in on_disk if rel not in known or known[rel].signature != signature(st)]
        return changed, [rel for rel in known if rel not in present]

    changed, gone = stale(_known(db))
    if not changed and not gone:
        return
    with _writing(db):
        known = _known(db)  # again under the write lock: another process may have caught up meanwhile
        changed, gone = stale(known)
        bulk = not known and len(changed) > 0
        if bulk:  # a first build: load, then index (several times faster than indexing row by row)
            for (name,) in db.execute("SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'facts'"
                                      ).fetchall():
                db.execute(f'DROP INDEX "{name}"')
        for relpath in gone:
            _forget(db, known[relpath].file_id)
        for relpath in changed:
            _refresh(db, store, relpath, known.get(relpath))
        if bulk:
            for sql in _INDEXES:
                db.execute(sql)


def _forget(db: sqlite3.Connection, file_id: int) -> None:
    db.execute("DELETE FROM facts WHERE file_id = ?", (file_id,))
    db.execute("DELETE FROM files WHERE file_id = ?", (file_id,))


def _refresh(db: sqlite3.Connection, store: Path, relpath: str, known: Known | None) -> None:
    try:
        with open(store / relpath, "rb") as handle:
            data = handle.read()
            st = os.fstat(handle.fileno())
    except FileNotFoundError:
        if known is not None:
            _forget(db, known.file_id)
        return
    end = data.rfind(b"\n") + 1  # an unfinished last line (a write in progress) waits for the next sync
    view = memoryview(data)
    if known is not None and known.indexed <= end and zlib.crc32(view[:known.indexed]) == known.crc \
            and zlib.adler32(view[:known.indexed]) == known.adler:
        start, crc, adler, file_id = known.indexed, known.crc, known.adler, known.file_id
    else:
        start, crc, adler = 0, 0, 1
        if known is None:
            file_id = db.execute("INSERT INTO files (relpath, indexed, crc, adler) VALUES (?, 0, 0, 1)",
                                 (relpath,)).lastrowid
        else:
            file_id = known.file_id
            db.execute("DELETE FROM facts WHERE file_id = ?", (file_id,))
    db.executemany(_INSERT, _rows(relpath, data, start, end, file_id))
    sig = signature(st) if st.st_size == len(data) else (None, None, None)
    db.execute("UPDATE files SET ino = ?, size = ?, mtime_ns = ?, indexed = ?, crc = ?, adler = ? WHERE file_id = ?",
               (*sig, end, zlib.crc32(view[start:end], crc), zlib.adler32(view[start:end], adler), file_id))


def _rows(relpath: str, data: bytes, start: int, end: int, file_id: int) -> Iterator[tuple[Any, ...]]:
    number = data.count(b"\n", 0, start)
    for line in data[start:end].split(b"\n")[:-1]:
        number += 1
        try:
            fact = orjson.loads(line)
        except orjson.JSONDecodeError:
            what = "empty line" if not line.strip() else "not valid JSON"
            raise MemstackError(f"{relpath}:{number}: I5 {what} — a fact file holds one JSON fact per line") from None
        problem = _shape(fact)
        if problem:
            raise MemstackError(f"{relpath}:{number}: I5 not a fact: {problem} (schemas/fact.schema.json)")
        yield _row(file_id, fact, line)


def _row(file_id: int, fact: Fact, line: bytes) -> tuple[Any, ...]:
    return (file_id, fact["id"], fact["subject"], fact["predicate"], fact["valid_from"], fact["valid_to"],
            fact["recorded_at"], fact["expired_at"], line)


def _shape(fact: Any) -> str | None:
    """What the index needs of a line (the full schema check is `memstack check`'s)."""
    if not isinstance(fact, dict):
        return "a line must be a JSON object"
    for key in ("id", "subject", "predicate"):
        if type(fact.get(key)) is not str:
            return f"{key} must be text"
    for key, nullable in (("valid_from", False), ("recorded_at", False), ("valid_to", True), ("expired_at", True)):
        value = fact.get(key)
        if not ((nullable and value is None and key in fact) or (type(value) is int and value in _INT64)):
            return f"{key} must be integer milliseconds" + (" or null" if nullable else "")
    return None


# --- what writes tell the index ------------------------------------------------------------------

@contextmanager
def _if_current(store: Path, relpath: str, before: os.stat_result | None) -> Iterator[tuple[Any, Known | None]]:
    """The index and its row for `relpath`, if the index exists and held the file as it was `before`."""
    if not (store / DB_NAME).exists():
        yield None, None
        return
    try:
        db = _connect(store)
    except sqlite3.Error:
        yield None, None  # the next query repairs or rebuilds it
        return
    try:
        with _writing(db):
            row = _known(db).get(relpath)
            if before is None:
                current = row is None
            else:
                current = row is not None and row.signature == signature(before) and row.indexed == before.st_size
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
            file_id = db.execute("INSERT INTO files (relpath, indexed, crc, adler) VALUES (?, 0, 0, 1)",
                                 (relpath,)).lastrowid
            known = Known(file_id, (None, None, None), 0, 0, 1)
        db.executemany(_INSERT, (_row(known.file_id, f, line[:-1]) for f, line in zip(new, lines, strict=True)))
        indexed = known.indexed + len(data)
        sig = signature(after) if after.st_size == indexed else (None, None, None)
        db.execute("UPDATE files SET ino = ?, size = ?, mtime_ns = ?, indexed = ?, crc = ?, adler = ? WHERE file_id = ?",
                   (*sig, indexed, zlib.crc32(data, known.crc), zlib.adler32(data, known.adler), known.file_id))


def note_rewrite(store: Path, relpath: str, before: os.stat_result, after: os.stat_result, data: bytes,
                 closed: Iterable[tuple[Fact, bytes]]) -> None:
    """Record facts just closed by rewriting `relpath` (now `data`)."""
    with _if_current(store, relpath, before) as (db, known):
        if db is None or known is None:
            return
        db.executemany("UPDATE facts SET valid_to = ?, expired_at = ?, line = ? WHERE file_id = ? AND id = ?",
                       ((f["valid_to"], f["expired_at"], line.rstrip(b"\n"), known.file_id, f["id"])
                        for f, line in closed))
        sig = signature(after) if after.st_size == len(data) else (None, None, None)
        db.execute("UPDATE files SET ino = ?, size = ?, mtime_ns = ?, indexed = ?, crc = ?, adler = ? WHERE file_id = ?",
                   (*sig, len(data), zlib.crc32(data), zlib.adler32(data), known.file_id))


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


def _select(store: Path, where: str, params: dict[str, Any]) -> list[Fact]:
    with opened(store) as db:
        return [orjson.loads(line) for (line,) in db.execute(f"SELECT line FROM facts WHERE {where}", params)]


def valid_at(store: Path, ts: int, subject: str | None = None, as_of: int | None = None) -> list[Fact]:
    where = _VALID if as_of is None else _VALID_AS_OF
    if subject is not None:
        where = "subject = :subject AND " + where
    found = _select(store, where + _LISTING, {"ts": ts, "subject": subject, "as_of": as_of})
    if as_of is None:
        return found
    return [f for f in (facts.believed_at(f, as_of) for f in found) if f is not None]


def history(store: Path, subject: str) -> list[Fact]:
    return _select(store, "subject = :subject" + _LISTING, {"subject": subject})


def versions(store: Path, subject: str, predicate: str) -> list[Fact]:
    """Every fact of one subject and predicate, open or closed, oldest first."""
    return _select(store, "subject = :subject AND predicate = :predicate" + _LISTING,
                   {"subject": subject, "predicate": predicate})


def recall(store: Path, subject: str, now_ts: int, limit: int) -> list[Fact]:
    return _select(store, _RECALL, {"subject": subject, "ts": now_ts, "limit": limit})


def locate(store: Path, ids: Sequence[str]) -> dict[str, tuple[str, Fact]]:
    """Where each of `ids` is (store-relative file) and what it holds now; missing ids are left out."""
    found: dict[str, tuple[str, Fact]] = {}
    with opened(store) as db:
        for at in range(0, len(ids), 500):
            chunk = list(ids[at:at + 500])
            marks = ", ".join("?" * len(chunk))
            for relpath, line in db.execute(
                    f"SELECT files.relpath, facts.line FROM facts JOIN files USING (file_id)"
                    f" WHERE facts.id IN ({marks})", chunk):
                fact = orjson.loads(line)
                found.setdefault(fact["id"], (relpath, fact))
    return found
