"""Beyond the schema, on the lines a change adds or closes: ids bound to their agent and transaction
time (base/ids.py), no transaction time in the future, and agents whose id tags differ."""

from collections.abc import Iterable
from typing import Any

from memstack.base import ids
from memstack.base.clock import TRANSACTION_FIELDS
from memstack.base.errors import MemstackError
from memstack.base.layout import Place
from memstack.base.times import parse_ts
from memstack.integrity.rules.records import SCHEMA_OF
from memstack.integrity.rules.text import MAX_PER_FILE, parse
from memstack.integrity.violations import Violation

ID_FIX = ("write records with memstack (`intake write`, `fact add`, `capture`, `promote`): its ids carry the record's"
          " transaction time and agent, so an id is valid in one file only and never copied from another")


FUTURE_FIX = ("record when it really happened: transaction times are never later than now"
              " (memstack.yaml clock.max_skew_seconds)")


def transaction_ms(kind: str, field: str, value: Any) -> int | None:
    """A record's transaction time as integer ms (None when absent or unreadable: the schema reports it)."""
    if kind == "intake":
        try:
            return parse_ts(value, field) if isinstance(value, str) else None
        except (MemstackError, OverflowError, ValueError, OSError):
            return None
    return value if type(value) is int else None


def bindings(path: str, place: Place, numbered: Iterable[tuple[int, bytes]], *, new_from: int,
             clock: Any, legacy_ids: bool = False) -> tuple[list[Violation], list[tuple[int, str]], set[str]]:
    """Beyond the schema, for the lines a change adds or closes: no transaction time in the future
    (`clock`: memstack.clock.Clock), and a line numbered `new_from` or later (a new record) carries an
    id bound to its agent and transaction time (memstack/base/ids.py); with `legacy_ids` (the audit of a whole
    state, which cannot tell when a line was written) an id of no bound form is let be. Returns the violations, the
    (line, superseded_by) pairs a fact file's lines name, and the ids of the new lines."""
    kind = SCHEMA_OF[place.kind]
    fields = TRANSACTION_FIELDS.get(kind, ())
    bound_field = {"intake": "created_at", "fact": "recorded_at"}.get(kind)
    found: list[Violation] = []
    successors: list[tuple[int, str]] = []
    new_ids: set[str] = set()
    for number, raw in numbered:
        record, problem = parse(raw)
        if problem or not isinstance(record, dict):
            continue  # `records` reports it
        for field in fields:
            ms = transaction_ms(kind, field, record.get(field))
            if ms is not None and clock.too_late(ms):
                found.append(Violation(path, number, "I5", clock.problem(field, ms), FUTURE_FIX))
        if kind == "fact" and isinstance(record.get("superseded_by"), str):
            successors.append((number, record["superseded_by"]))
        if bound_field is None or number < new_from:
            continue
        if isinstance(record.get("id"), str):
            new_ids.add(record["id"])
        ms = transaction_ms(kind, bound_field, record.get(bound_field))
        if ms is not None and place.agent and not (legacy_ids and not ids.ID.match(str(record.get("id")))):
            why = ids.problem(record.get("id"), ms, place.agent)
            if why:
                found.append(Violation(path, number, "I5", why.split(" — ")[0], ID_FIX))
        if len(found) > MAX_PER_FILE:
            break
    return found, successors, new_ids


def tag_clash(path: str, place: Place, agents: Iterable[str]) -> list[Violation]:
    """A new agent folder's id tag must be no other agent's among `agents` (ids are bound to a folder by
    that tag)."""
    tag = ids.agent_tag(place.agent)
    return [Violation(path, 0, "I7", f"agent {place.agent!r} has the id tag {tag} of agent {other!r}: ids could"
                                     " not tell their files apart", "name the agent differently")
            for other in agents if other != place.agent and ids.agent_tag(other) == tag]
