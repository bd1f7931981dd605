"""The bi-temporal fact store's operations, over an explicit store root and explicit timestamps.

Nothing here reads the clock (but the guard against future transaction times,
clock.py): the command line passes "now". Queries go
through the SQLite index (kb/index/); `scan_*` give the same answers straight
from the files and are the reference the tests hold the index to. The bulk
operations (`append_many`, `close_many`, `open_facts`, `existing_ids`) are
what promotion builds on.

Semantics in detail (see docs/facts.md):
- A predicate may hold several values at once: `add` never closes anything.
- `invalidate` closes every open fact of the subject and predicate (or only
  those with `object`) that began before `valid_to`; an open fact that begins
  at `valid_to` is the successor (`superseded_by`), and it stays open.
- `capture --contradicts` closes every open fact of the subject and predicate
  at the new fact's `valid_from`, and refuses a new fact that would overlap a
  version already closed (closed facts never change), so a value written
  through contradicting captures never has two versions valid at once.
"""

import hashlib
import os
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

from memstack.base import clock, files, jsonio, limits, schemas
from memstack.base.clock import refuse_future as _refuse_future  # capture_once's `clock` is its argument
from memstack.base.errors import MemstackError, bad
from memstack.base.secrets import refuse_secrets
from memstack.base.times import iso
from memstack.kb import factfiles, facts
from memstack.kb.factfiles import Closing
from memstack.kb.facts import DEFAULT_CONFIDENCE, Fact
from memstack.kb.index import catchup, queries

__all__ = ["Closing", "add", "append_many", "capture", "close_many", "close_many_changes", "existing_ids",
           "get_valid_at", "history", "invalidate", "open_facts", "query_args", "recall", "recall_args",
           "scan_history", "scan_recall", "scan_valid_at"]


def key_lock(subject: str, predicate: str) -> str:
    """The name of the lock one subject and predicate's writes take (files.locked)."""
    return "facts-key-" + hashlib.sha1(f"{subject}\0{predicate}".encode()).hexdigest()


def _key_locked(store: Path, subject: str, predicate: str) -> Any:
    """One lock per subject and predicate: two contradicting captures (or invalidations) of one
    value cannot both read it open and leave two versions valid at once."""
    return files.locked(store, key_lock(subject, predicate))


# --- a capture's two writes as one step ---------------------------------------------------------
# `capture --contradicts` appends the new fact, then closes what it replaces: two files may change.
# Before either write it records both in `.memstack/pending/<key>.json`, and removes that when done.
# A process killed in between leaves the record; the next fact write (or promotion) finishes the
# closings if the new fact was written, and drops the record if it was not. Never a closing that
# points at a fact that was not written: the fact always comes first.
PENDING = "pending"


def _pending_path(store: Path, key: str) -> Path:
    return files.local_dir(store, PENDING) / f"{key}.json"


def finish_pending(store: Path) -> None:
    """Finish the captures killed processes left half done (the ones no live process holds)."""

    try:
        names = sorted(n for n in os.listdir(files.local_dir(store, PENDING)) if n.endswith(".json"))
    except (FileNotFoundError, NotADirectoryError):
        return
    for name in names:
        with files.try_locked(store, name[:-len(".json")]) as held:
            path = files.local_dir(store, PENDING) / name
            if not held or not path.exists():
                continue  # a live capture is at it, or another process finished it
            plan = jsonio.loads(path.read_bytes(), str(path))
            if queries.locate(store, [plan["new"]]):
                where = queries.locate(store, [c[0] for c in plan["closings"]])
                todo = [Closing(*c) for c in plan["closings"] if c[0] in where and facts.is_open(where[c[0]][1])]
                if todo:
                    close_many(store, todo)
            path.unlink()


# --- writes --------------------------------------------------------------------------------------

def add(store: Path, *, subject: str, predicate: str, object: str, valid_from: Any, recorded_at: Any, agent: str,
        confidence: Any = DEFAULT_CONFIDENCE, table: str = "knowledge", source: str | None = None,
        intake_id: str | None = None, id: str | None = None, tier: str | None = None,
        anchors: list[dict[str, Any]] | None = None) -> Fact:
    """Append one open fact (valid_to, expired_at, superseded_by null); returns it."""
    fact = facts.make(subject=subject, predicate=predicate, object=object, valid_from=valid_from,
                      recorded_at=recorded_at, agent=agent, confidence=confidence, table=table, source=source,
                      intake_id=intake_id, id=id, tier=tier, anchors=anchors)
    finish_pending(store)
    append_many(store, [fact], check_ids=id is not None)
    return fact


def _refuse_large(store: Path, fact: Fact) -> None:
    """A fact's texts within limits.text_bytes (base/limits.py)."""
    for field in ("subject", "predicate", "object"):
        limits.check_text(store, field, fact.get(field))


def append_many(store: Path, new: Sequence[Fact], check_ids: bool = True, checked: bool = False) -> list[str]:
    """Append facts, one write per file; returns the files written.

    Every fact is validated first and ids must be new (`check_ids=False` skips the
    look-up for freshly generated ids); if one is bad nothing is written. `checked`: the
    caller commits what it writes through the pre-commit check, which validates each line
    and screens it for credentials (a promotion: factfiles.append then does neither again).
    """
    for fact in new:
        _refuse_large(store, fact)
    ids = [f.get("id") for f in new]
    if len(set(ids)) != len(ids):
        twice = next(i for i, n in Counter(ids).items() if n > 1)
        raise bad("id", repr(twice), "given twice in one batch")
    clock.refuse_future(store, *((field, fact.get(key)) for fact in new
                                 for field, key in (("recorded-at", "recorded_at"), ("expired-at", "expired_at"))))
    if check_ids and new:
        taken = existing_ids(store, [i for i in ids if isinstance(i, str)])
        if taken:
            raise bad("id", repr(sorted(taken)[0]), "a fact with this id already exists (ids are never reused)")
    return factfiles.append(store, new, catchup.note_append, checked=checked)


def close_many(store: Path, closings: Sequence[Closing]) -> list[Fact]:
    """Close facts, one atomic rewrite per file; returns them closed, in the order asked.

    Every closing is checked first (the fact exists, is open, valid_to > valid_from,
    the closing is not recorded before the fact); if one is bad nothing is written.
    """
    return [after for _, after in close_many_changes(store, closings)]


def close_many_changes(store: Path, closings: Sequence[Closing], checked: bool = False) -> list[tuple[Fact, Fact]]:
    """`close_many`, returning each fact as it was (open) and as it is now (closed), in the order asked;
    `checked`: a commit's check validates each closed line (`append_many`), so it is done once, there."""
    clock.refuse_future(store, *(("recorded-at", c.expired_at) for c in closings))
    where = queries.locate(store, [c.fact_id for c in closings])
    for closing in closings:
        if closing.fact_id not in where:
            raise MemstackError(f"bad fact id {closing.fact_id!r}: no such fact")
        facts.close(where[closing.fact_id][1], valid_to=closing.valid_to, expired_at=closing.expired_at,
                    superseded_by=closing.superseded_by)
    closed = factfiles.close_many(store, {i: rel for i, (rel, _) in where.items()}, closings, catchup.note_rewrite,
                                  checked=checked)
    return [(where[c.fact_id][1], after) for c, after in zip(closings, closed, strict=True)]


def invalidate(store: Path, *, subject: str, predicate: str, valid_to: Any, recorded_at: Any,
               object: str | None = None, superseded_by: str | None = None,
               clock: Callable[[], int] | None = None) -> list[Fact]:
    """Close the open facts of subject+predicate (+object) that began before `valid_to`.

    The closing is recorded at `recorded_at` (None: `clock()`, read once the lock is held).
    `superseded_by` defaults to a fact of the same subject and predicate that begins
    exactly at `valid_to`, if the store holds one.
    Nothing open to close is an error.
    """
    subject, predicate = facts.text(subject, "subject"), facts.text(predicate, "predicate")
    end = facts.timestamp(valid_to, "valid-to")
    if recorded_at is None and clock is None:
        raise bad("recorded-at", "None", "give a time")
    recorded = facts.timestamp(clock() if recorded_at is None else recorded_at,  # type: ignore[misc]
                               "recorded-at", transaction=True)
    finish_pending(store)
    with _key_locked(store, subject, predicate):  # decide and close with no writer in between
        if recorded_at is None:
            recorded = facts.timestamp(clock(), "recorded-at", transaction=True)  # type: ignore[misc]
        known = queries.versions(store, subject, predicate)
        candidates = [f for f in known if facts.is_open(f) and (object is None or f["object"] == object)]
        what = f"subject {subject!r}, predicate {predicate!r}" + ("" if object is None else f", object {object!r}")
        if not candidates:
            raise MemstackError.marked("nothing to invalidate: no open fact with {what}"
                                       " (`{verb:memstack fact history --subject S}` lists every version)", what=what)
        closable = [f for f in candidates if f["valid_from"] < end]
        if not closable:
            starts = ", ".join(iso(f["valid_from"]) for f in candidates)
            raise bad("valid-to", iso(end), "must be after the valid_from of the open fact with {what} (it begins"
                      " {starts})", what=what, starts=starts)
        if superseded_by is None:
            closing_ids = {f["id"] for f in closable}
            successors = sorted((f for f in known if f["valid_from"] == end and f["id"] not in closing_ids),
                                key=lambda f: (f["recorded_at"], f["id"]))
            superseded_by = successors[0]["id"] if successors else None
        return close_many(store, [Closing(f["id"], end, recorded, superseded_by) for f in closable])


def capture(store: Path, *, subject: str, predicate: str, object: str, valid_from: Any, recorded_at: Any,
            agent: str, contradicts: bool = False, confidence: Any = DEFAULT_CONFIDENCE,
            source: str | None = None, id: str | None = None,
            clock: Callable[[], int] | None = None, anchors: list[dict[str, Any]] | None = None
            ) -> tuple[Fact, list[Fact]]:
    """Add a decision (table knowledge); with `contradicts`, also close what it replaces.

    Returns the new fact and the facts it closed (superseded_by = the new fact's id,
    expired_at = its recorded_at). The priors are kept. `recorded_at` None takes
    `clock()` once the subject+predicate lock is held, so a closing is never recorded
    before a fact a concurrent capture recorded just ahead of it.
    """
    fact, closed, _ = capture_once(store, subject=subject, predicate=predicate, object=object,
                                   valid_from=valid_from, recorded_at=recorded_at, agent=agent,
                                   contradicts=contradicts, confidence=confidence, source=source, id=id,
                                   clock=clock, once=False, anchors=anchors)
    return fact, closed


def capture_once(store: Path, *, subject: str, predicate: str, object: str, valid_from: Any, recorded_at: Any,
                 agent: str, contradicts: bool = False, confidence: Any = DEFAULT_CONFIDENCE,
                 source: str | None = None, id: str | None = None, clock: Callable[[], int] | None = None,
                 once: bool = True, anchors: list[dict[str, Any]] | None = None) -> tuple[Fact, list[Fact], bool]:
    """`capture`, but (with `once`) a decision already open is not recorded again: when an open
    knowledge fact of this subject and predicate has this object (and, with `contradicts`, no other
    fact is open to close), that fact is returned with True ("already recorded") and nothing is written.
    Decided under the subject's lock, so two identical captures at once record one fact."""

    def make(now: Any) -> Fact:  # a time not given is `now`: taken again once the lock is held
        return facts.make(subject=subject, predicate=predicate, object=object,
                          valid_from=now if valid_from is None else valid_from,
                          recorded_at=now if recorded_at is None else recorded_at, agent=agent,
                          confidence=confidence, source=source, id=id, anchors=anchors)

    if (recorded_at is None or valid_from is None) and clock is None:
        raise bad("recorded-at" if recorded_at is None else "valid-from", "None", "give a time")
    new = make(clock() if clock is not None else None)
    _refuse_large(store, new)
    schemas.validate("fact", new)  # every argument checked before any lock or write, an answer "already
    refuse_secrets(new, store=store)  # recorded" included
    _refuse_future(store, ("recorded-at", new["recorded_at"]))
    finish_pending(store)
    key = key_lock(new["subject"], new["predicate"])
    with files.locked(store, key):  # read, append, close as one step
        if recorded_at is None or valid_from is None:  # so a rival's closing, made just ahead, is before it
            new = make(clock())  # type: ignore[misc]
        closings = []
        versions = queries.versions(store, new["subject"], new["predicate"]) if contradicts or once else []
        if once:
            opened = [prior for prior in versions if facts.is_open(prior)]
            same = [prior for prior in opened if prior["object"] == new["object"] and prior["table"] == "knowledge"]
            if same and (not contradicts or len(same) == len(opened)):
                return same[0], [], True
        if contradicts:
            for prior in versions:
                if facts.is_open(prior):
                    if prior["valid_from"] >= new["valid_from"]:
                        raise bad("valid-from", iso(new["valid_from"]), "the open fact {id} it contradicts begins"
                                  " {begins}; a contradicting fact must begin after it", id=prior["id"],
                                  begins=iso(prior["valid_from"]))
                    closings.append(Closing(prior["id"], new["valid_from"], new["recorded_at"], new["id"]))
                    # a closing that would be refused is refused now, before anything is written
                    facts.close(prior, valid_to=new["valid_from"], expired_at=new["recorded_at"])
                elif prior["valid_to"] is not None and prior["valid_to"] > new["valid_from"]:
                    raise bad("valid-from", iso(new["valid_from"]), "fact {id} ({object!r}) holds until {until} and is"
                              " closed (closed facts never change); a contradicting fact must begin at or after that",
                              id=prior["id"], object=prior["object"], until=iso(prior["valid_to"]))
        if not closings:
            append_many(store, [new], check_ids=id is not None)
            return new, [], False
        # the successor names what it closed: a rival closing stays derivable (docs/merge.md)
        new["supersedes"] = [c.fact_id for c in closings]
        pending = _pending_path(store, key)
        files.write_atomic(pending, jsonio.dumps_line({"new": new["id"], "closings": [list(c) for c in closings]}))
        append_many(store, [new], check_ids=id is not None)
        closed = close_many(store, closings)
        pending.unlink()
    return new, closed, False


# --- queries (through the index) -----------------------------------------------------------------

def open_facts(store: Path, subject: str, predicate: str) -> list[Fact]:
    """The open facts (valid_to null) of one subject and predicate, oldest first."""
    return [f for f in queries.versions(store, subject, predicate) if facts.is_open(f)]


def existing_ids(store: Path, ids: Iterable[str]) -> set[str]:
    return set(queries.locate(store, list(ids)))


def get_valid_at(store: Path, ts: Any, subject: str | None = None, as_of: Any = None) -> list[Fact]:
    """Facts valid at `ts`; with `as_of`, as the store held them at that transaction time."""
    ts, subject, as_of = query_args(ts, subject, as_of)
    return queries.valid_at(store, ts, subject, as_of)


def history(store: Path, subject: str) -> list[Fact]:
    """Every version of every fact of `subject`, superseded and current, oldest first."""
    return queries.history(store, facts.text(subject, "subject"))


def recall(store: Path, subject: str, now_ts: Any, limit: int) -> list[Fact]:
    """Decisions and preferences of `subject` valid at `now_ts`, most recent first, at most `limit`."""
    subject, now, limit = recall_args(subject, now_ts, limit)
    return queries.recall(store, subject, now, limit)


# --- the same answers straight from the files (the reference) -----------------------------------

def scan_valid_at(store: Path, ts: Any, subject: str | None = None, as_of: Any = None) -> list[Fact]:
    ts, subject, as_of = query_args(ts, subject, as_of)
    return facts.valid_at(factfiles.scan(store), ts, subject, as_of)


def scan_history(store: Path, subject: str) -> list[Fact]:
    return facts.history(factfiles.scan(store), facts.text(subject, "subject"))


def scan_recall(store: Path, subject: str, now_ts: Any, limit: int) -> list[Fact]:
    subject, now, limit = recall_args(subject, now_ts, limit)
    return facts.recall(factfiles.scan(store), subject, now, limit)


def query_args(ts: Any, subject: str | None, as_of: Any) -> tuple[int, str | None, int | None]:
    return (facts.timestamp(ts, "ts"), None if subject is None else facts.text(subject, "subject"),
            None if as_of is None else facts.timestamp(as_of, "as-of", transaction=True))


MAX_LIMIT = 2**31 - 1  # SQLite takes 64 bits; nobody means more


def recall_args(subject: str, now_ts: Any, limit: Any) -> tuple[str, int, int]:
    """recall's arguments checked (bad input is refused even where there is no store to ask)."""
    if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= MAX_LIMIT:
        raise bad("limit", repr(limit), "must be a whole number from 1 to {most}", most=MAX_LIMIT)
    return facts.text(subject, "subject"), facts.timestamp(now_ts, "now-ts"), limit
