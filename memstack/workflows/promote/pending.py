"""What `memstack promote` has left to route, found in time that follows what was written since.

Every intake record not in the ledger is pending; finding them from nothing
reads every intake file and the whole ledger (gather.py). After each promotion
`.memstack/promoted.json` (local, never committed) records how far it read:

- for each intake file: the bytes read, their CRC-32 and the file's stat signature;
- the ledger's size after the promotion's lines, and its last bytes;
- the decisions log's size as read.

The next promotion then reads only the intake files whose signature changed,
from where the last one stopped (the prefix checked by its CRC-32), the ledger's
lines written since (records routed by an interrupted run) and the decisions
since (ratified records: taken from the Binder queue view, checked against their
intake file). Anything else (no record, a ledger that is not the one recorded
grown, an intake file shorter or rewritten, a ratified record not in the queue)
answers None, and promote reads everything, as before.

The last _KEPT readings are kept, newest first, and the newest that the ledger
still continues is used: after a `git reset` or a checkout back to an earlier
promotion, the reading made there still applies.
"""

import os
import zlib
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from memstack.base import files, jsonio, logfiles
from memstack.base.layout import DECISIONS, LEDGER
from memstack.kb import views
from memstack.repo.sources import WorktreeSource

STATE = "promoted.json"
_VERSION = 2
# A pending record handed on as it is read: (file, line number, record).
Take = Callable[[str, int, dict[str, Any]], None]
_KEPT = 4  # readings kept: the newest first
_TAIL = 64  # the ledger's last bytes kept, to tell it from another ledger of the same size


def intake_files(store: Path) -> list[Path]:
    """Every intake file, in the order promote reads them."""
    folder = store / "intake"
    if not folder.is_dir():
        return []
    return [path for agent in sorted(p for p in folder.iterdir() if p.is_dir())
            for path in sorted(agent.glob("*.jsonl"))]


def _signature(st: os.stat_result) -> list[int]:
    return [st.st_size, st.st_ino, st.st_mtime_ns]


def mark(path: Path, data: bytes, st: os.stat_result) -> list[int]:
    """How far a read of `path` (its bytes `data`, stat `st` taken before reading) got."""
    return [len(data), zlib.crc32(data), *_signature(st)]


@dataclass
class Found:
    """The pending records written since the last promotion, and what it needs to be recorded after."""

    done: set[str | None] = field(default_factory=set)  # intake ids the ledger has routed since (an interrupted run)
    promoted: set[str | None] = field(default_factory=set)  # of those, the ones made facts (not sent to the binder)
    ratified: list[dict[str, Any]] = field(default_factory=list)  # ratify decisions since, not yet promoted
    by_id: dict[str, dict[str, Any]] = field(default_factory=dict)  # their records
    files: dict[str, str] = field(default_factory=dict)  # and the intake file of each
    marks: dict[str, list[int]] = field(default_factory=dict)  # every intake file's mark, read now or before
    decisions: int = 0  # the decisions' size as read


def _readings(store: Path) -> list[dict[str, Any]]:
    """The readings recorded, newest first (none when the file is missing, torn or of another version:
    it is only a cache)."""
    folder = files.local_dir(store, "")  # a symlink to outside the store is refused (I7)
    try:
        state = jsonio.loads((folder / STATE).read_bytes(), STATE)
    except Exception:  # missing, torn or foreign
        return []
    if not isinstance(state, dict) or state.get("version") != _VERSION or not isinstance(state.get("readings"), list):
        return []
    return [r for r in state["readings"] if isinstance(r, dict)]


def save(store: Path, marks: dict[str, list[int]], decisions: int) -> None:
    """Record how far this promotion read (after its ledger lines are written), before the last ones."""
    ledger = store / LEDGER
    size = ledger.stat().st_size if ledger.exists() else 0
    reading = {"ledger": [size, _end(ledger, size).hex()], "decisions": decisions, "intake": marks}
    readings = [reading, *(r for r in _readings(store) if r.get("ledger") != reading["ledger"])][:_KEPT]
    document = {"version": _VERSION, "readings": readings}
    files.write_atomic(files.local_dir(store, "") / STATE, jsonio.dumps_line(document))


def _end(ledger: Path, size: int) -> bytes:
    """The ledger's last bytes (at most _TAIL) before byte `size`."""
    if not size:
        return b""
    with ledger.open("rb") as handle:
        handle.seek(max(0, size - _TAIL))
        return handle.read(min(_TAIL, size))


def forget(store: Path) -> None:
    (files.local_dir(store, "") / STATE).unlink(missing_ok=True)


def since_last(store: Path, take: Take) -> Found | None:
    """The records pending since the newest recorded reading that the ledger continues, each handed to
    `take` as it is read (file, line number, record); None: read everything (what `take` was handed is
    then to be dropped)."""
    path = store / LEDGER
    size = path.stat().st_size if path.exists() else 0
    for state in _readings(store):
        ledger_size, ledger_tail = state["ledger"]
        if ledger_size <= size and _end(path, ledger_size).hex() == ledger_tail:
            found = _since(store, state, size, take)
            if found is not None:
                return found  # else an older reading may still serve
    return None


def _since(store: Path, state: dict[str, Any], size: int, take: Take) -> Found | None:
    """The records pending since `state`, a reading whose ledger the current one continues."""
    found = Found()
    ledger_size = state["ledger"][0]
    path = store / LEDGER
    if ledger_size:
        with path.open("rb") as handle:
            handle.seek(ledger_size)
            tail = handle.read()  # what was routed since (an interrupted run): a few lines
        for line in jsonio.iter_jsonl(tail, LEDGER):
            found.done.add(line.get("intake_id"))
            if line.get("sub_tier") != "binder":
                found.promoted.add(line.get("intake_id"))
    elif size:
        return None
    marks: dict[str, list[int]] = state["intake"]
    for path in intake_files(store):
        relpath = path.relative_to(store).as_posix()
        st = path.stat()
        known = marks.get(relpath)
        if known is not None and known[2:] == _signature(st):
            found.marks[relpath] = known
            continue
        data = path.read_bytes()
        start = 0
        if known is not None:
            start = known[0]
            if len(data) < start or zlib.crc32(data[:start]) != known[1]:
                return None  # not the file that was read, grown
        if data and not data.endswith(b"\n"):
            logfiles.check_tail(path, relpath)
        first = data.count(b"\n", 0, start) + 1
        for number, record in enumerate(jsonio.iter_jsonl(data[start:], relpath, first), first):
            if record.get("id") not in found.done:  # routed since by an interrupted run
                take(relpath, number, record)
        found.marks[relpath] = mark(path, data, st)
    if any(p not in found.marks for p in marks):
        return None  # an intake file is gone
    return found if _ratified(store, state["decisions"], found) else None


def _ratified(store: Path, offset: int, found: Found) -> bool:
    """The ratify decisions made since `offset` whose record is not yet a fact, and their records (from
    the Binder queue view, checked against their intake file); False when one cannot be found."""

    data = (store / DECISIONS).read_bytes() if (store / DECISIONS).exists() else b""
    found.decisions = len(data)
    if len(data) < offset:
        return False
    first: dict[str, tuple[int, dict[str, Any]]] = {}
    at = 0
    for raw in data.splitlines(keepends=True):  # a human's decisions: few
        start, at = at, at + len(raw)
        if raw.strip():
            decision = jsonio.loads(raw, DECISIONS)
            if isinstance(decision, dict) and isinstance(decision.get("intake_id"), str):
                first.setdefault(decision["intake_id"], (start, decision))
    wanted = [d for start, d in first.values() if start >= offset and d.get("decision") == "ratify"
              and d["intake_id"] not in found.promoted]
    if not wanted:
        return True
    source = WorktreeSource(store)
    for decision in wanted:
        ident = decision["intake_id"]
        relpath = views.intake_file_of(source, ident)  # its agent (by the id's tag) and day (its time)
        if relpath is None:
            return False
        if not (store / relpath).exists():
            return False
        record = next((r for r in jsonio.iter_jsonl((store / relpath).read_bytes(), relpath) if r.get("id") == ident),
                      None)
        if record is None:
            return False
        found.by_id[ident] = record
        found.files[ident] = relpath
        found.ratified.append(decision)
    return True
