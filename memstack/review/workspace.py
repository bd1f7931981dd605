"""A review's workspace: a temporary SQLite database on disk (deleted when the review ends), not a spill:
what it holds is queried in several orders, counted and indexed, never read back once (base/spill.py).

A range may bring a million records; they are written here as they are read and
come back in the order the report lists them (SQLite sorts on disk, in bounded
memory), so the review never holds the range. Each row holds the record as the
report shows it (compact JSON, already redacted) and the keys it sorts by (UTF-8
of the unredacted values, which order as Python orders the strings). Records are
kept as `--json` prints them (`dump`), so the JSON report copies them out unparsed.
"""

import sqlite3
import tempfile
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

import orjson

SCHEMA = """
CREATE TABLE intake (seq INTEGER PRIMARY KEY, created BLOB, id BLOB, agent TEXT, rid TEXT, data BLOB);
CREATE TABLE facts (id TEXT PRIMARY KEY, subject BLOB, data BLOB);
CREATE TABLE superseded (seq INTEGER PRIMARY KEY, subject BLOB, id BLOB, successor TEXT, data BLOB);
CREATE TABLE items (section TEXT, seq INTEGER, data BLOB, PRIMARY KEY (section, seq)) WITHOUT ROWID;
CREATE TABLE old_lines (digest BLOB PRIMARY KEY) WITHOUT ROWID;
CREATE TABLE old_facts (id TEXT PRIMARY KEY, data BLOB);
CREATE TABLE waiting (seq INTEGER PRIMARY KEY, rid TEXT);
CREATE TABLE decided (id TEXT PRIMARY KEY) WITHOUT ROWID;
CREATE TABLE moved_lines (digest BLOB PRIMARY KEY) WITHOUT ROWID;
"""
CACHE_KIB = 2 * 1024  # SQLite's page cache and sorter memory; beyond it, sorts spill to temporary files


def dump(item: Any) -> bytes:
    """An item as the JSON report shows it (output.render_json's bytes)."""
    return orjson.dumps(item, option=orjson.OPT_INDENT_2 | orjson.OPT_SORT_KEYS)


def key(value: Any) -> bytes:
    """A sort key as the report sorted it, `str(value)`, as bytes that order alike."""
    return str(value).encode("utf-8", "surrogatepass")


class Workspace:
    def __init__(self) -> None:
        self._folder = tempfile.TemporaryDirectory(prefix="memstack-review-")
        self.db = sqlite3.connect(Path(self._folder.name) / "review.sqlite3", isolation_level=None)
        for pragma in ("journal_mode = OFF", "synchronous = OFF", f"cache_size = -{CACHE_KIB}",
                       "temp_store = FILE"):
            self.db.execute(f"PRAGMA {pragma}")
        self.db.executescript(SCHEMA)
        self.db.execute("BEGIN")
        self._seq = 0
        self._indexes: set[str] = set()

    def close(self) -> None:
        self.db.close()
        self._folder.cleanup()

    def seq(self) -> int:
        """A number for the next row: rows that sort alike keep the order they were read in."""
        self._seq += 1
        return self._seq

    def add_items(self, section: str, items: Iterable[Any]) -> None:
        self.db.executemany("INSERT INTO items VALUES (?, ?, ?)",
                            ((section, self.seq(), dump(item)) for item in items))

    def items(self, section: str, limit: int = -1, parsed: bool = True) -> Iterator[Any]:
        """A section's items in the order they were read (as `dump` wrote them, unless `parsed`)."""
        rows = self.db.execute("SELECT data FROM items WHERE section = ? ORDER BY seq LIMIT ?", (section, limit))
        return (orjson.loads(data) if parsed else data for data, in rows)

    def count(self, table: str, where: str = "", *args: Any) -> int:
        return int(self.db.execute(f"SELECT count(*) FROM {table} {where}", args).fetchone()[0])

    def index(self, name: str, definition: str) -> None:
        """An index made the first time a question needs it (the JSON report needs none)."""
        if name not in self._indexes:
            self.db.execute(f"CREATE INDEX {name} ON {definition}")
            self._indexes.add(name)
