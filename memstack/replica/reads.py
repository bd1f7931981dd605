"""The fact read verbs answered from the replica (`--pg`): the same documents as from the files.

SQL only narrows the rows (by subject, by validity, by transaction time); the
answer is then made by the very functions that define it for the files
(`facts.valid_at`, `facts.history`, `facts.recall`) from each row's line as
committed, so the two sources cannot drift apart.
"""

from typing import Any

import orjson

from memstack import facts, factstore
from memstack.errors import MemstackError
from memstack.facts import Fact
from memstack.replica import db
from memstack.replica.tables import SCHEMA

_VALID = "validity @> %(ts)s::bigint"
# As of transaction time X: recorded by X, and a closing recorded after X not yet known (a superset;
# facts.valid_at decides).
_VALID_AS_OF = ("recorded_at <= %(as_of)s AND valid_from <= %(ts)s"
                " AND (valid_to IS NULL OR valid_to > %(ts)s OR expired_at > %(as_of)s)")
_RECALL = ("subject = %(subject)s AND lower(predicate) IN ({}) AND " + _VALID
           + " ORDER BY valid_from DESC, recorded_at DESC, id DESC").format(
    ", ".join(f"'{p}'" for p in facts.RECALL_PREDICATES))


def _exact(subject: str) -> bool:
    """Whether the subject column holds this subject as it is (PostgreSQL text has no NUL: see tables)."""
    return "\0" not in subject and "\ufffd" not in subject


class ReplicaReader:
    """Reads facts from the replica at a DSN: one connection, opened at the first question (reopened if lost),
    one read-only transaction per question."""

    def __init__(self, dsn: str) -> None:
        self.dsn = dsn
        self._conn: Any = None

    def close(self) -> None:
        if self._conn is not None:
            self._conn.close()
            self._conn = None

    def _select(self, where: str, params: dict[str, Any]) -> tuple[list[Fact], int]:
        """The facts of the rows matching `where`, and the recall limit of the synced memstack.yaml."""
        if self._conn is None or self._conn.broken or self._conn.closed:
            self._conn = db.connect(self.dsn, "connect")
        conn = self._conn
        with db.translated(self.dsn, "read the replica"), conn.transaction(), conn.cursor() as cur:
            try:
                cur.execute(f"SELECT recall_limit FROM {SCHEMA}.sync_state")
                state = cur.fetchone()
            except db.psycopg().errors.UndefinedTable:
                state = None
            if state is None:
                raise MemstackError(f"PostgreSQL at {db.describe(self.dsn)} holds no memstack replica yet —"
                                    " run `memstack pg sync` in a clone of the store")
            if params.get("subject") is not None:
                params = {**params, "subject": params["subject"].replace("\0", "\ufffd")}
            cur.execute(f"SELECT line FROM {SCHEMA}.facts WHERE {where}", params)
            return [orjson.loads(line) for (line,) in cur], state[0]

    def valid_at(self, ts: Any, subject: Any = None, as_of: Any = None) -> list[Fact]:
        ts, subject, as_of = factstore.query_args(ts, subject, as_of)
        where = _VALID if as_of is None else _VALID_AS_OF
        if subject is not None:
            where = "subject = %(subject)s AND " + where
        found, _ = self._select(where, {"ts": ts, "subject": subject, "as_of": as_of})
        return facts.valid_at(found, ts, subject, as_of)

    def history(self, subject: Any) -> list[Fact]:
        subject = facts.text(subject, "subject")
        found, _ = self._select("subject = %(subject)s", {"subject": subject})
        return facts.history(found, subject)

    def recall(self, subject: Any, now_ts: Any, limit: Any = None) -> list[Fact]:
        """Without a limit, at most the synced memstack.yaml's memory.recall_limit (as the files answer)."""
        subject, now, _ = factstore.recall_args(subject, now_ts, 1 if limit is None else limit)
        where = _RECALL
        if _exact(subject):  # else the column holds U+FFFD for NUL: facts.recall picks the exact subject
            where += f" LIMIT COALESCE(%(limit)s::int, (SELECT recall_limit FROM {SCHEMA}.sync_state))"
        found, default = self._select(where, {"subject": subject, "ts": now, "limit": limit})
        return facts.recall(found, subject, now, default if limit is None else limit)
