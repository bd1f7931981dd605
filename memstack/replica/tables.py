"""What the replica holds: schema `memstack`, one table per kind of memory file, one row per line.

Every row keeps where it lives (`path`, `line_no`, 1-based as `memstack check`
names lines) and the line exactly as committed (`line`), so an answer built
from the replica is byte for byte the one built from the files. The other
columns are the record's fields, typed for SQL: fact times are integer ms and
`validity` is the half-open window [valid_from, valid_to) as an int8range.

Fact lines must be facts (the read verbs depend on them; a bad one stops the
sync naming path:line, as the fact index does). Log lines are copied as they
are: a field that is missing or of another type is NULL. PostgreSQL text
cannot hold NUL, so a typed text column shows U+FFFD for it (`line` keeps the
JSON escape).
"""

import math
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import orjson

from memstack.base import jsonio, layout
from memstack.base.errors import MemstackError
from memstack.base.patterns import lazy
from memstack.base.times import MAX_MS, MIN_MS, parse_ts
from memstack.kb.index.schema import line_problem

SCHEMA = "memstack"
VERSION = 2  # the layout of these tables; a replica of another version is dropped and copied again
# 2: `anchors` (jsonb) on facts and intake
_INT64 = range(-(2**63), 2**63)


# Each converter takes a field's value and gives it as COPY text (NULL as \N): building the text here is
# several times faster than handing Python values to the driver, row by row, for a million rows.
NULL = "\\N"


_SPECIAL = lazy("[\\\\\t\n\r\0]")


def _escape(text: str) -> str:
    if _SPECIAL.search(text) is None:  # most values: nothing to escape, one scan in C
        return text
    return (text.replace("\\", "\\\\").replace("\t", "\\t").replace("\n", "\\n").replace("\r", "\\r")
            .replace("\0", "\ufffd"))


def _text(value: Any) -> str:
    return _escape(value) if type(value) is str else NULL


def _int(value: Any) -> str:
    return str(value) if type(value) is int and value in _INT64 else NULL


def _float(value: Any) -> str:
    return repr(float(value)) if type(value) in (int, float) and math.isfinite(value) else NULL


def _texts(value: Any) -> str:
    if type(value) is list and all(type(v) is str for v in value):
        plain = "".join(value)
        if "\\" not in plain and '"' not in plain:  # most keyword lists: nothing to quote inside the items
            return _escape('{"' + '","'.join(value) + '"}') if value else "{}"
        items = ('"' + v.replace("\\", "\\\\").replace('"', '\\"') + '"' for v in value)
        return _escape("{" + ",".join(items) + "}")
    return NULL


def _ms(value: Any) -> str:
    if type(value) is str and value.endswith("Z") and value.isascii():  # as memstack writes it: one C parse
        try:
            parsed = datetime.fromisoformat(value)
        except ValueError:
            pass
        else:
            ms = int(round(parsed.timestamp() * 1000))
            return str(ms) if MIN_MS <= ms <= MAX_MS else NULL
    try:
        return _int(parse_ts(value, "created_at")) if type(value) is str else NULL
    except MemstackError:
        return NULL


def _json(value: Any) -> str:
    """A list (a record's code anchors) as jsonb; jsonb cannot hold NUL: U+FFFD there, as in text columns."""
    if type(value) is not list:
        return NULL
    data = orjson.dumps(value)
    if b"\\u0000" in data:  # perhaps a NUL (or an escaped backslash before "u0000"): replace NULs only
        data = orjson.dumps(_no_nul(value))
    return _escape(data.decode())


def _no_nul(value: Any) -> Any:
    if type(value) is str:
        return value.replace("\0", "\ufffd")
    if type(value) is list:
        return [_no_nul(v) for v in value]
    if type(value) is dict:
        return {_no_nul(k): _no_nul(v) for k, v in value.items()}
    return value


# A column: its name, its SQL type, the record's key it comes from and its converter.
Column = tuple[str, str, str, Callable[[Any], str]]


def col(name: str, sql: str, convert: Callable[[Any], str], key: str | None = None) -> Column:
    return (name, sql, key or name, convert)


T, I, F, A = 'text COLLATE "C"', "bigint", "double precision", 'text[] COLLATE "C"'  # noqa: E741 (column types, short as SQL writes them)
J = "jsonb"


@dataclass(frozen=True)
class Table:
    name: str
    kind: str  # the layout kind of the files it copies
    columns: tuple[Column, ...]
    extra: str = ""  # further column definitions (generated)
    indexes: tuple[str, ...] = ()

    @property
    def copy_columns(self) -> list[str]:
        return ["path", "line_no", *(f'"{c[0]}"' for c in self.columns), "line"]

    def ddl(self) -> str:
        body = ", ".join(["path text COLLATE \"C\" NOT NULL", "line_no integer NOT NULL",
                          *(f'"{name}" {sql}' for name, sql, _, _ in self.columns),
                          *([self.extra] if self.extra else []),
                          "line text NOT NULL", "PRIMARY KEY (path, line_no)"])
        return f"CREATE TABLE {SCHEMA}.{self.name} ({body})"

    def index_ddl(self) -> list[str]:
        return [f"CREATE INDEX {self.name}_{i} ON {SCHEMA}.{self.name} {spec}" for i, spec in enumerate(self.indexes)]


FACTS = Table("facts", layout.FACTS, (
    col("id", T + " NOT NULL", _text), col("subject", T + " NOT NULL", _text),
    col("predicate", T + " NOT NULL", _text), col("object", T, _text),
    col("valid_from", I + " NOT NULL", _int), col("valid_to", I, _int), col("confidence", F, _float),
    col("recorded_at", I + " NOT NULL", _int), col("table", T, _text), col("expired_at", I, _int),
    col("superseded_by", T, _text), col("source", T, _text), col("agent", T, _text), col("intake_id", T, _text),
    col("tier", T, _text), col("anchors", J, _json)),
    # [valid_from, valid_to): valid at ts iff validity @> ts. A window that ends before it begins
    # (only a hand-made line can hold one) is empty: valid at no instant, as the files say.
    extra="validity int8range GENERATED ALWAYS AS (CASE WHEN valid_to IS NULL OR valid_to >= valid_from"
          " THEN int8range(valid_from, valid_to, '[)') ELSE 'empty'::int8range END) STORED",
    indexes=("(subject, predicate, valid_from)", "(id)", "USING gist (validity)",
             "(subject, predicate) WHERE valid_to IS NULL",  # the open (valid-now) facts
             "(recorded_at)"),
)

INTAKE = Table("intake", layout.INTAKE, (
    col("id", T, _text), col("agent", T, _text), col("created_at", T, _text),
    col("created_ms", I, _ms, "created_at"), col("tier", T, _text), col("confidence", F, _float),
    col("title", T, _text), col("content", T, _text), col("source", T, _text), col("keywords", A, _texts),
    col("tags", A, _texts), col("subject", T, _text), col("predicate", T, _text), col("object", T, _text),
    col("relevance_score", F, _float), col("anchors", J, _json)),
    indexes=("(id)", "(agent, created_ms)", "(subject)"),
)

PROMOTIONS = Table("promotions", layout.PROMOTIONS, (
    col("intake_id", T, _text), col("agent", T, _text), col("sub_tier", T, _text), col("fact_id", T, _text),
    col("promoted_at", I, _int), col("via", T, _text), col("file", T, _text)),
    indexes=("(intake_id)", "(sub_tier)"),
)

BINDER = Table("binder", layout.BINDER, (
    col("intake_id", T, _text), col("decision", T, _text), col("decided_at", I, _int), col("by", T, _text),
    col("note", T, _text)),
    indexes=("(intake_id)",),
)

TABLES = (FACTS, INTAKE, PROMOTIONS, BINDER)
BY_KIND = {table.kind: table for table in TABLES}

SYNC_STATE = (f"CREATE TABLE {SCHEMA}.sync_state (only_row boolean PRIMARY KEY DEFAULT true CHECK (only_row),"
              " schema_version integer NOT NULL, commit text NOT NULL, tree text NOT NULL,"
              " synced_at timestamptz NOT NULL, synced_ms bigint NOT NULL, memstack_version text NOT NULL,"
              " recall_limit integer NOT NULL)")


def _fits(value: Any) -> bool:
    return type(value) is int and value in _INT64


def _is_fact(record: Any) -> bool:
    """The fields the read verbs rely on, of the right types (the fast check, once per line)."""
    return (type(record) is dict and type(record.get("id")) is str and type(record.get("subject")) is str
            and type(record.get("predicate")) is str and _fits(record.get("valid_from"))
            and _fits(record.get("recorded_at"))
            and "valid_to" in record and (record["valid_to"] is None or _fits(record["valid_to"]))
            and "expired_at" in record and (record["expired_at"] is None or _fits(record["expired_at"])))


Hide = Callable[[Any], dict[str, Any] | None]  # a record as a row shows it when forgotten, else None


def copy_lines(table: Table, path: str, numbered: Iterable[tuple[int, bytes]], hide: Hide | None = None) -> str:
    """The COPY text of these lines of one file, a record `hide` masks held as it shows it (its content never
    written to the database); a fact line the read verbs could not use raises, naming path:line."""
    fields = [(key, convert) for _, _, key, convert in table.columns]
    where = _escape(path)
    out = []
    for number, line in numbered:
        try:
            record = orjson.loads(line)
        except orjson.JSONDecodeError:
            record = None
        if table is FACTS and not _is_fact(record):
            raise MemstackError(f"{path}:{number}: I5 {line_problem(line) or 'not a fact'} (fix it, then sync again)")
        shown = hide(record) if hide is not None else None
        if shown is not None:
            record, line = shown, jsonio.dumps_line(shown)[:-1]
        get = record.get if type(record) is dict else {}.get
        out.append("\t".join([where, str(number), *[convert(get(key)) for key, convert in fields],
                               _escape(line.decode("utf-8", "replace"))]))
    return "\n".join(out) + "\n" if out else ""
