"""Following files into a derived index: what it holds of each file, and what must be read again.

An index that follows files (the fact index, the search index) keeps a `files` table (`files_table`):
for each file its stat signature when last read (inode, size, mtime, ctime: ctime too, as an edit
in place that keeps the size and puts the mtime back still moves it), how many of its bytes the
index holds (`indexed`: whole records; a line still being written waits), and the CRC-32 and
Adler-32 of those bytes. From that, for each file:

- its signature unchanged: skipped (`moved`, `stale`);
- grown, the bytes indexed still intact (both sums match): read on from where the index stopped
  (`Known.intact`; `Known.extended` carries the sums on over the new bytes);
- any other change: read again whole (the sums start over: `Known.emptied`);
- gone: its rows forgotten (`stale` names it).

A file is read in one go with its stat (`read`); its signature is kept only if the file was as
long as what was read (`save`), else the next catch-up reads it again.
"""

import os
import sqlite3
import zlib
from collections.abc import Iterable
from pathlib import Path
from typing import Any, NamedTuple

Signature = tuple[int, int, int, int] | tuple[None, None, None, None]
NO_SIGNATURE: Signature = (None, None, None, None)


def signature(st: os.stat_result) -> Signature:
    return (st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)


def files_table(extra: str = "") -> str:
    """The statement making the `files` table; `extra` adds columns (", name TYPE") after relpath."""
    return ("CREATE TABLE files (file_id INTEGER PRIMARY KEY, relpath TEXT NOT NULL UNIQUE" + extra
            + ", ino INTEGER, size INTEGER, mtime_ns INTEGER, ctime_ns INTEGER, indexed INTEGER NOT NULL,"
            " crc INTEGER NOT NULL, adler INTEGER NOT NULL)")


class Known(NamedTuple):
    """What the index holds of one file: its stat signature then, and how many bytes it has read."""

    file_id: int
    signature: Signature
    indexed: int
    crc: int
    adler: int

    def intact(self, data: bytes, end: int) -> bool:
        """Whether `data` (read whole lines up to `end`) starts with the bytes indexed, unchanged."""
        view = memoryview(data)[:self.indexed]
        return self.indexed <= end and zlib.crc32(view) == self.crc and zlib.adler32(view) == self.adler

    def extended(self, chunk: bytes | memoryview) -> "Known":
        """What the index holds once `chunk`, the bytes after those indexed, is indexed too."""
        return self._replace(indexed=self.indexed + len(chunk), crc=zlib.crc32(chunk, self.crc),
                             adler=zlib.adler32(chunk, self.adler))

    def emptied(self) -> "Known":
        """The same file, none of it indexed (to be read again whole)."""
        return Known(self.file_id, NO_SIGNATURE, 0, 0, 1)


def known(db: sqlite3.Connection) -> dict[str, Known]:
    """Every file the index holds, by store-relative path."""
    rows = db.execute("SELECT relpath, file_id, ino, size, mtime_ns, ctime_ns, indexed, crc, adler FROM files")
    return {r[0]: Known(r[1], (r[2], r[3], r[4], r[5]), r[6], r[7], r[8]) for r in rows}


def moved(known: Known | None, st: os.stat_result) -> bool:
    """Whether a file (`st` now) is new or changed since the index read it."""
    return known is None or known.signature != signature(st)


def stale(known: dict[str, Known], on_disk: Iterable[tuple[str, os.stat_result]]
          ) -> tuple[list[tuple[str, os.stat_result]], list[str]]:
    """The files on disk new or changed since the index read them, and the files it holds that are gone."""
    changed, present = [], set()
    for relpath, st in on_disk:
        present.add(relpath)
        if moved(known.get(relpath), st):
            changed.append((relpath, st))
    return changed, [relpath for relpath in known if relpath not in present]


def cost(known: Known | None, st: os.stat_result) -> int:
    """Bytes a catch-up of the file would read (a grown file from where the index stopped)."""
    if known is not None and known.signature[0] == st.st_ino and st.st_size >= known.indexed:
        return st.st_size - known.indexed
    return st.st_size


def read(path: Path) -> tuple[bytes, os.stat_result] | None:
    """The file's bytes and its stat as they were read; None if it is gone."""
    try:
        with open(path, "rb") as handle:
            return handle.read(), os.fstat(handle.fileno())
    except FileNotFoundError:
        return None


def add(db: sqlite3.Connection, relpath: str, **columns: Any) -> Known:
    """A new file in the index (with its `extra` columns' values), none of it indexed yet."""
    names = "".join(f", {name}" for name in columns)
    marks = "".join(", ?" for _ in columns)
    file_id = db.execute(f"INSERT INTO files (relpath{names}, indexed, crc, adler) VALUES (?{marks}, 0, 0, 1)",
                         (relpath, *columns.values())).lastrowid
    assert file_id is not None
    return Known(file_id, NO_SIGNATURE, 0, 0, 1)


def save(db: sqlite3.Connection, known: Known, st: os.stat_result, size: int) -> None:
    """Record that the index holds `known` of its file, now `st`: the signature is kept if the file
    was `size` bytes (what was read of it), else left out, so the next catch-up reads it again."""
    sig = signature(st) if st.st_size == size else NO_SIGNATURE
    db.execute("UPDATE files SET ino = ?, size = ?, mtime_ns = ?, ctime_ns = ?, indexed = ?, crc = ?, adler = ?"
               " WHERE file_id = ?", (*sig, known.indexed, known.crc, known.adler, known.file_id))


def reread(db: sqlite3.Connection, file_id: int) -> None:
    """Have the next catch-up read the file again (its rows are not what it holds)."""
    db.execute("UPDATE files SET ino = NULL, size = NULL WHERE file_id = ?", (file_id,))


def forget(db: sqlite3.Connection, file_id: int) -> None:
    """Drop the file's record (its rows are the index's own to delete)."""
    db.execute("DELETE FROM files WHERE file_id = ?", (file_id,))
