"""L3 facts: the record and the pure bi-temporal logic (no files, no clock).

A fact is valid at ts iff `valid_from <= ts < valid_to` (a null `valid_to` is
open-ended): the `valid_to` instant belongs to the successor. Transaction time
is `recorded_at` (when the store learned the fact) and `expired_at` (when the
store learned it had ended). Closing a fact sets exactly `valid_to`,
`expired_at` and `superseded_by`; nothing else of a fact ever changes (I2).

The functions over lists of facts here (`valid_at`, `history`, `recall`) are the
reference answers: the SQLite index (kb/index/) must give the same ones.
"""

from collections.abc import Iterable
from typing import Any, NamedTuple

import orjson

from memstack.base import ids, pages
from memstack.base.errors import MemstackError, bad
from memstack.base.names import check_name
from memstack.base.times import parse_ts
from memstack.intake.log import check_confidence

TABLES = ("knowledge", "jeles_atoms", "opus_atoms")
RECALL_PREDICATES = ("decided", "chose", "pattern", "prefers")
CLOSING_FIELDS = ("valid_to", "expired_at", "superseded_by")
DEFAULT_CONFIDENCE = 1.0  # a fact stated directly is taken as meant; promotion passes its own

# Valid times may lie in the past (years 1000-9999, so ISO output keeps four digits);
# transaction times are when the store learned something: not before 1970.
MIN_VALID_MS = -30610224000000  # 1000-01-01T00:00:00Z
MIN_RECORDED_MS = 0
MAX_MS = 253402300799999  # 9999-12-31T23:59:59.999Z

Fact = dict[str, Any]


def timestamp(value: Any, field: str, transaction: bool = False) -> int:
    """A timestamp (ms or ISO-8601) in the range a fact may hold, as integer ms."""
    ms = parse_ts(value, field)
    low = MIN_RECORDED_MS if transaction else MIN_VALID_MS
    if not low <= ms <= MAX_MS:
        first = "1970-01-01" if transaction else "1000-01-01"
        raise bad(field, repr(value), "must lie between {first} and 9999-12-31 (UTC)", first=first)
    return ms


def text(value: Any, field: str, required: bool = True) -> str:
    if not isinstance(value, str) or (required and not value.strip()):
        raise bad(field, repr(value), "must be non-empty text")
    return value


def make(*, subject: str, predicate: str, object: str, valid_from: Any, recorded_at: Any, agent: str,
         confidence: Any = DEFAULT_CONFIDENCE, table: str = "knowledge", source: str | None = None,
         intake_id: str | None = None, id: str | None = None, tier: str | None = None,
         anchors: list[dict[str, Any]] | None = None) -> Fact:
    """A new open fact; raises naming the first bad field. `anchors`: its code anchors (memstack/anchors/),
    kept as given.

    `id` defaults to a fresh one bound to the agent and recorded_at (memstack/base/ids.py);
    promotion passes ids derived from intake ids. Writing
    (`factfiles.append`) validates the whole record against schemas/fact.schema.json.
    """
    if table not in TABLES:
        raise bad("table", repr(table), "must be one of {tables}", tables=", ".join(TABLES))
    if source is not None and not isinstance(source, str):
        raise bad("source", repr(source), "must be text")
    recorded = timestamp(recorded_at, "recorded-at", transaction=True)
    fact: Fact = {
        "id": ids.new_id(recorded, check_name(agent, "agent")) if id is None else id,
        "subject": text(subject, "subject"),
        "predicate": text(predicate, "predicate"),
        "object": text(object, "object", required=False),
        "valid_from": timestamp(valid_from, "valid-from"),
        "valid_to": None,
        "confidence": check_confidence(confidence),
        "recorded_at": recorded,
        "table": table,
        "expired_at": None,
        "superseded_by": None,
        "source": source,
        "agent": check_name(agent, "agent"),
        "intake_id": intake_id,
    }
    if tier is not None:
        fact["tier"] = tier
    if anchors:
        fact["anchors"] = anchors
    return fact


def is_open(fact: Fact) -> bool:
    return fact["valid_to"] is None and fact["expired_at"] is None


def superseded_by_change(before: Fact | None, after: Fact) -> bool:
    """Whether a change superseded this fact: `after` (the fact once changed) has `valid_to` set, and `before`
    (the fact before the change, None when the change added it) had not. A fact the change adds already
    closed counts, as does an open one it closes. The one definition: `promote` counts these and `review`
    lists them."""
    return after.get("valid_to") is not None and (before is None or before.get("valid_to") is None)


def is_valid_at(fact: Fact, ts: int) -> bool:
    return fact["valid_from"] <= ts and (fact["valid_to"] is None or ts < fact["valid_to"])


def believed_at(fact: Fact, as_of: int) -> Fact | None:
    """The fact as the store held it at transaction time `as_of` (None: not yet recorded).

    A closing recorded after `as_of` is not yet known then: the fact shows open.
    """
    if fact["recorded_at"] > as_of:
        return None
    if fact["expired_at"] is not None and fact["expired_at"] > as_of:
        return {**fact, "valid_to": None, "expired_at": None, "superseded_by": None}
    return fact


def close(fact: Fact, *, valid_to: int, expired_at: int, superseded_by: str | None = None) -> Fact:
    """The fact closed at `valid_to`, the closing recorded at `expired_at` (I2: nothing else changes)."""
    if not is_open(fact):
        raise MemstackError(f"bad fact {fact['id']}: already closed (valid_to {fact['valid_to']},"
                            f" expired_at {fact['expired_at']}); a closed fact never changes")
    if not valid_to > fact["valid_from"]:
        raise bad("valid-to", str(valid_to), "must be after valid_from {start} of fact {id} ({subject} {predicate})",
                  start=fact["valid_from"], id=fact["id"], subject=fact["subject"], predicate=fact["predicate"])
    if expired_at < fact["recorded_at"]:
        raise bad("recorded-at", str(expired_at), "the closing of fact {id} cannot be recorded before the fact"
                  " itself ({recorded})", id=fact["id"], recorded=fact["recorded_at"])
    return {**fact, "valid_to": valid_to, "expired_at": expired_at, "superseded_by": superseded_by}


def closing_problem(old: Fact, new: Fact) -> str | None:
    """Why `new` is not a legal closing of `old` (I2), or None if it is."""
    if not is_open(old):
        return f"fact {old['id']} is already closed; a closed fact never changes"
    illegal = sorted(k for k in old.keys() | new.keys() if old.get(k, ...) != new.get(k, ...)
                     and k not in CLOSING_FIELDS)
    if illegal:
        return f"a closing may change only {', '.join(CLOSING_FIELDS)}, not {', '.join(illegal)}"
    if new["valid_to"] is None or new["expired_at"] is None:
        return "a closing sets valid_to and expired_at"
    if not new["valid_to"] > old["valid_from"]:
        return f"valid_to {new['valid_to']} must be after valid_from {old['valid_from']}"
    return None


# Orders: listings read oldest first; recall reads most recent first. Facts tied on these keys keep the
# order they were written in (fact file, then line): the functions below sort stably, so give them the facts
# in the files' order; the index and the replica sort by (file, line) after these keys (Row).
def listing_key(fact: Fact) -> tuple[str, int, int]:
    return (fact["subject"], fact["valid_from"], fact["recorded_at"])


def recall_key(fact: Fact) -> tuple[int, int]:
    return (fact["valid_from"], fact["recorded_at"])


def is_recall_predicate(predicate: str) -> bool:
    return predicate.lower() in RECALL_PREDICATES


# Reference answers over any iterable of facts (the index must agree with these).
def valid_at(facts: Iterable[Fact], ts: int, subject: str | None = None, as_of: int | None = None) -> list[Fact]:
    found = []
    for fact in facts:
        if subject is not None and fact["subject"] != subject:
            continue
        seen = fact if as_of is None else believed_at(fact, as_of)
        if seen is not None and is_valid_at(seen, ts):
            found.append(seen)
    return sorted(found, key=listing_key)


def history(facts: Iterable[Fact], subject: str) -> list[Fact]:
    return sorted((f for f in facts if f["subject"] == subject), key=listing_key)


def recall(facts: Iterable[Fact], subject: str, now_ts: int, limit: int) -> list[Fact]:
    found = [f for f in valid_at(facts, now_ts, subject) if is_recall_predicate(f["predicate"])]
    return sorted(found, key=recall_key, reverse=True)[:limit]


LISTING_SHAPE = pages.shaped(str, int, int, str, int)  # Row.listing_key, as a cursor holds it
RECALL_SHAPE = pages.shaped(int, int, str, int)  # Row.recall_key


class Row(NamedTuple):
    """A fact as a listing walks it: its sort columns, where it was written (its fact file, store-relative,
    and line number: the order of facts tied on the sort columns) and its line, parsed only if handed out
    (pages.py). Its keys are the listing's cursors: LISTING_SHAPE and RECALL_SHAPE say what they hold."""

    subject: str
    valid_from: int
    recorded_at: int
    id: str
    path: str
    number: int
    line: bytes | str | None = None  # the fact's JSON line, or None when `known` holds it parsed
    known: Fact | None = None

    @classmethod
    def of(cls, fact: Fact, path: str, number: int) -> "Row":
        return cls(fact["subject"], fact["valid_from"], fact["recorded_at"], fact["id"], path, number, None, fact)

    def listing_key(self) -> tuple[str, int, int, str, int]:
        """Oldest first; ties in the order written."""
        return (self.subject, self.valid_from, self.recorded_at, self.path, self.number)

    def recall_key(self) -> tuple[int, int, str, int]:
        """Most recent first (times negated, so the key ascends); ties in the order written."""
        return (-self.valid_from, -self.recorded_at, self.path, self.number)

    def size(self) -> int:
        """About the bytes of its JSON (pages.py's byte budget), without parsing it. An anchored fact counts
        twice: a read adds the status of its anchors (memstack/anchors/used.py), never more bytes than the
        anchors themselves hold."""
        data = self.line if self.line is not None else orjson.dumps(self.known)
        anchored = ('"anchors"' in data) if isinstance(data, str) else (b'"anchors"' in data)
        return len(data) * (2 if anchored else 1)

    def fact(self, as_of: int | None = None) -> Fact:
        """The fact; with `as_of`, as the store held it then (the row was selected as known by then)."""
        fact = self.known if self.known is not None else orjson.loads(self.line)  # type: ignore[arg-type]
        return fact if as_of is None else believed_at(fact, as_of) or fact
