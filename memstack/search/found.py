"""What a search found: hits ranked by BM25, then the hits that hold only words most records hold.

BM25 gives a word most records hold (index.common: at least half of them) no weight, yet
ranking by it costs a score for every record holding it: seconds at a million records. So those
words only filter. The records a query finds through them alone (every word of the query such a
word, or, when any word may match, a record holding none of the others) come after the ranked
hits, unranked: score 0, in the order the index holds them, read from SQLite a page at a time
and counted there (`rows`, `uncounted`), never all built in Python.
"""

import sqlite3
from typing import Any

Row = tuple[int, float, int]  # (0 all words, else 1 + words it lacks; BM25; rowid): a hit's sort key, its cursor
TAIL = 1 << 20  # the first of a Row of the unranked hits: after every ranked one


class Found:
    """`ranked` rows (sorted), then every row matching `rest` (an FTS5 match, or None) that passes the
    filters `where`, each (TAIL, 0.0, rowid) in rowid order."""

    def __init__(self, db: sqlite3.Connection, ranked: list[Row], rest: str | None = None,
                 where: list[str] | None = None, params: dict[str, Any] | None = None) -> None:
        self.db, self.ranked, self.rest = db, ranked, rest
        self.params = {**(params or {}), "rest": rest}
        joined = " JOIN docs ON docs.rowid = fts.rowid" if where else ""  # only to filter: a count is twice as fast
        self.sql = (f" FROM fts{joined} WHERE fts MATCH :rest" + "".join(f" AND {w}" for w in where or ())
                    + " AND fts.rowid > :after")
        self.uncounted = 0  # rows after those `rows` returned, counted only

    def __bool__(self) -> bool:
        return bool(self.ranked) or (self.rest is not None and bool(self._read("SELECT 1", 0, " LIMIT 1")))

    def few(self, count: int) -> bool:
        """Fewer than `count` hits that are all ranked, or none at all: worth topping up."""
        return (self.rest is None and len(self.ranked) < count) or not self

    def after(self, ranked: list[Row]) -> "Found":
        """These hits after `ranked` (rows that sort before all of them, none of them among them)."""
        self.ranked = ranked + self.ranked
        return self

    def rows(self, after: list[Any] | None, limit: int | None) -> list[Row]:
        """The ranked rows, then the unranked ones past the cursor `after` (one more than `limit`; the
        others are counted in `uncounted`): what pages.page walks."""
        if self.rest is None:
            return self.ranked
        start = after[2] if after is not None and after[0] == TAIL else 0  # a cursor among the unranked rows
        tail = [(TAIL, 0.0, rowid) for (rowid,) in self._read(
            "SELECT fts.rowid", start, " ORDER BY fts.rowid" + ("" if limit is None else f" LIMIT {limit + 1}"))]
        if limit is not None and len(tail) > limit:
            self.uncounted = self._read("SELECT count(*)", start)[0][0] - len(tail)
        return self.ranked + tail

    def _read(self, select: str, after: int, tail: str = "") -> list[tuple[Any, ...]]:
        return self.db.execute(select + self.sql + tail, {**self.params, "after": after}).fetchall()
