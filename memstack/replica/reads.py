"""The fact read verbs answered from the replica (`--pg`): the same documents as from the files.

SQL selects the rows (by subject, by validity, by transaction time) in the
files' order and hands them over one at a time; `readers.Lists` pages them and
parses only the lines it hands out, exactly as committed, so the two sources
cannot drift apart.
"""

import heapq
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import orjson

from memstack.base.errors import MemstackError
from memstack.kb import facts
from memstack.kb.readers import Lists
from memstack.replica import db
from memstack.replica.tables import SCHEMA

_VALID = "validity @> %(ts)s::bigint"
# As of transaction time X: recorded by X, and a closing recorded after X not yet known (a superset;
# facts.valid_at decides).
_VALID_AS_OF = ("recorded_at <= %(as_of)s AND valid_from <= %(ts)s"
                " AND (valid_to IS NULL OR valid_to > %(ts)s OR expired_at > %(as_of)s)")
_RECALL_WHERE = "subject = %(subject)s AND lower(predicate) IN ({}) AND {}".format(
    ", ".join(f"'{p}'" for p in facts.RECALL_PREDICATES), _VALID)
# The files' order (text COLLATE "C" is code point order, as Python compares strings); facts tied on their
# times in the order written (file, then line), as the fact index lists them.
_RECALL_ORDER = " ORDER BY valid_from DESC, recorded_at DESC, path, line_no"
_LISTING = " ORDER BY subject, valid_from, recorded_at, path, line_no"


class ReplicaReader(Lists):
    """Reads facts from the replica at a DSN: one connection, opened at the first question (reopened if lost),
    one read-only transaction per question."""

    def __init__(self, dsn: str, store: Path | None = None) -> None:
        """`store`: the clone the command runs in, if any: its code repository is where the answers' code
        anchors are followed (memstack/anchors/used.py), as for the files."""
        self.dsn, self.store = dsn, store
        self._conn: Any = None

    def code_store(self) -> Path | None:
        return self.store

    def close(self) -> None:
        if self._conn is not None:
            self._conn.close()
            self._conn = None

    def _connection(self) -> Any:
        if self._conn is None or self._conn.broken or self._conn.closed:
            self._conn = db.connect(self.dsn, "connect")
        return self._conn

    def _state(self, cur: Any) -> tuple[Any, ...]:
        """The synced state's row (the recall limit of the synced memstack.yaml); no replica is an error."""
        try:
            cur.execute(f"SELECT recall_limit FROM {SCHEMA}.sync_state")
            state = cur.fetchone()
        except db.psycopg().errors.UndefinedTable:
            state = None
        if state is None:
            raise MemstackError.marked("PostgreSQL at {where} holds no memstack replica yet — run"
                                       " `{verb:memstack pg sync}` in a clone of the store",
                                       where=db.describe(self.dsn))
        return tuple(state)

    def recall_limit(self) -> int:
        conn = self._connection()
        with db.translated(self.dsn, "read the replica"), conn.transaction(), conn.cursor() as cur:
            return int(self._state(cur)[0])

    def _rows(self, where: str, order: str, params: dict[str, Any], subject: str | None,
              key: Callable[[facts.Row], Any]) -> Iterator[facts.Row]:
        """The rows matching `where`, one at a time through a server-side cursor, in `key`'s order.

        The subject column shows U+FFFD for NUL, so rows whose column holds U+FFFD are read apart (few:
        only such subjects), placed by their subject as committed, and merged in; with `subject`, only
        its exact rows are kept."""
        conn = self._connection()
        if subject is not None:
            params = {**params, "subject": subject.replace("\0", "\ufffd")}
            # A forgotten fact's row shows its marker in subject, predicate and object (forgotten.masked): asked
            # for by the marker, it is not found, as in the files, where its subject is what was forgotten.
            where += " AND NOT (predicate = %(subject)s AND object IS NOT DISTINCT FROM %(subject)s)"
        select = (f"SELECT subject, valid_from, recorded_at, id, path, line_no, line FROM {SCHEMA}.facts"
                  f" WHERE {where} AND ")
        with db.translated(self.dsn, "read the replica"), conn.transaction():
            with conn.cursor() as cur:
                self._state(cur)
                cur.execute(select + "strpos(subject, chr(65533)) > 0", params)
                odd = sorted((facts.Row.of(orjson.loads(line), path, number) for *_, path, number, line in cur),
                             key=key)
            with conn.cursor(name="memstack_rows") as cur:
                cur.itersize = 2000
                cur.execute(select + "strpos(subject, chr(65533)) = 0" + order, params)
                plain = (facts.Row(*row) for row in cur)
                for row in heapq.merge(plain, odd, key=key):
                    if subject is None or row.subject == subject:
                        yield row

    def binder_waiting(self, subject: str) -> int:
        """Intake records about `subject` routed to the Binder and not decided, as committed."""
        conn = self._connection()
        with db.translated(self.dsn, "read the replica"), conn.transaction(), conn.cursor() as cur:
            self._state(cur)
            cur.execute(f"SELECT line FROM {SCHEMA}.intake i WHERE subject = %(subject)s"
                        f" AND EXISTS (SELECT 1 FROM {SCHEMA}.promotions p WHERE p.intake_id = i.id"
                        " AND p.sub_tier = 'binder')"
                        f" AND NOT EXISTS (SELECT 1 FROM {SCHEMA}.binder b WHERE b.intake_id = i.id)",
                        {"subject": subject.replace("\0", "\ufffd")})
            return sum(1 for (line,) in cur if orjson.loads(line).get("subject") == subject)

    # The rows of each question, its arguments already checked (readers.Lists checks and pages them).
    def valid_at_rows(self, ts: int, subject: str | None, as_of: int | None) -> Iterator[facts.Row]:
        where = _VALID if as_of is None else _VALID_AS_OF
        if subject is not None:
            where = "subject = %(subject)s AND " + where
        return self._rows(where, _LISTING, {"ts": ts, "as_of": as_of}, subject, facts.Row.listing_key)

    def history_rows(self, subject: str) -> Iterator[facts.Row]:
        return self._rows("subject = %(subject)s", _LISTING, {}, subject, facts.Row.listing_key)

    def recall_rows(self, subject: str, now_ts: int) -> Iterator[facts.Row]:
        return self._rows(_RECALL_WHERE, _RECALL_ORDER, {"ts": now_ts}, subject, facts.Row.recall_key)
