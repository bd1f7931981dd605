"""The fact index's file and layout: `DB`, and a fact line as a row of its `facts` table.

`<store>/.memstack/facts.sqlite3` (DB_NAME), layout VERSION: an index of another layout (say, one
that kept copies of the lines) is dropped and rebuilt on first use (base/sqlitecache.py). Its
`files` table is base/follow.py's; its `facts` table holds one row per fact line: the fields a
query filters on, and where the line is (file, byte offset `pos`, length `len`), never the line,
and its line number `line_no` (facts tied on their times are listed in the order written: file,
then line).

`rows` turns the lines of a fact file into rows and refuses one the index cannot take (named by
file and line number, I5); `line_problem` says what is wrong with such a line.
"""

import sqlite3
from collections.abc import Iterator
from typing import Any

import orjson

from memstack.base import follow, sqlitecache
from memstack.base.errors import MemstackError
from memstack.kb.facts import Fact

DB_NAME = ".memstack/facts.sqlite3"
VERSION = 5  # an index written by another layout version is dropped and rebuilt

_TABLES = (
    follow.files_table(),
    "CREATE TABLE facts (file_id INTEGER NOT NULL, id TEXT NOT NULL, subject TEXT NOT NULL, predicate TEXT NOT NULL,"
    " valid_from INTEGER NOT NULL, valid_to INTEGER, recorded_at INTEGER NOT NULL, expired_at INTEGER,"
    " pos INTEGER NOT NULL, len INTEGER NOT NULL, line_no INTEGER NOT NULL)",
)
INDEXES = (
    "CREATE INDEX IF NOT EXISTS facts_by_subject ON facts (subject, predicate)",
    "CREATE INDEX IF NOT EXISTS facts_by_id ON facts (id)",
    "CREATE INDEX IF NOT EXISTS facts_by_file ON facts (file_id, pos)",
    # The open facts only (a quarter of them, say): the keys holding two or more (`binder list`'s
    # disagreements) and a key's open facts (supersede) are read from it, not from every version.
    "CREATE INDEX IF NOT EXISTS facts_open ON facts (subject, predicate) WHERE valid_to IS NULL",
)
INSERT = "INSERT INTO facts VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
_INT64 = range(-(2**63), 2**63)

DB = sqlitecache.Database(DB_NAME, VERSION, (*_TABLES, *INDEXES), what="fact index",
                          source="the fact files on the next query")


def forget(db: sqlite3.Connection, file_id: int) -> None:
    """Drop a file and its rows from the index."""
    db.execute("DELETE FROM facts WHERE file_id = ?", (file_id,))
    follow.forget(db, file_id)


def rows(relpath: str, data: bytes, start: int, end: int, file_id: int) -> Iterator[tuple[Any, ...]]:
    """The rows (INSERT's values) of the lines of `data[start:end]`, a fact file's whole lines."""
    number = data.count(b"\n", 0, start)
    loads = orjson.loads
    pos = start
    for line in data[start:end].split(b"\n")[:-1]:
        number += 1
        at, pos = pos, pos + len(line) + 1
        try:
            fact = loads(line)
            row = (file_id, fact["id"], fact["subject"], fact["predicate"], fact["valid_from"], fact["valid_to"],
                   fact["recorded_at"], fact["expired_at"], at, len(line), number)
        except (orjson.JSONDecodeError, KeyError, TypeError):
            row = None
        # The fast check, once per line of a million; `line_problem` says what exactly is wrong.
        if row is None or not (type(row[1]) is str and type(row[2]) is str and type(row[3]) is str
                               and type(row[4]) is int and type(row[6]) is int
                               and (row[5] is None or type(row[5]) is int)
                               and (row[7] is None or type(row[7]) is int)):
            raise MemstackError(f"{relpath}:{number}: I5 {line_problem(line)}")
        yield row


def row_of(file_id: int, fact: Fact, pos: int, length: int, number: int) -> tuple[Any, ...]:
    """The row of `fact`, whose line (without its newline) is `length` bytes at `pos`, line `number`."""
    return (file_id, fact["id"], fact["subject"], fact["predicate"], fact["valid_from"], fact["valid_to"],
            fact["recorded_at"], fact["expired_at"], pos, length, number)


def lines_indexed(db: sqlite3.Connection, file_id: int) -> int:
    """How many lines of a file the index holds (the number of its last indexed line)."""
    found = db.execute("SELECT line_no FROM facts WHERE file_id = ? ORDER BY pos DESC LIMIT 1", (file_id,)).fetchone()
    return 0 if found is None else int(found[0])


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

