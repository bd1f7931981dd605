"""I5 on records: each line of a JSONL file (and each SOIL record) is a JSON object valid against its
schema (`schemas/`), in the file of its own agent, day or month; an intake id is new to its file. I7 on
each line: UTF-8, no CR."""

from collections.abc import Callable, Iterable
from typing import Any

from memstack.base import layout, schemas
from memstack.base.errors import MemstackError
from memstack.base.layout import Place
from memstack.base.times import day, parse_ts
from memstack.integrity.rules.facts import fact_problems
from memstack.integrity.rules.text import COMMITTED_ID, MAX_PER_FILE, carriage_return, parse, text
from memstack.integrity.violations import Violation

SCHEMA_OF = {layout.INTAKE: "intake", layout.PROMOTIONS: "promotion", layout.BINDER: "binder",
             layout.FACTS: "fact", layout.SOIL: "soil",
             layout.TOMBSTONES: "tombstone", layout.ERASURES: "erasure"}


def schema_problems(kind: str, record: Any) -> str:
    """Every way `record` breaks schemas/<kind>.schema.json, in one line ("" when valid)."""
    return "; ".join(error.removeprefix("(record): ") for error in schemas.errors(kind, record))


def _where_it_belongs(place: Place, record: dict[str, Any]) -> list[str]:
    """The checks a schema cannot make: a record's agent, day or month agree with its path."""
    problems = []
    if place.agent and record.get("agent") != place.agent:
        problems.append(f"agent {record.get('agent')!r} is not the folder's agent {place.agent!r}")
    if place.kind == layout.PROMOTIONS and place.agent and "file" in record \
            and record["file"] != f"intake/{place.agent}/{place.date}.jsonl":
        problems.append(f"file {record['file']!r} is not the intake file of this ledger shard"
                        f" (intake/{place.agent}/{place.date}.jsonl)")
    field = {layout.INTAKE: "created_at", layout.FACTS: "recorded_at",
             layout.TOMBSTONES: "forgotten_at"}.get(place.kind)
    if field is not None:
        try:
            when = day(parse_ts(record[field], field))
        except (MemstackError, KeyError, OverflowError, ValueError, OSError):
            return problems  # the schema reports a bad or missing time
        if not when.startswith(place.date):
            period = "day" if place.kind == layout.INTAKE else "month"
            problems.append(f"{field} {when} is not on the file's {period} {place.date}")
    return problems


def records(path: str, place: Place, numbered: Iterable[tuple[int, bytes]], old: bytes = b"", *,
            ratified: Callable[[], bool] | None = None) -> list[Violation]:
    """Each given line of a JSONL file is a JSON object valid against its schema, in the right file;
    an appended intake record brings an id that is new to the file (`old`: its committed content) and
    claims no tier "ratified", unless `ratified()`, asked only then, lets it (lines memstack 0.1.0
    may have written: Checker.ratified_intake)."""
    kind = SCHEMA_OF[place.kind]
    fix = f"make the line a valid {kind} record (schemas/{kind}.schema.json)"
    found = []
    seen: set[Any] = {i.decode() for i in COMMITTED_ID.findall(old)} if kind == "intake" else set()
    for number, raw in numbered:
        if not raw.strip():
            found.append(Violation(path, number, "I5", "empty line", "remove it"))
            continue
        try:
            raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            found.append(Violation(path, number, "I7", f"is not UTF-8 (byte 0x{raw[exc.start]:02x})",
                                   "save the file as UTF-8"))
            continue
        found += carriage_return(path, raw, number)
        record, problem = parse(raw)
        if problem:
            found.append(Violation(path, number, "I5", f"line {problem}", fix))
        elif not isinstance(record, dict):
            found.append(Violation(path, number, "I5", "line is not a JSON object", fix))
        else:
            problems = schema_problems(kind, record)
            if not problems and kind == "fact":
                problems = "; ".join(fact_problems(record))
            if problems:
                found.append(Violation(path, number, "I5", f"invalid {kind} record: {problems}", fix))
            if kind == "intake" and record.get("tier") == "ratified" \
                    and not (ratified is not None and ratified()):
                found.append(Violation(path, number, "I5", "intake record at tier 'ratified': only a person's Binder"
                                       " ratification makes a record ratified",
                                       "write it at observed, fetched or verified (`memstack intake write`); a"
                                       " person ratifies it (`memstack binder ratify ID`)"))
            if kind == "intake" and "id" in record:
                ident = str(record["id"])
                if ident in seen:
                    found.append(Violation(path, number, "I5", f"intake id {ident} is already in the file",
                                           "give the record a new id (`memstack intake write` does)"))
                seen.add(ident)
            found += [Violation(path, number, "I5", problem, f"write the record to its own agent's {place.kind} file")
                      for problem in _where_it_belongs(place, record)]
        if len(found) > MAX_PER_FILE:
            break
    return found


def soil(path: str, place: Place, data: bytes) -> list[Violation]:
    """A SOIL record: one JSON object valid against its schema, its collection and key those of its path."""
    found = text(path, data)
    if found:
        return found
    record, problem = parse(data)
    fix = "write it with `memstack soil put|update` (schemas/soil.schema.json)"
    if problem:
        return [Violation(path, 0, "I5", problem, fix)]
    if not isinstance(record, dict):
        return [Violation(path, 0, "I5", "is not a JSON object", fix)]
    problems = schema_problems("soil", record)
    found = [Violation(path, 0, "I5", f"invalid soil record: {problems}", fix)] if problems else []
    for field, expected in (("collection", place.collection), ("key", place.key)):
        if record.get(field) != expected:
            found.append(Violation(path, 0, "I5",
                                   f"{field} {record.get(field)!r} does not match the path ({expected!r})",
                                   "keep the record at store/<collection>/<key>.json of its own collection and key"))
    return found


def view_json(path: str, data: bytes, rebuild: str) -> list[Violation]:
    """A derived view no builder is registered for yet: valid JSON is all that is checked."""
    found = text(path, data)
    if not found:
        _, problem = parse(data)
        if problem:
            found = [Violation(path, 0, "I5", problem, f"regenerate it (`{rebuild}`)")]
    return found
