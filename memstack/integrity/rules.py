"""The invariants I1-I8 (docs/reference.md) as pure functions of a file's old and new bytes.

Each function looks at one file of one change and returns the violations it
finds, every one of them (capped per file, so a broken generator cannot drown
the report). They never read the store: the engine in `check.py` hands them the
bytes git has, and reads only the files a change touches.

History rules (I1 logs, I2 facts, I3 handoffs) compare a file with its version
in a base: the parent commit, or HEAD for the staged index. They come in two
strengths. Against the first parent (or HEAD) the base must be a *prefix*: logs
grow only at the end, old facts keep their lines. Against a merge's other
parents, and against the old tip of a force-pushed branch, the base must only
*survive*: each of its lines (facts: by id) is still there, in the same order
(logs), while the other side's records may be interleaved.
"""

import re
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from memstack.base import layout
from memstack.base.layout import Place
from memstack.integrity.violations import Violation

if TYPE_CHECKING:
    from memstack.base.secrets import Policy

MAX_PER_FILE = 50  # violations listed per file; the rest are counted in one more line

I1_FIX = ("restore the committed lines ({restore}) and add new records only as new lines at the end;"
          " append-only logs are never edited, reordered, truncated, deleted or renamed")
I2_FIX = ("restore the fact ({restore}); facts are never deleted or edited: close an open fact"
          " (set valid_to, expired_at, superseded_by) and append its successor")
I3_FIX = "restore the sealed handoff ({restore}) and write a new one instead (`memstack handoff write`)"
I8_FIX = ("remove it (keep a reference: the variable's or the vault entry's name) and rotate the credential;"
          " once committed it stays in the history: see README, Secrets; or mark a deliberate exception with"
          " `pragma: allowlist secret` on its line")


def cap(found: list[Violation], path: str) -> list[Violation]:
    if len(found) <= MAX_PER_FILE:
        return found
    rest = len(found) - MAX_PER_FILE
    return found[:MAX_PER_FILE] + [Violation(path, 0, found[MAX_PER_FILE].rule,
                                             f"and {rest} more violations in this file", "fix the ones above first")]


def lines(data: bytes) -> list[bytes]:
    """The lines of a file, without their newlines (a last line without one counts as a line)."""
    if not data:
        return []
    parts = data.split(b"\n")
    if parts[-1] == b"":
        parts.pop()
    return parts


def line_of(data: bytes, offset: int) -> int:
    return data.count(b"\n", 0, offset) + 1


# ---- I7: text ---------------------------------------------------------------------------------

def final_newline(path: str, data: bytes) -> list[Violation]:
    """The file ends in a newline (an empty file passes: an empty log)."""
    if not data or data.endswith(b"\n"):
        return []
    return [Violation(path, line_of(data, len(data)), "I7", "the last line has no final newline",
                      "end the file with a newline")]


def text(path: str, data: bytes) -> list[Violation]:
    """UTF-8, not empty, ending in a newline (JSONL logs are checked line by line instead)."""
    try:
        data.decode("utf-8")
    except UnicodeDecodeError as exc:
        return [Violation(path, line_of(data, exc.start), "I7",
                          f"is not UTF-8 (byte 0x{data[exc.start]:02x})", "save the file as UTF-8")]
    if not data:
        return [Violation(path, 0, "I7", "is empty", "write its content, or delete it")]
    return final_newline(path, data)


# ---- I5: records ------------------------------------------------------------------------------

SCHEMA_OF = {layout.INTAKE: "intake", layout.PROMOTIONS: "promotion", layout.BINDER: "binder",
             layout.FACTS: "fact", layout.SOIL: "soil"}


def _json(raw: bytes) -> tuple[Any, str]:
    import orjson

    try:
        return orjson.loads(raw), ""
    except orjson.JSONDecodeError as exc:
        return None, f"is not valid JSON ({exc})"


def _schema_problems(kind: str, record: Any) -> str:
    """Every way `record` breaks schemas/<kind>.schema.json, in one line ("" when valid)."""
    from memstack.base import schemas

    return "; ".join(error.removeprefix("(record): ") for error in schemas.errors(kind, record))


def _where_it_belongs(place: Place, record: dict[str, Any]) -> list[str]:
    """The checks a schema cannot make: a record's agent, day or month agree with its path."""
    from memstack.base.errors import MemstackError
    from memstack.base.times import day, parse_ts

    problems = []
    if place.agent and record.get("agent") != place.agent:
        problems.append(f"agent {record.get('agent')!r} is not the folder's agent {place.agent!r}")
    field = {layout.INTAKE: "created_at", layout.FACTS: "recorded_at"}.get(place.kind)
    if field is not None:
        try:
            when = day(parse_ts(record[field], field))
        except (MemstackError, KeyError, OverflowError, ValueError, OSError):
            return problems  # the schema reports a bad or missing time
        if not when.startswith(place.date):
            period = "day" if place.kind == layout.INTAKE else "month"
            problems.append(f"{field} {when} is not on the file's {period} {place.date}")
    return problems


def records(path: str, place: Place, numbered: Iterable[tuple[int, bytes]], old: bytes = b"") -> list[Violation]:
    """Each given line of a JSONL file is a JSON object valid against its schema, in the right file;
    an appended intake record brings an id that is new to the file (`old`: its committed content)."""
    kind = SCHEMA_OF[place.kind]
    fix = f"make the line a valid {kind} record (schemas/{kind}.schema.json)"
    found = []
    seen: set[Any] = {i.decode() for i in _COMMITTED_ID.findall(old)} if kind == "intake" else set()
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
        record, problem = _json(raw)
        if problem:
            found.append(Violation(path, number, "I5", f"line {problem}", fix))
        elif not isinstance(record, dict):
            found.append(Violation(path, number, "I5", "line is not a JSON object", fix))
        else:
            problems = _schema_problems(kind, record)
            if not problems and kind == "fact":
                problems = "; ".join(fact_problems(record))
            if problems:
                found.append(Violation(path, number, "I5", f"invalid {kind} record: {problems}", fix))
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
    record, problem = _json(data)
    fix = "write it with `memstack soil put|update` (schemas/soil.schema.json)"
    if problem:
        return [Violation(path, 0, "I5", problem, fix)]
    if not isinstance(record, dict):
        return [Violation(path, 0, "I5", "is not a JSON object", fix)]
    problems = _schema_problems("soil", record)
    found = [Violation(path, 0, "I5", f"invalid soil record: {problems}", fix)] if problems else []
    for field, expected in (("collection", place.collection), ("key", place.key)):
        if record.get(field) != expected:
            found.append(Violation(path, 0, "I5", f"{field} {record.get(field)!r} does not match the path ({expected!r})",
                                   "keep the record at store/<collection>/<key>.json of its own collection and key"))
    return found


def view_json(path: str, data: bytes, rebuild: str) -> list[Violation]:
    """A derived view no builder is registered for yet: valid JSON is all that is checked."""
    found = text(path, data)
    if not found:
        _, problem = _json(data)
        if problem:
            found = [Violation(path, 0, "I5", problem, f"regenerate it (`{rebuild}`)")]
    return found


def config(path: str, data: bytes) -> tuple[list[Violation], list[re.Pattern[str]] | None]:
    """memstack.yaml parses, validates against its schema, and its forbidden patterns compile."""
    from memstack.base import config as config_module
    from memstack.base.errors import MemstackError
    from memstack.integrity import identity

    found = text(path, data)
    if found:
        return found, None
    fix = "fix memstack.yaml (schemas/config.schema.json)"
    try:
        document = config_module.parse(data.decode("utf-8"), path)
    except MemstackError as exc:
        return [Violation(path, 0, "I5", exc.message.removeprefix(f"{path}: "), fix)], None
    problems = _schema_problems("config", document)
    if problems:
        return [Violation(path, 0, "I5", f"invalid config: {problems}", fix)], None
    patterns = config_module.Config(Path(path), document).get("identity", "forbidden_patterns")
    try:
        compiled = identity.compile_patterns(list(patterns))
    except MemstackError as exc:
        return [Violation(path, 0, "I5", exc.message.removeprefix("memstack.yaml: "), fix)], None
    try:
        secrets_policy(document)
    except MemstackError as exc:
        return [Violation(path, 0, "I5", f"invalid config: {exc.message}", fix)], None
    return [], compiled


def secrets_policy(document: Any) -> "Policy":
    """The `secrets:` block of a parsed memstack.yaml (I8's detectors off, its extra patterns)."""
    from memstack.base.secrets import policy

    return policy(document)


# ---- I8: no credentials ------------------------------------------------------------------------

TEXT_KINDS = (layout.HANDOFF, layout.IDENTITY, layout.WILLOW_KIND, layout.BINDER_FILE)


def secrets(path: str, place: Place, new: bytes, old: Callable[[], bytes | None],
            policy: "Policy | None" = None) -> list[Violation]:
    """I8 on the lines `new` adds to a memory file (`old` reads the base's version, when needed), with
    a store's `secrets:` block: each credential's kind and field, never its value."""
    from memstack.base.secrets import DEFAULT, added

    json_lines = place.kind not in TEXT_KINDS and not path.endswith(".md")
    return [Violation(path, number, "I8", f"{finding.kind} in {finding.field}", I8_FIX)
            for number, finding in added(new, old, json_lines, policy or DEFAULT)]


def redacted(found: list[Violation]) -> list[Violation]:
    """The violations, with any message that quotes a credential (a schema error quoting a bad value)
    redacted: a check never prints one."""
    from dataclasses import replace

    from memstack.base.secrets import redact, triggered

    return [replace(v, what=redact(v.what)) if triggered(v.what) else v for v in found]


# ---- I1: append-only logs ----------------------------------------------------------------------

def _first_difference(old: list[bytes], new: list[bytes]) -> tuple[int, str]:
    """The 1-based line where `old` stops being a prefix of `new`, and what happened to it."""
    index = next((i for i, (a, b) in enumerate(zip(old, new)) if a != b), min(len(old), len(new)))
    if index >= len(new):
        return index + 1, f"lines {index + 1}-{len(old)} were removed (the log was truncated)"
    if old[index] in set(new[index:]):
        return index + 1, f"line {index + 1} was moved (lines reordered or a line inserted before it)"
    return index + 1, f"line {index + 1} was edited or deleted"


def append_only(path: str, old: bytes, new: bytes, *, prefix: bool, restore: str) -> tuple[list[Violation], int]:
    """I1 on a log that exists on both sides. Returns the violations and, when `new` only
    appends whole lines to `old`, the byte offset in `new` where the appended lines start
    (-1 otherwise, or when not asked to find it: `prefix` False)."""
    fix = I1_FIX.format(restore=restore)
    base = old if not old or old.endswith(b"\n") else old + b"\n"  # a torn last line may be completed, never edited
    if new.startswith(base):
        return [], len(base) if prefix else -1
    old_lines, new_lines = lines(old), lines(new)
    if not prefix:
        missing = _first_lost(old_lines, new_lines)
        if missing is None:
            return [], -1
        return [Violation(path, missing + 1, "I1", f"line {missing + 1} of the other side is lost", fix)], -1
    if new.startswith(old):
        number = len(old_lines)
        return [Violation(path, number, "I1",
                          f"line {number}, committed without a final newline, was extended", fix)], -1
    number, what = _first_difference(old_lines, new_lines)
    return [Violation(path, number, "I1", what, fix)], -1


def _first_lost(old: list[bytes], new: list[bytes]) -> int | None:
    """The index of the first line of `old` that `new` lacks, or None when every line survives.

    Order is not required: a merge keeps the first parent's order, and the other
    side's records, already interleaved with it, land where the union puts them."""
    left = Counter(new)
    for index, line in enumerate(old):
        if left[line] == 0:
            return index
        left[line] -= 1
    return None


class Numbered:
    """The lines of `data` from byte `start` on, without their newlines, each with its line number
    (`first` for the first), as `lines` splits them: iterable any number of times, never listed, so
    the lines a commit appends to a log (a first promotion's ledger: a line per intake record of the
    store) cost one line at a time, not a copy of each."""

    def __init__(self, data: bytes, start: int = 0, first: int = 1) -> None:
        self.data, self.start, self.first = data, start, first

    def __iter__(self) -> Iterator[tuple[int, bytes]]:
        data, pos, number, end = self.data, self.start, self.first, len(self.data)
        while pos < end:
            at = data.find(b"\n", pos)
            if at < 0:
                yield number, data[pos:]
                return
            yield number, data[pos:at]
            number, pos = number + 1, at + 1


def appended_lines(new: bytes, start: int) -> Numbered:
    """The lines of `new` from byte `start` on, with their 1-based line numbers."""
    return Numbered(new, start, line_of(new, start))


# ---- I2: facts ---------------------------------------------------------------------------------

CLOSING = ("valid_to", "expired_at", "superseded_by")


def _fact(raw: bytes) -> dict[str, Any] | None:
    record, problem = _json(raw)
    return record if not problem and isinstance(record, dict) and isinstance(record.get("id"), str) else None


def _same(a: Any, b: Any) -> bool:
    """Equal and of the same JSON types all the way down (2000 is not 2000.0, 1 is not true)."""
    import orjson

    if a is ... or b is ...:
        return a is b
    return bool(orjson.dumps(a, option=orjson.OPT_SORT_KEYS) == orjson.dumps(b, option=orjson.OPT_SORT_KEYS))


def fact_problems(fact: dict[str, Any]) -> list[str]:
    """What a schema cannot say about a fact: times are integers in range, and open and closed agree."""
    from memstack.kb.facts import MAX_MS, MIN_RECORDED_MS, MIN_VALID_MS

    problems = []
    for field, low, nullable in (("valid_from", MIN_VALID_MS, False), ("valid_to", MIN_VALID_MS, True),
                                 ("recorded_at", MIN_RECORDED_MS, False), ("expired_at", MIN_RECORDED_MS, True)):
        value = fact.get(field)
        if value is None and nullable:
            continue
        if type(value) is not int or not low <= value <= MAX_MS:
            problems.append(f"{field} {value!r} must be integer milliseconds between {low} and {MAX_MS}")
    if problems:
        return problems
    if (fact["valid_to"] is None) != (fact["expired_at"] is None):
        problems.append("valid_to and expired_at are set together (a closing) or both null (open)")
    if fact["valid_to"] is None and fact.get("superseded_by") is not None:
        problems.append("an open fact has no superseded_by")
    if fact["valid_to"] is not None and fact["valid_to"] <= fact["valid_from"]:
        problems.append(f"valid_to {fact['valid_to']} must be after valid_from {fact['valid_from']}")
    if fact.get("superseded_by") is not None and fact.get("superseded_by") == fact.get("id"):
        problems.append("a fact is not its own successor")
    if fact["expired_at"] is not None and not fact["expired_at"] >= max(fact["recorded_at"], 1):
        problems.append(f"expired_at {fact['expired_at']} must not be before recorded_at {fact['recorded_at']}"
                        " (nor 0): a fact is closed after the store learned it")
    return problems


def closing_problems(old: dict[str, Any], new: dict[str, Any]) -> list[str]:
    """What is wrong with `new` as the next state of the committed fact `old` (nothing if unchanged).

    The one change allowed: an open fact (valid_to null) is closed. valid_to becomes
    an integer after valid_from, expired_at an integer (when the closing was recorded),
    and superseded_by the successor's id, or stays null when the fact was invalidated
    with no successor (`memstack fact invalidate`). A superseded fact never changes,
    so closing twice is refused too.
    """
    if _same(old, new):
        return []
    fact = old["id"]
    if old.get("valid_to") is not None and _rival_closing(old, new):
        return []
    if old.get("valid_to") is not None:
        changed = sorted(k for k in old.keys() | new.keys() if not _same(old.get(k, ...), new.get(k, ...)))
        return [f"superseded fact {fact} changed ({', '.join(changed)}); a superseded fact never changes"]
    problems = []
    others = sorted(k for k in old.keys() | new.keys() if k not in CLOSING and not _same(old.get(k, ...), new.get(k, ...)))
    if others:
        problems.append(f"open fact {fact} changed {', '.join(others)}; only a closing may change it")
    valid_to, valid_from = new.get("valid_to"), old.get("valid_from")
    if valid_to is None:
        problems.append(f"open fact {fact} changed without being closed (valid_to is still null)")
        return problems
    if type(valid_to) is not int or (type(valid_from) is int and valid_to <= valid_from):
        problems.append(f"closing fact {fact}: valid_to {valid_to!r} must be an integer after valid_from {valid_from!r}")
    if type(new.get("expired_at")) is not int:
        problems.append(f"closing fact {fact}: expired_at must be set to when it was closed (integer ms)")
    successor = new.get("superseded_by")
    if old.get("superseded_by") is not None and successor != old.get("superseded_by"):
        problems.append(f"closing fact {fact}: superseded_by was {old.get('superseded_by')!r} and changed")
    elif successor is not None and (not isinstance(successor, str) or successor == fact):
        problems.append(f"closing fact {fact}: superseded_by must be the successor's id (or null), not {successor!r}")
    return problems


def _rival_closing(old: dict[str, Any], new: dict[str, Any]) -> bool:
    """A superseded fact re-closed by the merge of two agents' closings (docs/merge.md): both name a
    successor, only the closing differs, and the new one ranks first, so a merge in either direction
    and a rebase that replays the other closing all land on the same line."""
    from memstack.kb import disputes

    return all(_same(old.get(k, ...), new.get(k, ...)) for k in old.keys() | new.keys() if k not in CLOSING) \
        and disputes.winner(old, new) is new and not _same(old, new)


def facts(path: str, old: bytes, new: bytes, *, prefix: bool, restore: str) -> tuple[list[Violation], list[tuple[int, bytes]]]:
    """I2 on a fact file present on both sides; returns violations and the lines to validate
    (appended facts and closed ones; none unless `prefix`)."""
    fix = I2_FIX.format(restore=restore)
    base = old if not old or old.endswith(b"\n") else old + b"\n"
    if new.startswith(base):  # the common case: facts appended, nothing closed
        return _new_ids(path, old, new[len(base):], line_of(new, len(base))) if prefix else ([], [])
    old_lines, new_lines = lines(old), lines(new)
    if not prefix:
        return _facts_survive(path, old_lines, new_lines, fix), []
    found: list[Violation] = []
    check: list[tuple[int, bytes]] = []
    for index, old_line in enumerate(old_lines):
        new_line = new_lines[index] if index < len(new_lines) else None
        if new_line == old_line:
            continue
        before = _fact(old_line)
        after = _fact(new_line) if new_line is not None else None
        if before is None:
            found.append(Violation(path, index + 1, "I2", f"committed line {index + 1} changed", fix))
        elif after is None or after["id"] != before["id"]:
            # Lines moved: say which facts are gone, or that they were reordered.
            return found + _facts_survive(path, old_lines[index:], new_lines, fix, offset=index, moved=True), check
        else:
            found += [Violation(path, index + 1, "I2", problem, fix) for problem in closing_problems(before, after)]
            check.append((index + 1, new_line))
    if len(new_lines) > len(old_lines):
        start = len(b"\n".join(new_lines[:len(old_lines)])) + (1 if old_lines else 0)
        more, appended = _new_ids(path, b"\n".join(old_lines), new[start:], len(old_lines) + 1)
        found += more
        check += appended
    return found, check


_COMMITTED_ID = re.compile(rb'"id":"([^"\\]*)"')


def _new_ids(path: str, old: bytes, tail: bytes, first: int) -> tuple[list[Violation], list[tuple[int, bytes]]]:
    """Appended facts must bring new ids: not one of the file's committed facts, nor twice."""
    appended = list(enumerate(lines(tail), start=first))
    found, seen = [], set()
    # Facts are written as compact JSON with sorted keys, so a committed id appears as `"id":"<id>"`:
    # one pass over the committed bytes, not one search of them per appended fact.
    committed: set[bytes] = set()
    if appended:
        committed = set(_COMMITTED_ID.findall(old))
        if len(committed) < old.count(b"\n") + (0 if old.endswith(b"\n") or not old else 1):
            # Not every committed line is compact JSON: read their ids properly.
            committed = {str(f["id"]).encode() for f in map(_fact, lines(old)) if f is not None}
    for number, raw in appended:
        fact = _fact(raw)
        if fact is None:
            continue  # the schema check reports it
        ident = fact["id"]
        if ident in seen or ident.encode() in committed:
            found.append(Violation(path, number, "I2", f"fact id {ident} is already in the file",
                                   "give the new fact a new id; to change a fact, close it and append its successor"))
        seen.add(ident)
    return found, appended


def _facts_survive(path: str, old_lines: list[bytes], new_lines: list[bytes], fix: str, *,
                   offset: int = 0, moved: bool = False) -> list[Violation]:
    """Every committed fact is still in `new`, by id, unchanged or properly closed."""
    present = set(new_lines)
    gone = [(offset + i, line) for i, line in enumerate(old_lines) if line not in present]
    by_id: dict[str, tuple[int, dict[str, Any]]] = {}
    if gone:
        known = set(old_lines)
        for number, raw in enumerate(new_lines, start=1):
            fact = _fact(raw) if raw not in known else None
            if fact is not None:
                by_id.setdefault(fact["id"], (number, fact))
    found = []
    for index, raw in gone:
        before = _fact(raw)
        if before is None:
            found.append(Violation(path, index + 1, "I2", f"committed line {index + 1} changed or was removed", fix))
        elif before["id"] not in by_id:
            found.append(Violation(path, index + 1, "I2", f"fact {before['id']} (line {index + 1}) was removed", fix))
        else:
            number, after = by_id[before["id"]]
            found += [Violation(path, number, "I2", problem, fix) for problem in closing_problems(before, after)]
    if moved and not found:
        found.append(Violation(path, offset + 1, "I2", f"facts were reordered from line {offset + 1}; a fact keeps its"
                                                       " line, new facts are appended at the end", fix))
    return found


# ---- I3: handoffs ------------------------------------------------------------------------------

def handoff(path: str, place: Place, data: bytes) -> list[Violation]:
    """A new handoff: complete (front matter, open threads, capability table) and in its agent's folder."""
    from memstack.base.errors import MemstackError
    from memstack.handoff import sealed as handoff_module

    found = text(path, data)
    if found:
        return found
    fix = "complete it (front matter agent/date/session, a non-empty '## Open threads', a '## Capability table')"
    try:
        parsed = handoff_module.parse(data.decode("utf-8"), path)
    except MemstackError as exc:
        what = exc.message
        for prefix in (f"{path}: I3 ", f"{path}: ", "handoff: "):
            what = what.removeprefix(prefix)
        return [Violation(path, 0, "I3", what, fix)]
    if parsed.front.get("agent") != place.agent:
        found.append(Violation(path, 0, "I3", f"front matter agent {parsed.front.get('agent')!r} is not the folder's"
                                              f" agent {place.agent!r}", "seal it in its own agent's folder"))
    if str(parsed.front.get("date")) != place.date:
        found.append(Violation(path, 0, "I3", f"front matter date {parsed.front.get('date')!r} is not the file"
                                              f" name's date {place.date}", "name the file after its date"))
    return found


def binder_file(path: str, data: bytes) -> list[Violation]:
    """A document filed in the Binder: UTF-8 text whose SHA-256 is its name (kb/files/<sha256>[.ext])."""
    import hashlib

    fix = "file documents with `memstack binder file PATH`, which names the copy by its content"
    try:
        data.decode("utf-8")
    except UnicodeDecodeError as exc:
        return [Violation(path, 0, "I7", f"is not UTF-8 (byte 0x{data[exc.start]:02x})", fix)]
    digest = hashlib.sha256(data).hexdigest()
    if not path.split("/")[-1].startswith(digest):
        return [Violation(path, 0, "I5", f"its content's SHA-256 is {digest}, not its name", fix)]
    return []


def filed_document(path: str, deleted: bool, restore: str) -> Violation:
    what = "deleted or renamed" if deleted else "edited"
    return Violation(path, 0, "I1", f"a document filed in the Binder was {what}: the Binder is append-only",
                     f"restore it ({restore}); file a new version with `memstack binder file`")


def sealed_handoff(path: str, deleted: bool, restore: str) -> Violation:
    what = "sealed handoff deleted or renamed" if deleted else "sealed handoff edited"
    return Violation(path, 0, "I3", what, I3_FIX.format(restore=restore))


# ---- Bound ids, real closings, transaction times (issue 11) -------------------------------------

ID_FIX = ("write records with memstack (`intake write`, `fact add`, `capture`, `promote`): its ids carry the record's"
          " transaction time and agent, so an id is valid in one file only and never copied from another")
FUTURE_FIX = ("record when it really happened: transaction times are never later than now"
              " (memstack.yaml clock.max_skew_seconds)")


def transaction_ms(kind: str, field: str, value: Any) -> int | None:
    """A record's transaction time as integer ms (None when absent or unreadable: the schema reports it)."""
    if kind == "intake":
        from memstack.base.errors import MemstackError
        from memstack.base.times import parse_ts

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
    from memstack.base import ids
    from memstack.base.clock import TRANSACTION_FIELDS

    kind = SCHEMA_OF[place.kind]
    fields = TRANSACTION_FIELDS.get(kind, ())
    bound_field = {"intake": "created_at", "fact": "recorded_at"}.get(kind)
    found: list[Violation] = []
    successors: list[tuple[int, str]] = []
    new_ids: set[str] = set()
    for number, raw in numbered:
        record, problem = _json(raw)
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


def ids_in(data: bytes) -> set[str]:
    """The ids of the facts of a fact file (one pass when its lines are compact JSON, as memstack writes them)."""
    found = {i.decode() for i in _COMMITTED_ID.findall(data)}
    if len(found) < data.count(b"\n") + (0 if data.endswith(b"\n") or not data else 1):
        found |= {str(f["id"]) for f in map(_fact, lines(data)) if f is not None}
    return found


def dangling(path: str, number: int, successor: str) -> Violation:
    return Violation(path, number, "I2", f"superseded_by {successor} names no fact (neither in this change nor"
                                         " before it): a closing names the successor that replaces the fact",
                     "append the successor fact in the same commit, or close without one (superseded_by null,"
                     " `memstack fact invalidate`)")


def tag_clash(path: str, agent: str, other: str, tag: str) -> Violation:
    return Violation(path, 0, "I7", f"agent {agent!r} has the id tag {tag} of agent {other!r}: ids could not tell"
                                    " their files apart", "name the agent differently")
