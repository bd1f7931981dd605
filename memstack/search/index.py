"""The search index: SQLite FTS5 in `<store>/.memstack/search.sqlite3`; derived, never the truth.

It follows the files as the fact index does (memstack/base/follow.py), with
the same signature (inode, size, mtime, ctime), one level up first: each query
stats every layer folder (one per agent or collection); a folder whose
signature has not moved holds the same files as before (git replaces the files
it changes, atomic writes rename, memstack's appends touch the folder), so only
its newest file is stat'ed (for lines appended by other means to the current
day or month); a folder that moved has every file stat'ed. Unchanged files are
skipped. An append-only file (intake, facts) that grew with the bytes already indexed
intact (their CRC-32 and Adler-32 still match) is read from where the index
stopped: an appended line is indexed, not the store. Any other change (a file
that shrank or changed in place after a `git pull`, merge or checkout, a fact
closed in place, a handoff or SOIL record rewritten) re-reads that one file and
compares its records with those held: unchanged records keep their rows, a
closed fact gets its new window, the rest are added or removed. A file that is
gone drops its rows. Deleting `.memstack/search.sqlite3` is always safe, and a
corrupt one is dropped and rebuilt: the next search builds it again.

Concurrency: the journal is WAL (a search never waits for a reader), catching
up is one write transaction (a background build, build.py: one per file) taken under the `search-index` lock of
`.memstack/locks/`, so two searches that both find the index behind catch it up
once, one after the other, and neither ever sees half a file.
"""

import os
import sqlite3
from collections import defaultdict
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager, nullcontext
from pathlib import Path
from typing import Any, NamedTuple

from memstack.base import follow, progress, sqlitecache
from memstack.base.forgotten import Forgotten
from memstack.base.sqlitecache import writing
from memstack.search import forgotten, records
from memstack.search.records import Doc

DB_NAME = ".memstack/search.sqlite3"
LOCK = "search-index"
VERSION = 7  # an index of another layout version is dropped and rebuilt (7: a scrubbed row has its marker's sig)
TOKENIZER = "porter unicode61 remove_diacritics 2"  # stemming: "deploys" finds "deployment"

_TABLES = (
    follow.files_table(", layer TEXT NOT NULL"),
    "CREATE TABLE docs (rowid INTEGER PRIMARY KEY, file_id INTEGER NOT NULL, line INTEGER NOT NULL,"
    " layer TEXT NOT NULL, ref TEXT NOT NULL, agent TEXT, tier TEXT, tbl TEXT, sig INTEGER NOT NULL,"
    " valid_from INTEGER, valid_to INTEGER, recorded_at INTEGER, expired_at INTEGER, fields TEXT)",
    "CREATE INDEX docs_by_file ON docs (file_id)",
    "CREATE TABLE folders (relpath TEXT PRIMARY KEY, ino INTEGER, size INTEGER, mtime_ns INTEGER, ctime_ns INTEGER)",
    f"CREATE VIRTUAL TABLE fts USING fts5(head, body, tokenize='{TOKENIZER}')",
    # How many records held a term when the index held `total` (query.py: a word most records hold
    # adds nothing to BM25 and is left out of the ranking; counting them costs a scan, so it is kept).
    "CREATE TABLE terms (term TEXT PRIMARY KEY, docs INTEGER NOT NULL, total INTEGER NOT NULL)",
    forgotten.TABLE,
)
_INSERT_DOC = ("INSERT INTO docs (rowid, file_id, line, layer, ref, agent, tier, tbl, sig, valid_from, valid_to,"
               " recorded_at, expired_at, fields) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)")


DB = sqlitecache.Database(DB_NAME, VERSION, _TABLES, what="search index",
                          source="the memory files on the next search", lock=LOCK)


@contextmanager
def opened(store: Path) -> Iterator[sqlite3.Connection]:
    """The index, up to date with the memory files (built on first use, rebuilt if corrupt)."""
    with DB.guard:
        db, _ = DB.repaired(store, lambda db: sync(db, store))
        yield db


def drop(store: Path) -> None:
    """Delete the index (the next search rebuilds it)."""
    DB.drop(store)


class State:
    """What the index holds: each file's Known, each folder's signature, the files of each folder."""

    def __init__(self, known: dict[str, follow.Known], folders: dict[str, follow.Signature]) -> None:
        self.known, self.folders = known, folders
        self.inside: dict[str, list[str]] = defaultdict(list)
        for relpath in sorted(known):
            self.inside[relpath.rsplit("/", 1)[0]].append(relpath)

    @classmethod
    def read(cls, db: sqlite3.Connection) -> "State":
        known = follow.known(db)
        folders = {r[0]: (r[1], r[2], r[3], r[4]) for r in db.execute(
            "SELECT relpath, ino, size, mtime_ns, ctime_ns FROM folders")}
        return cls(known, folders)


# The files and folders tables as last read, with the connection that read them: a warm search reads
# them again only when another connection changed the index (PRAGMA data_version moved).
_READ: dict[Path, tuple[sqlite3.Connection, int, State]] = {}


def _state(db: sqlite3.Connection, store: Path) -> State:
    version = db.execute("PRAGMA data_version").fetchone()[0]
    held = _READ.get(store)
    if held is None or held[0] is not db or held[1] != version:
        held = _READ[store] = (db, version, State.read(db))
    return held[2]


class Stale(NamedTuple):
    changed: list[tuple[str, str, os.stat_result]]  # (layer, relpath, stat) of files new or changed
    gone: list[str]  # files the index holds that are no more
    folders: dict[str, follow.Signature]  # every folder's signature now

    def __bool__(self) -> bool:
        return bool(self.changed or self.gone)


def _stale(store: Path, state: State) -> Stale:
    """What changed since the index last read the files, at the cost of a stat per folder.

    A folder whose signature has not moved holds the same files as then: git replaces the files it
    changes (a new inode in the folder), atomic writes rename, and memstack's appends touch the folder
    (files.append_held). Only its newest file (by name: the current day or month) is looked at, for
    lines appended to it some other way. A folder that moved is listed again, every file of it stat'ed.
    """
    changed: list[tuple[str, str, os.stat_result]] = []
    gone: list[str] = []
    folders: dict[str, follow.Signature] = {}
    for layer, folder, st in records.list_folders(store):
        folders[folder] = follow.signature(st)
        held = state.inside.get(folder, [])
        if state.folders.get(folder) == folders[folder]:
            if held:
                try:
                    newest = os.stat(store / held[-1])
                except FileNotFoundError:
                    gone.append(held[-1])
                    continue
                if follow.moved(state.known[held[-1]], newest):
                    changed.append((layer, held[-1], newest))
            continue
        present = set()
        for relpath, fst in records.list_folder(store, layer, folder):
            present.add(relpath)
            if follow.moved(state.known.get(relpath), fst):
                changed.append((layer, relpath, fst))
        gone += [relpath for relpath in held if relpath not in present]
    gone += [relpath for folder, held in state.inside.items() if folder not in folders for relpath in held]
    return Stale(changed, gone, folders)


Defer = Callable[[int, list[os.stat_result]], bool]  # (bytes behind, stats of the files changed): answer as is?


def sync(db: sqlite3.Connection, store: Path, defer: Defer | None = None, each: bool = False
         ) -> dict[str, Any] | None:
    """Bring the index up to date with the memory files, reading only what changed; None once it is.

    With `defer`, if it says so for what the index is behind, nothing is read: the index is left as it
    is and what it holds is returned (build.py). With `each`, every file read is its own transaction (a
    background build: searches meanwhile answer from the files already indexed).
    """
    state = _state(db, store)
    stale = _stale(store, state)
    gone = Forgotten.in_store(store)
    if not stale and stale.folders == state.folders and not forgotten.restored(db, gone):
        if forgotten.unscrubbed(db, gone):
            with DB.held(store):
                with writing(db):
                    forgotten.scrub(db, store, gone, forgotten.unscrubbed(db, gone))
                forgotten.checkpoint(db)
        return None
    behind = sum(follow.cost(state.known.get(relpath), st) for _, relpath, st in stale.changed)
    if defer is not None and stale and defer(behind, [st for _, _, st in stale.changed]):
        return {"built": False, "records_indexed": db.execute("SELECT count(*) FROM docs").fetchone()[0],
                "bytes_indexed": sum(known.indexed for known in state.known.values()), "bytes_behind": behind}
    with DB.held(store):
        with writing(db):
            _restore(db, forgotten.restored(db, gone))
            state = State.read(db)  # again under the lock: another search may have caught up meanwhile
            stale = _stale(store, state)
            for relpath in stale.gone:
                _forget(db, state.known[relpath].file_id)
            scrubbed = forgotten.unscrubbed(db, gone)
            forgotten.scrub(db, store, gone, scrubbed)  # first: what is read next enters as forgotten
            if not each:
                _read(db, store, state, stale, nullcontext)
        if each:
            _read(db, store, state, stale, lambda: writing(db))
        if scrubbed:
            forgotten.checkpoint(db)
    _READ.pop(store, None)  # our own writes do not move data_version: read the tables again
    return None


def _read(db: sqlite3.Connection, store: Path, state: State, stale: Stale,
          step: Callable[[], AbstractContextManager[Any]]) -> None:
    """Read the files changed, each in a `step` (a transaction of its own, or none), then note the folders."""
    with progress.bar(sum(st.st_size for _, _, st in stale.changed), "indexing for search", "B") as shown:
        for layer, relpath, st in stale.changed:
            with step():
                _refresh(db, store, layer, relpath, state.known.get(relpath))
            shown.update(st.st_size)
    with step():
        if stale.changed or stale.gone:
            db.execute("DELETE FROM terms WHERE total * 10 < (SELECT coalesce(max(rowid), 0) FROM docs) * 9"
                       " OR total * 10 > (SELECT coalesce(max(rowid), 0) FROM docs) * 11")
        db.execute("DELETE FROM folders")
        db.executemany("INSERT INTO folders VALUES (?, ?, ?, ?, ?)",
                       ((folder, *sig) for folder, sig in stale.folders.items()))


def common(db: sqlite3.Connection, terms: Iterable[str]) -> set[str]:
    """Those of `terms` held by at least half the records (their BM25 weight is nil): counted once,
    then kept until the index grows or shrinks by a tenth."""
    total = db.execute("SELECT coalesce(max(rowid), 0) FROM docs").fetchone()[0]
    found: set[str] = set()
    for term in set(terms):
        row = db.execute("SELECT docs, total FROM terms WHERE term = ?", (term,)).fetchone()
        if row is None or not 0.9 * total <= row[1] <= 1.1 * total:
            db.execute("CREATE VIRTUAL TABLE IF NOT EXISTS temp.vocab USING fts5vocab(main, fts, 'row')")
            docs = (db.execute("SELECT doc FROM temp.vocab WHERE term = ?", (term,)).fetchone() or (0,))[0]
            try:
                db.execute("INSERT OR REPLACE INTO terms VALUES (?, ?, ?)", (term, docs, total))
            except sqlite3.OperationalError:  # busy: the count is only kept for next time
                pass
            row = (docs, total)
        if total and 2 * row[0] >= total:
            found.add(term)
    return found


def _restore(db: sqlite3.Connection, refs: list[str]) -> None:
    """Give back records no tombstone forgets any more: the files holding them are dropped from the index and
    every folder listed again, so they are read anew (rare: a forget undone, a branch without it)."""
    if not refs:
        return
    for ref in refs:
        held = db.execute("SELECT DISTINCT file_id FROM docs WHERE ref = ? UNION SELECT file_id FROM files"
                          " WHERE relpath = ?", (ref, ref)).fetchall()  # a record's file; a handoff is its file
        for (file_id,) in held:
            _forget(db, file_id)
        db.execute("DELETE FROM forgotten WHERE ref = ?", (ref,))
    db.execute("DELETE FROM folders")


def _forget(db: sqlite3.Connection, file_id: int) -> None:
    db.execute("DELETE FROM fts WHERE rowid IN (SELECT rowid FROM docs WHERE file_id = ?)", (file_id,))
    db.execute("DELETE FROM docs WHERE file_id = ?", (file_id,))
    follow.forget(db, file_id)


def _refresh(db: sqlite3.Connection, store: Path, layer: str, relpath: str, known: follow.Known | None) -> None:
    got = follow.read(store / relpath)
    if got is None:
        if known is not None:
            _forget(db, known.file_id)
        return
    data, st = got
    end = records.indexed_end(layer, data)
    gone = Forgotten.in_store(store)  # a forgotten record's text never enters the index (search/forgotten.py)
    if known is None:
        known = follow.add(db, relpath, layer=layer)
        _add(db, known.file_id, layer, forgotten.shown(gone, relpath, records.parse(layer, relpath, data)))
    elif layer in records.APPEND_ONLY and known.signature[0] == st.st_ino and known.intact(data, end):
        _add(db, known.file_id, layer,  # grown: the new lines
             forgotten.shown(gone, relpath, records.parse(layer, relpath, data, known.indexed)))
    else:  # changed some other way: re-read it, keeping the records that did not change
        _merge(db, known.file_id, layer, forgotten.shown(gone, relpath, records.parse(layer, relpath, data)))
    follow.save(db, known.emptied().extended(memoryview(data)[:end]), st, len(data))


def _add(db: sqlite3.Connection, file_id: int, layer: str, docs: Iterable[Doc]) -> None:
    """Insert records as new rows, in batches (a first build inserts millions)."""
    batch: list[Doc] = []
    for doc in docs:
        batch.append(doc)
        if len(batch) == 10_000:
            _insert(db, file_id, layer, batch)
            batch = []
    _insert(db, file_id, layer, batch)


def _insert(db: sqlite3.Connection, file_id: int, layer: str, docs: Sequence[Doc]) -> None:
    if not docs:
        return
    first = db.execute("SELECT coalesce(max(rowid), 0) + 1 FROM docs").fetchone()[0]
    db.executemany(_INSERT_DOC, ((first + n, file_id, d.line, layer, d.ref, d.agent, d.tier, d.tbl, d.sig(),
                                  d.valid_from, d.valid_to, d.recorded_at, d.expired_at, d.fields)
                                 for n, d in enumerate(docs)))
    db.executemany("INSERT INTO fts (rowid, head, body) VALUES (?, ?, ?)",
                   ((first + n, d.head, d.body) for n, d in enumerate(docs)))


def _merge(db: sqlite3.Connection, file_id: int, layer: str, docs: Iterable[Doc]) -> None:
    """Make the file's rows those of `docs`, touching only what differs."""
    held: dict[tuple[str, int], list[tuple[int, int, int | None, int | None]]] = defaultdict(list)
    for rowid, ref, sig, line, valid_to, expired_at in db.execute(
            "SELECT rowid, ref, sig, line, valid_to, expired_at FROM docs WHERE file_id = ? ORDER BY rowid",
            (file_id,)):
        held[(ref, sig)].append((rowid, line, valid_to, expired_at))
    new = []
    for doc in docs:
        same = held.get((doc.ref, doc.sig()))
        if not same:
            new.append(doc)
            continue
        rowid, *rest = same.pop(0)
        if tuple(rest) != (doc.line, doc.valid_to, doc.expired_at):
            db.execute("UPDATE docs SET line = ?, valid_to = ?, expired_at = ? WHERE rowid = ?",
                       (doc.line, doc.valid_to, doc.expired_at, rowid))
    for rows in held.values():
        for rowid, *_ in rows:
            db.execute("DELETE FROM fts WHERE rowid = ?", (rowid,))
            db.execute("DELETE FROM docs WHERE rowid = ?", (rowid,))
    _add(db, file_id, layer, new)
