"""Keeping the fact index in step with the fact files: `sync`, and what memstack's own writes tell it.

`sync` reads what changed since the index last looked (base/follow.py): an unchanged file is
skipped, a grown one read on from where the index stopped, any other change re-read whole, a
file gone forgotten; all of it one write transaction. `budget` caps the bytes one call reads (a
query does not build a large index itself: build.py). A first build loads the rows, then makes
the table's indexes (several times faster than keeping them up row by row).

A write made by memstack tells the index what it changed (`note_append`, `note_rewrite`, passed
to factfiles by the fact store), so the next query reads nothing again; a note is dropped (the
next sync reads the file) unless the index held the file exactly as it was before the write and
can be written at once (a build under way holds it: the write itself never waits for the index, nor fails).
"""

import os
import sqlite3
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager, nullcontext
from pathlib import Path
from typing import Any

from memstack.base import follow, progress
from memstack.base.errors import MemstackError
from memstack.base.sqlitecache import writing
from memstack.kb import factfiles
from memstack.kb.facts import Fact
from memstack.kb.index import schema

SHOW_PROGRESS = 2**20  # bytes to index from which a bar is drawn (under a terminal): a catch-up of a few
# appended lines never pays for importing tqdm


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
            schema.forget(db, known[relpath].file_id)
        total = sum(follow.cost(known.get(rel), st) for rel, st in changed)
        with (progress.bar(total, "indexing facts", "B") if total >= SHOW_PROGRESS else nullcontext()) as shown:
            for relpath, st in changed:
                _refresh(db, store, relpath, known.get(relpath))
                if shown is not None:
                    shown.update(follow.cost(known.get(relpath), st))
        if bulk:
            for sql in schema.INDEXES:
                db.execute(sql)
    return True


def _refresh(db: sqlite3.Connection, store: Path, relpath: str, known: follow.Known | None) -> None:
    """Index one file: from where the index stopped if it only grew, else whole."""
    got = follow.read(store / relpath)
    if got is None:
        if known is not None:
            schema.forget(db, known.file_id)
        return
    data, st = got
    end = data.rfind(b"\n") + 1  # an unfinished last line (a write in progress) waits for the next sync
    if known is None:
        known = follow.add(db, relpath)
    elif not known.intact(data, end):  # changed other than by growing: read it again whole
        known = known.emptied()
        db.execute("DELETE FROM facts WHERE file_id = ?", (known.file_id,))
    try:
        db.executemany(schema.INSERT, schema.rows(relpath, data, known.indexed, end, known.file_id))
    except OverflowError:  # an integer beyond 64 bits: find the line to name it
        for number, line in enumerate(data[:end].split(b"\n")[:-1], start=1):
            if schema.line_problem(line):
                raise MemstackError(f"{relpath}:{number}: I5 {schema.line_problem(line)}") from None
        raise
    follow.save(db, known.extended(memoryview(data)[known.indexed:end]), st, len(data))



# --- what writes tell the index ------------------------------------------------------------------

@contextmanager
def _if_current(store: Path, relpath: str, before: os.stat_result | None
                ) -> Iterator[tuple[Any, follow.Known | None]]:
    """The index and its row for `relpath`, if the index exists, can be written now and held the file
    as it was `before`; else (None, None), and the next sync reads the file. Yields exactly once."""
    if not schema.DB.path(store).exists():
        yield None, None
        return
    try:
        db = schema.DB.connect(store)
    except sqlite3.Error:
        yield None, None  # the next query repairs or rebuilds it
        return
    try:
        try:
            db.execute("PRAGMA busy_timeout = 500")
            db.execute("BEGIN IMMEDIATE")
            row, taken = follow.known(db).get(relpath), True
        except sqlite3.Error:  # busy (a build under way, another writer): the next sync reads the file
            row, taken = None, False
        if before is None:
            current = taken and row is None
        else:
            current = row is not None and not follow.moved(row, before) and row.indexed == before.st_size
        if not current:
            yield None, None  # (closing the connection rolls back)
            return
        try:
            yield db, row
            db.execute("COMMIT")
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
        rows, pos, number = [], known.indexed, schema.lines_indexed(db, known.file_id)
        for fact, line in zip(new, lines, strict=True):
            number += 1
            rows.append(schema.row_of(known.file_id, fact, pos, len(line) - 1, number))
            pos += len(line)
        db.executemany(schema.INSERT, rows)
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

