"""What `memstack promote` has left to route, found by reading only the intake files that changed.

The records pending in an intake file are its records less the intake ids of its ledger shard
(`kb/promotions/<agent>/YYYY-MM-DD.jsonl`, base/ledger.py): one file and one shard say it, nothing
else of the ledger is read. After each promotion `.memstack/promoted.json` (local, never committed)
records, for each intake file, its stat signature as read and its shard's after the promotion's
lines: a file whose two signatures are still those has nothing pending and is not opened. A file
written since, a shard changed by a pull, a checkout or a reset: that file and its shard are read
again. Without the record (a fresh clone) every intake file and its shard are read, one pair at a
time.

Each agent's shard folder's signature (inode, mtime) is recorded too, as the scan found it: git
writes a file it checks out, merges or resets anew (its folder's mtime moves), and promote appends
to a shard only after the scan and records the shard's signature after; so while that folder's
signature holds, its shards are as recorded and are not stat'ed (an intake file stat'ed alone: a
promotion with one record pending at 1,000,000 records stats 7,000 files, not 14,000). A folder
changed in the two seconds before the scan is not trusted (a change in the same tick of the clock
may leave its mtime where it was). A shard edited in place by hand can only have gained lines (the
hooks refuse one that lost some), which leaves nothing more pending.

Ratified records (a human's ratify decisions in kb/binder.jsonl whose record is not yet a fact) are
found from the decisions written since the last promotion (the whole log when its start changed):
each decision's intake id names its day and agent (base/ids.py), so its intake file and shard.
"""

import os
import time
import zlib
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from memstack.base import files, jsonio, layout, ledger, logfiles, progress
from memstack.base.layout import DECISIONS
from memstack.kb import binder

STATE = "promoted.json"
_VERSION = 4
# A pending record handed on as it is read: (file, line number, record).
Take = Callable[[str, int, dict[str, Any]], None]


def intake_files(store: Path) -> list[str]:
    """Every intake file's store-relative path, in the order promote reads them (as strings: a promotion
    with one record pending stats every intake file and its shard, and pathlib would cost more than the stats)."""
    folder = os.path.join(store, "intake")
    try:
        agents = sorted(entry.name for entry in os.scandir(folder) if entry.is_dir())
    except (FileNotFoundError, NotADirectoryError):
        return []
    return [f"intake/{agent}/{name}" for agent in agents
            for name in sorted(n for n in os.listdir(os.path.join(folder, agent)) if n.endswith(".jsonl"))]


def signature(path: Path | str) -> list[int]:
    """A file's stat signature: size, inode, mtime (zeros when it does not exist)."""
    try:
        st = os.stat(path)
    except FileNotFoundError:
        return [0, 0, 0]
    return [st.st_size, st.st_ino, st.st_mtime_ns]


RECENT_NS = 2_000_000_000  # a folder changed this recently is not trusted (`_folder_signature`)


def _folder_signature(path: str) -> list[int] | None:
    """A shard folder's signature (inode, mtime; zeros when there is none), or None when it changed in the
    last two seconds: a file changed in the same tick of the file system's clock may not move it again (git's
    racy timestamps), so such a folder's shards are stat'ed, and it is trusted once it is older."""
    found = signature(path)[1:]
    return None if found[1] and time.time_ns() - found[1] < RECENT_NS else found


@dataclass
class Found:
    """What a scan found: the intake files it read, each one's signature as read, the ratify decisions
    whose record is not yet a fact (with their records and files), and how far the decisions were read."""

    read: list[str] = field(default_factory=list)  # the intake files opened (their shards with them)
    marks: dict[str, list[int]] = field(default_factory=dict)  # every intake file's and its shard's, as read
    ratified: list[dict[str, Any]] = field(default_factory=list)  # in the decisions' order
    by_id: dict[str, dict[str, Any]] = field(default_factory=dict)  # their records
    files: dict[str, str] = field(default_factory=dict)  # and the intake file of each
    decisions: list[int] = field(default_factory=lambda: [0, 0])  # the decisions' size and CRC-32 as read
    folders: dict[str, list[int] | None] = field(default_factory=dict)  # each shard folder's, as found


def _state(store: Path) -> dict[str, Any]:
    """The record of the last promotion (empty when missing, torn or of another version: only a cache)."""
    folder = files.local_dir(store, "")  # a symlink to outside the store is refused (I7)
    try:
        state = jsonio.loads((folder / STATE).read_bytes(), STATE)
    except Exception:  # missing, torn or foreign
        return {}
    ok = isinstance(state, dict) and state.get("version") == _VERSION and isinstance(state.get("files"), dict)
    return state if ok else {}


def save(store: Path, marks: dict[str, list[int]], decisions: list[int], opened: set[str],
         folders: dict[str, list[int] | None]) -> None:
    """Record how far this promotion read, after its ledger lines are written: each intake file's
    signature as read beside its shard's now (stat again only for the `opened` files, whose shards the
    promotion may have written; the others' as the scan read them), and each shard folder's signature
    as the scan found it (`folders`: one that has changed since is stat'ed again next time)."""
    root = str(store)
    known = {rel: [*mark[:3], *signature(f"{root}/{layout.ledger_shard(rel)}")] if rel in opened else mark
             for rel, mark in marks.items()}
    document = {"version": _VERSION, "files": known, "folders": folders, "decisions": decisions}
    files.write_atomic(files.local_dir(store, "") / STATE, jsonio.dumps_line(document), sync=False)


def forget(store: Path) -> None:
    (files.local_dir(store, "") / STATE).unlink(missing_ok=True)


def scan(store: Path, take: Take, read: Callable[[str, bytes], None] | None = None) -> Found:
    """Every pending record handed to `take` (file, line number, record) as it is read, then its file to
    `read` (its path and bytes), the intake files unchanged since the last promotion left unopened; then the
    ratified records."""
    found = Found()
    state = _state(store)
    known: dict[str, Any] = state.get("files", {})
    was_folders: dict[str, Any] = state.get("folders", {})
    folders = found.folders
    relpaths = intake_files(store)
    root = str(store)
    for relpath in progress.each(relpaths, len(relpaths), "promote: reading intake", "files"):
        mark = signature(f"{root}/{relpath}")
        shard = layout.ledger_shard(relpath)
        was = known.get(relpath)
        folder = shard.rpartition("/")[0]
        if folder not in folders:
            folders[folder] = _folder_signature(f"{root}/{folder}")
        if was is not None and was[:3] == mark and folders[folder] is not None \
                and was_folders.get(folder) == folders[folder]:
            found.marks[relpath] = was  # nothing written since: its shard as recorded (the module's doc)
            continue
        mark += signature(f"{root}/{shard}")
        found.marks[relpath] = mark
        if was == mark:
            continue
        found.read.append(relpath)
        path = store / relpath
        data = path.read_bytes()
        if data and not data.endswith(b"\n"):
            logfiles.check_tail(path, relpath)
        routed = ledger.routed_ids(store, relpath)
        for number, record in enumerate(jsonio.iter_jsonl(data, relpath), start=1):
            if record.get("id") not in routed:
                take(relpath, number, record)
        if read is not None:
            read(relpath, data)
    _ratified(store, state.get("decisions"), found)
    return found


def _ratified(store: Path, before: Any, found: Found) -> None:
    """The ratify decisions whose record is not yet a fact, and their records: those written since
    the decisions read last time (`before`: size and CRC-32 of what was read), or all of them when
    the log no longer begins with that."""
    path = store / DECISIONS
    data = path.read_bytes() if path.exists() else b""  # a human's decisions: few
    found.decisions = [len(data), zlib.crc32(data)]
    offset = 0
    if isinstance(before, list) and len(before) == 2 and before[0] <= len(data) \
            and zlib.crc32(data[:before[0]]) == before[1]:
        offset = before[0]
    decisions: list[dict[str, Any]] = []
    last: dict[str, int] = {}  # where each record's latest decision starts
    at = 0
    for raw in data.splitlines(keepends=True):
        start, at = at, at + len(raw)
        if raw.strip():
            decision = jsonio.loads(raw, DECISIONS)
            if isinstance(decision, dict) and isinstance(decision.get("intake_id"), str):
                decisions.append(decision)
                last[decision["intake_id"]] = start
    # A record is ratified when its decisions in force agree on it (people who decided it differently: a
    # dispute, acted on by no promotion until a person settles it); its time is the first ratification's.
    wanted = [binder.first_in_force(decisions_of) for intake_id, decisions_of in binder.by_record(decisions).items()
              if last[intake_id] >= offset and binder.verdict(decisions_of) == "ratify"]
    if not wanted:
        return
    by_file: dict[str, list[str]] = {}
    for decision in wanted:
        for relpath in _files_of(store, decision["intake_id"]):
            by_file.setdefault(relpath, []).append(decision["intake_id"])
    for relpath, idents in sorted(by_file.items()):
        made = {line.get("intake_id") for line in ledger.shard_lines(store, relpath)
                if line.get("sub_tier") != "binder"}
        wanted_here = set(idents) - made
        if wanted_here and (store / relpath).is_file():
            for record in logfiles.iter_jsonl(store / relpath, relpath):
                if record.get("id") in wanted_here and record["id"] not in found.by_id:
                    found.by_id[record["id"]] = record
                    found.files[record["id"]] = relpath
    found.ratified = [d for d in wanted if d["intake_id"] in found.by_id]


def _files_of(store: Path, intake_id: str) -> list[str]:
    """The intake files that may hold a record: the one its id is bound to; for an id bound to none
    (written before ids were), the files its ledger lines name."""
    bound = ledger.intake_files_of(store, intake_id)
    if bound:
        return [relpath for relpath in bound if (store / relpath).is_file()]
    return sorted({line["file"] for line in ledger.record_lines(store, intake_id) if isinstance(line.get("file"), str)})
