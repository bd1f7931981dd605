"""I2: supersede, don't delete. No fact is removed; a superseded fact never changes; an open fact
changes only by being closed (valid_to, expired_at, superseded_by); new facts bring new ids."""

from collections.abc import Callable
from functools import cache
from typing import Any

import orjson

from memstack.base.forgotten import Files, Forgotten
from memstack.integrity.rules.text import COMMITTED_ID, fact_of, line_of, lines
from memstack.integrity.violations import Violation
from memstack.kb import disputes
from memstack.kb.facts import CLOSING_FIELDS, MAX_MS, MIN_RECORDED_MS, MIN_VALID_MS

I2_FIX = ("restore the fact ({restore}); facts are never deleted or edited: close an open fact"
          " (set valid_to, expired_at, superseded_by) and append its successor")


def same(a: Any, b: Any) -> bool:
    """Equal and of the same JSON types all the way down (2000 is not 2000.0, 1 is not true)."""
    if a is ... or b is ...:
        return a is b
    return bool(orjson.dumps(a, option=orjson.OPT_SORT_KEYS) == orjson.dumps(b, option=orjson.OPT_SORT_KEYS))


def fact_problems(fact: dict[str, Any]) -> list[str]:
    """What a schema cannot say about a fact: times are integers in range, and open and closed agree."""
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


def closing_problems(old: dict[str, Any], new: dict[str, Any],
                     forgotten: Callable[[], Forgotten] | None = None) -> list[str]:
    """What is wrong with `new` as the next state of the committed fact `old` (nothing if unchanged).

    The one change allowed: an open fact (valid_to null) is closed. valid_to becomes
    an integer after valid_from, expired_at an integer (when the closing was recorded),
    and superseded_by the successor's id, or stays null when the fact was invalidated
    with no successor (`memstack fact invalidate`). A superseded fact never changes,
    so closing twice is refused too. Two re-closings are a merge's, not edits: a rival closing that ranks
    first (`_rival_closing`), and a closing with a successor in place of the one forgetting gave the fact
    (`disputes.replaces_forgetting`: its tombstone, in `forgotten`, the state's, says that closing).
    """
    if same(old, new):
        return []
    fact = old["id"]
    if old.get("valid_to") is not None and (_rival_closing(old, new)
                                            or disputes.replaces_forgetting(old, new, forgotten)):
        return []
    if old.get("valid_to") is not None:
        changed = sorted(k for k in old.keys() | new.keys() if not same(old.get(k, ...), new.get(k, ...)))
        return [f"superseded fact {fact} changed ({', '.join(changed)}); a superseded fact never changes"]
    problems = []
    others = sorted(k for k in old.keys() | new.keys()
                    if k not in CLOSING_FIELDS and not same(old.get(k, ...), new.get(k, ...)))
    if others:
        problems.append(f"open fact {fact} changed {', '.join(others)}; only a closing may change it")
    valid_to, valid_from = new.get("valid_to"), old.get("valid_from")
    if valid_to is None:
        problems.append(f"open fact {fact} changed without being closed (valid_to is still null)")
        return problems
    if type(valid_to) is not int or (type(valid_from) is int and valid_to <= valid_from):
        problems.append(f"closing fact {fact}: valid_to {valid_to!r} must be an integer"
                        f" after valid_from {valid_from!r}")
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
    return all(same(old.get(k, ...), new.get(k, ...)) for k in old.keys() | new.keys() if k not in CLOSING_FIELDS) \
        and disputes.winner(old, new) is new and not same(old, new)


def facts(path: str, old: bytes, new: bytes, *, prefix: bool, restore: str,
          files: Files | None = None) -> tuple[list[Violation], list[tuple[int, bytes]]]:
    """I2 on a fact file present on both sides; returns violations and the lines to validate
    (appended facts and closed ones; none unless `prefix`). `files`: the new state, whose tombstones are read
    only if a closing forgetting made is replaced."""
    fix = I2_FIX.format(restore=restore)
    forgotten = None if files is None else cache(lambda: Forgotten.of(files))
    base = old if not old or old.endswith(b"\n") else old + b"\n"
    if new.startswith(base):  # the common case: facts appended, nothing closed
        return _new_ids(path, old, new[len(base):], line_of(new, len(base))) if prefix else ([], [])
    old_lines, new_lines = lines(old), lines(new)
    if not prefix:
        return _facts_survive(path, old_lines, new_lines, fix, forgotten=forgotten), []
    found: list[Violation] = []
    check: list[tuple[int, bytes]] = []
    for index, old_line in enumerate(old_lines):
        new_line = new_lines[index] if index < len(new_lines) else None
        if new_line == old_line:
            continue
        before = fact_of(old_line)
        after = fact_of(new_line) if new_line is not None else None
        if before is None:
            found.append(Violation(path, index + 1, "I2", f"committed line {index + 1} changed", fix))
        elif after is None or after["id"] != before["id"]:
            # Lines moved: say which facts are gone, or that they were reordered.
            return found + _facts_survive(path, old_lines[index:], new_lines, fix, offset=index, moved=True,
                                          forgotten=forgotten), check
        else:
            assert new_line is not None  # `after` was read from it
            found += [Violation(path, index + 1, "I2", problem, fix)
                      for problem in closing_problems(before, after, forgotten)]
            check.append((index + 1, new_line))
    if len(new_lines) > len(old_lines):
        start = len(b"\n".join(new_lines[:len(old_lines)])) + (1 if old_lines else 0)
        more, appended = _new_ids(path, b"\n".join(old_lines), new[start:], len(old_lines) + 1)
        found += more
        check += appended
    return found, check


def _new_ids(path: str, old: bytes, tail: bytes, first: int) -> tuple[list[Violation], list[tuple[int, bytes]]]:
    """Appended facts must bring new ids: not one of the file's committed facts, nor twice."""
    appended = list(enumerate(lines(tail), start=first))
    found, seen = [], set()
    # Facts are written as compact JSON with sorted keys, so a committed id appears as `"id":"<id>"`:
    # one pass over the committed bytes, not one search of them per appended fact.
    committed: set[bytes] = set()
    if appended:
        committed = set(COMMITTED_ID.findall(old))
        if len(committed) < old.count(b"\n") + (0 if old.endswith(b"\n") or not old else 1):
            # Not every committed line is compact JSON: read their ids properly.
            committed = {str(f["id"]).encode() for f in map(fact_of, lines(old)) if f is not None}
    for number, raw in appended:
        fact = fact_of(raw)
        if fact is None:
            continue  # the schema check reports it
        ident = fact["id"]
        if ident in seen or ident.encode() in committed:
            found.append(Violation(path, number, "I2", f"fact id {ident} is already in the file",
                                   "give the new fact a new id; to change a fact, close it and append its successor"))
        seen.add(ident)
    return found, appended


def _facts_survive(path: str, old_lines: list[bytes], new_lines: list[bytes], fix: str, *, offset: int = 0,
                   moved: bool = False, forgotten: Callable[[], Forgotten] | None = None) -> list[Violation]:
    """Every committed fact is still in `new`, by id, unchanged or properly closed."""
    present = set(new_lines)
    gone = [(offset + i, line) for i, line in enumerate(old_lines) if line not in present]
    by_id: dict[str, tuple[int, dict[str, Any]]] = {}
    if gone:
        known = set(old_lines)
        for number, raw in enumerate(new_lines, start=1):
            fact = fact_of(raw) if raw not in known else None
            if fact is not None:
                by_id.setdefault(fact["id"], (number, fact))
    found = []
    for index, raw in gone:
        before = fact_of(raw)
        if before is None:
            found.append(Violation(path, index + 1, "I2", f"committed line {index + 1} changed or was removed", fix))
        elif before["id"] not in by_id:
            found.append(Violation(path, index + 1, "I2", f"fact {before['id']} (line {index + 1}) was removed", fix))
        else:
            number, after = by_id[before["id"]]
            found += [Violation(path, number, "I2", problem, fix) for problem in closing_problems(before, after,
                                                                                                   forgotten)]
    if moved and not found:
        found.append(Violation(path, offset + 1, "I2", f"facts were reordered from line {offset + 1}; a fact keeps its"
                                                       " line, new facts are appended at the end", fix))
    return found


def ids_in(data: bytes) -> set[str]:
    """The ids of the facts of a fact file (one pass when its lines are compact JSON, as memstack writes them)."""
    found = {i.decode() for i in COMMITTED_ID.findall(data)}
    if len(found) < data.count(b"\n") + (0 if data.endswith(b"\n") or not data else 1):
        found |= {str(f["id"]) for f in map(fact_of, lines(data)) if f is not None}
    return found


def dangling(path: str, number: int, successor: str) -> Violation:
    return Violation(path, number, "I2", f"superseded_by {successor} names no fact (neither in this change nor"
                                         " before it): a closing names the successor that replaces the fact",
                     "append the successor fact in the same commit, or close without one (superseded_by null,"
                     " `memstack fact invalidate`)")
