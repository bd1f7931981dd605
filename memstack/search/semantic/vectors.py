"""Record embeddings: `<store>/.memstack/semantic.sqlite3`, derived from the search index, never the truth.

It follows the search index (search/index.py), which follows the files: each record row of the search
index (`docs`, its rowid and checksum) is kept with the hash of its text and its vector (`rows`), and each
text's vector once more by its hash (`vectors`, content-addressed, to re-use). Catching up compares a
summary of the search index's rows (count, largest rowid, sum of checksums) with the one last seen; when it
moved, the rows that came or went are found, and only texts never embedded before are run through the
model (an appended record is embedded, not the store; a search index rebuilt after an upgrade re-uses
every vector). Vectors are int8 (a unit vector times 127: 384 bytes, 38 MB at 100,000 records), ranked a
chunk at a time, so memory stays bounded whatever the store's size. Deleting the file is always safe: the
next semantic search rebuilds it.
"""

import hashlib
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np

from memstack.base import progress, sqlitecache
from memstack.base.sqlitecache import writing
from memstack.search.semantic import model

DB_NAME = ".memstack/semantic.sqlite3"
LOCK = "semantic-index"
VERSION = 2
SCALE = 127.0  # a unit vector's components times this, rounded: int8
CHUNK = 8_192  # rows ranked at a time (a chunk's matrix: 3 MB of int8, 12 MB as float32)
EMBED_CHUNK = 256  # texts embedded per write transaction

_TABLES = (
    "CREATE TABLE vectors (hash BLOB PRIMARY KEY, vec BLOB NOT NULL) WITHOUT ROWID",
    # A row's vector is kept beside it too (read in rowid order to rank: no lookup per record).
    "CREATE TABLE rows (rowid INTEGER PRIMARY KEY, sig INTEGER NOT NULL, hash BLOB NOT NULL, vec BLOB NOT NULL)",
    "CREATE TABLE seen (id INTEGER PRIMARY KEY CHECK (id = 1), summary TEXT NOT NULL)",
)
DB = sqlitecache.Database(DB_NAME, VERSION, _TABLES, what="semantic index",
                          source="the search index on the next semantic search", lock=LOCK)


def text_of(head: str, body: str) -> str:
    """What is embedded for a record: its head (speaker, subject, title) and its text."""
    return f"{head}: {body}" if head else body


def _hash(text: str) -> bytes:
    return hashlib.blake2b(text.encode(), digest_size=16, person=model.MODEL[:16].encode()).digest()


def _summary(search: sqlite3.Connection) -> str:
    return repr(search.execute("SELECT count(*), coalesce(max(rowid), 0), total(sig) FROM docs").fetchone())


def sync(db: sqlite3.Connection, store: Path, search: sqlite3.Connection) -> None:
    """Bring the vectors up to date with the search index `search` (already caught up with the files)."""
    summary = _summary(search)
    if db.execute("SELECT summary FROM seen").fetchone() == (summary,):
        return
    with DB.held(store):
        now = {rowid: sig for rowid, sig in search.execute("SELECT rowid, sig FROM docs")}
        held = {rowid: sig for rowid, sig in db.execute("SELECT rowid, sig FROM rows")}
        gone = [rowid for rowid, sig in held.items() if now.get(rowid) != sig]
        new = sorted(rowid for rowid, sig in now.items() if held.get(rowid) != sig)
        with writing(db):
            db.executemany("DELETE FROM rows WHERE rowid = ?", ((rowid,) for rowid in gone))
        with progress.bar(len(new), "embedding for semantic search") as shown:
            for at in range(0, len(new), EMBED_CHUNK):
                _add(db, search, new[at:at + EMBED_CHUNK], now)
                shown.update(len(new[at:at + EMBED_CHUNK]))
        with writing(db):
            if gone:
                db.execute("DELETE FROM vectors WHERE hash NOT IN (SELECT hash FROM rows)")
            db.execute("INSERT OR REPLACE INTO seen VALUES (1, ?)", (summary,))


def _add(db: sqlite3.Connection, search: sqlite3.Connection, rowids: list[int], sigs: dict[int, int]) -> None:
    marks = ", ".join(str(rowid) for rowid in rowids)
    texts = {rowid: text_of(head, body)
             for rowid, head, body in search.execute(f"SELECT rowid, head, body FROM fts WHERE rowid IN ({marks})")}
    hashes = {rowid: _hash(text) for rowid, text in texts.items()}
    known = dict(db.execute("SELECT hash, vec FROM vectors WHERE hash IN ({})".format(
        ", ".join("?" * len(hashes))), list(hashes.values()))) if hashes else {}
    todo = {hashes[rowid]: text for rowid, text in texts.items() if hashes[rowid] not in known}
    made = {h: quantised(v) for h, v in zip(todo, model.embedder().embed(list(todo.values())), strict=True)}
    with writing(db):
        db.executemany("INSERT OR REPLACE INTO vectors VALUES (?, ?)", made.items())
        db.executemany("INSERT OR REPLACE INTO rows VALUES (?, ?, ?, ?)",
                       ((rowid, sigs[rowid], h, made.get(h) or known[h]) for rowid, h in hashes.items()))


def quantised(vector: Any) -> bytes:
    return bytes(np.clip(np.rint(vector * SCALE), -127, 127).astype(np.int8).tobytes())


def nearest(db: sqlite3.Connection, query: Any, count: int) -> list[tuple[float, int]]:
    """The `count` records (search index rowids) nearest `query` (a unit vector): (cosine, rowid), best first."""
    best: list[tuple[float, int]] = []
    for rowids, matrix in _chunks(db):
        scores = matrix.astype(np.float32) @ query / SCALE
        top = np.argpartition(-scores, min(count, len(scores)) - 1)[:count]
        best += [(float(scores[n]), int(rowids[n])) for n in top]
        best = sorted(best, key=lambda pair: (-pair[0], pair[1]))[:count]
    return best


# The vectors as last read, per connection: a long-running process (the MCP server) reads them again only
# when the index changed (another connection's write moves data_version, this one's total_changes).
_HELD: dict[int, tuple[tuple[int, int], list[tuple[Any, Any]]]] = {}
# Above this many records the vectors are read afresh each time, a chunk at a time: holding 100,000 (38 MB)
# took a search to 263 MiB, reading them afresh kept it at 233 MiB.
HELD_MAX_ROWS = 20_000


def _chunks(db: sqlite3.Connection) -> Iterator[tuple[Any, Any]]:
    version = (db.execute("PRAGMA data_version").fetchone()[0], db.total_changes)
    held = _HELD.get(id(db))
    if held is not None and held[0] == version:
        yield from held[1]
        return
    _HELD.pop(id(db), None)
    chunks: list[tuple[Any, Any]] | None = []
    cursor = db.execute("SELECT rowid, vec FROM rows")
    while batch := cursor.fetchmany(CHUNK):
        chunk = (np.array([rowid for rowid, _ in batch], dtype=np.int64),
                 np.frombuffer(b"".join(vec for _, vec in batch), dtype=np.int8).reshape(len(batch), model.DIMENSIONS))
        if chunks is not None:
            chunks.append(chunk)
            chunks = chunks if len(chunks) * CHUNK <= HELD_MAX_ROWS else None
        yield chunk
    if chunks is not None:
        _HELD[id(db)] = (version, chunks)
