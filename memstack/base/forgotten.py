"""Forgetting on purpose: the tombstones of `kb/forgotten/<agent>/YYYY-MM.jsonl`, read once, and a record
shown as forgotten (docs/forgetting.md).

A tombstone names a record (an intake or fact id, a SOIL record's `collection/key`, a handoff's path) and
says who forgot it and why; it holds none of the record's content. Every read path asks `Forgotten.mask`
for what it shows: a forgotten record keeps its id, its agent and its times, every other field is
`[forgotten: reason]` (a list is emptied; a null stays null).

`find` tells what kind of record an id names and where it lives, from any source of files (the work
tree, a commit): ids are bound to one file (base/ids.py), so it reads one file per agent at most.

What is forgotten is defined here, once: the records the tombstones name, and the facts promoted from a
forgotten intake record (they hold its content), whether `forget` saw them or not. A clone may promote the
record while another forgets it; the merge then brings a fact no tombstone names. Its record's ledger line
names it (`promoted`), so it is forgotten with the record, by the record's tombstone, in every reader.
"""

import os
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any, Protocol

import orjson

from memstack.base import ids, layout
from memstack.base.layout import LEDGER_DIR, ledger_shard
from memstack.base.times import day, month

# What a forgotten record keeps: who wrote it, when, where it sits in its chain; never what it said.
KEPT = frozenset(("id", "agent", "created_at", "recorded_at", "valid_from", "valid_to", "expired_at",
                  "superseded_by", "updated_at", "expires_at", "table", "tier", "intake_id", "layer", "line",
                  "path", "score", "confidence", "relevance_score", "collection", "key", "front_matter"))
KINDS = ("intake", "fact", "soil", "handoff")


class Files(Protocol):
    """Where the files are read from (repo/sources: the work tree, a commit)."""

    def read(self, relpath: str) -> bytes | None: ...

    def listdir(self, relpath: str) -> list[str]: ...


class StoreFiles:
    """The files of a store's work tree, as `Files` (repo/sources.WorktreeSource, for the layers below it)."""

    def __init__(self, root: Path) -> None:
        self.root = root

    def read(self, relpath: str) -> bytes | None:
        path = self.root / relpath
        return path.read_bytes() if path.is_file() and not path.is_symlink() else None

    def listdir(self, relpath: str) -> list[str]:
        try:
            return sorted(os.listdir(self.root / relpath))
        except (FileNotFoundError, NotADirectoryError):
            return []


def marker(reason: str) -> str:
    return f"[forgotten: {reason}]"


def lines_holding(data: bytes, text: str) -> Iterator[dict[str, Any]]:
    """The records of `data` (a JSONL file) whose line holds `text` as a JSON string, parsed (only those)."""
    needle = orjson.dumps(text)
    at = data.find(needle)
    while at >= 0:
        start, end = data.rfind(b"\n", 0, at) + 1, data.find(b"\n", at)
        end = len(data) if end < 0 else end
        try:
            record = orjson.loads(data[start:end])
        except orjson.JSONDecodeError:
            record = None  # `memstack check` names a broken line
        if isinstance(record, dict):
            yield record
        at = data.find(needle, end)


def line_with(data: bytes, record_id: str) -> dict[str, Any] | None:
    """The record of `data` (a JSONL file) whose id is `record_id`, if any."""
    return next((record for record in lines_holding(data, record_id) if record.get("id") == record_id), None)


def find(files: Files, record_id: str) -> tuple[str, str] | None:
    """(kind, the file that holds it) of the record `record_id` names, or None when no record has it."""
    if record_id.startswith("handoffs/"):
        place = layout.classify(record_id)
        return ("handoff", record_id) if place.kind == layout.HANDOFF and files.read(record_id) is not None else None
    if record_id.count("/") == 1:
        path = f"store/{record_id}.json"
        return ("soil", path) if layout.classify(path).kind == layout.SOIL and files.read(path) is not None else None
    match = ids.ID.match(record_id)
    if match is None:
        return None
    ms, tag = int(match.group(1), 16), match.group(3)
    for kind, top, name in (("intake", "intake", f"{day(ms)}.jsonl"), ("fact", "kb/facts", f"{month(ms)}.jsonl")):
        for agent in files.listdir(top):
            if ids.agent_tag(agent) != tag:
                continue
            path = f"{top}/{agent}/{name}"
            data = files.read(path)
            if data is not None and line_with(data, record_id) is not None:
                return kind, path
    return None


def each_tombstone(files: Files) -> Iterator[dict[str, Any]]:
    """Every tombstone of the store, file by file (agent, then month), in each file's order."""
    for agent in sorted(files.listdir(layout.FORGOTTEN_DIR)):
        for name in sorted(files.listdir(f"{layout.FORGOTTEN_DIR}/{agent}")):
            path = f"{layout.FORGOTTEN_DIR}/{agent}/{name}"
            if layout.classify(path).kind != layout.TOMBSTONES:
                continue
            for line in (files.read(path) or b"").splitlines():
                try:
                    tombstone = orjson.loads(line)
                except orjson.JSONDecodeError:
                    continue  # `memstack check` names a broken line
                if isinstance(tombstone, dict) and isinstance(tombstone.get("forgets"), str):
                    yield tombstone


def _shards(files: Files, intake_ids: Iterable[str]) -> dict[str, list[str]]:
    """The ledger shards that can route these intake records (an id is bound to its agent's day file), each
    with the ids it may route; an id bound to no file (written before ids were bound) is left out: `forget`
    wrote a tombstone for each fact made from it that it found."""
    agents = files.listdir(LEDGER_DIR)
    found: dict[str, list[str]] = {}
    for intake_id in intake_ids:
        match = ids.ID.match(intake_id)
        if match is None:
            continue
        try:
            name = f"{day(int(match.group(1), 16))}.jsonl"
        except (OverflowError, ValueError, OSError):
            continue
        for agent in agents:
            if ids.agent_tag(agent) == match.group(3):
                found.setdefault(ledger_shard(f"intake/{agent}/{name}"), []).append(intake_id)
    return found


def promoted(files: Files, tombstones: dict[str, dict[str, Any]],
             shards: dict[str, list[str]]) -> Iterator[tuple[str, dict[str, Any]]]:
    """(fact id, the tombstone that forgets it) for every fact promoted from an intake record a tombstone
    forgets: its ledger line names the fact, made from that record (`ids.made_from`; a line that found the record
    a duplicate of another's fact names a fact that holds the other's content, not this one's). The tombstone is
    the record's, naming the fact (`kind` fact, `promoted_from` the record)."""
    for shard, wanted in shards.items():  # `_shards` of the intake records `tombstones` forgets
        data = files.read(shard) or b""
        for intake_id in wanted:
            for routed in lines_holding(data, intake_id):
                fact_id = routed.get("fact_id")
                if routed.get("intake_id") == intake_id and isinstance(fact_id, str) \
                        and ids.made_from(fact_id, intake_id):
                    yield fact_id, {**tombstones[intake_id], "forgets": fact_id, "kind": "fact",
                                    "promoted_from": intake_id}


def closing_at(fact: dict[str, Any], ms: int) -> tuple[int, int]:
    """(valid_to, expired_at) of the closing forgetting gives an open fact at `ms` (a tombstone's
    `forgotten_at`): then, or just after its start and its recording when they are later. A function of the
    fact and the tombstone, so every clone that closes it closes it alike."""
    return max(ms, fact["valid_from"] + 1), max(ms, fact["recorded_at"])


def closed_by_forgetting(fact: dict[str, Any], forgotten: "Forgotten") -> bool:
    """Whether `fact` is closed as forgetting closed it: no successor, at the time of the tombstone that forgets
    it (`closing_at`). That closing holds nothing the tombstone does not say."""
    tombstone = forgotten.by_id.get(fact.get("id"))  # type: ignore[arg-type]
    ms = None if tombstone is None else tombstone.get("forgotten_at")
    if type(ms) is not int or fact.get("superseded_by") is not None or fact.get("valid_to") is None:
        return False
    if type(fact.get("valid_from")) is not int or type(fact.get("recorded_at")) is not int:
        return False
    return (fact["valid_to"], fact.get("expired_at")) == closing_at(fact, ms)


class Forgotten:
    """What is forgotten, by the record's id: the records the tombstones name (the first tombstone of a record
    counts), and the facts promoted from a forgotten intake record (`promoted`)."""

    def __init__(self, tombstones: Iterable[dict[str, Any]] = (), files: Files | None = None) -> None:
        self.by_id: dict[str, dict[str, Any]] = {}
        for tombstone in tombstones:
            self.by_id.setdefault(tombstone["forgets"], tombstone)
        self.shards: list[str] = []  # the ledger shards read for the facts promoted from forgotten records
        if files is not None and self.by_id:
            shards = _shards(files, (r for r, t in self.by_id.items() if t.get("kind") == "intake"))
            self.shards = sorted(shards)
            for fact_id, tombstone in list(promoted(files, self.by_id, shards)):
                self.by_id.setdefault(fact_id, tombstone)

    @classmethod
    def of(cls, files: Files) -> "Forgotten":
        return cls(each_tombstone(files), files)

    @classmethod
    def in_store(cls, root: Path) -> "Forgotten":
        """What a store's work tree forgets, read again only when a tombstone file or a ledger shard it read
        changed."""
        key = _signature(root)
        held = _HELD.get(root)
        if held is None or held[0] != key or held[1] != _stats(root, held[2].shards):
            made = cls.of(StoreFiles(root))
            held = _HELD[root] = (key, _stats(root, made.shards), made)
        return held[2]

    def __bool__(self) -> bool:
        return bool(self.by_id)

    def __contains__(self, record_id: object) -> bool:
        return record_id in self.by_id

    def reason(self, record_id: str) -> str | None:
        tombstone = self.by_id.get(record_id)
        return None if tombstone is None else str(tombstone.get("reason", ""))

    def mask(self, record: Any, record_id: str | None = None) -> Any:
        """`record` as a read path shows it: unchanged, or (when `record_id`, by default its `id`, is
        forgotten) its content gone."""
        if not self.by_id or not isinstance(record, dict):
            return record
        tombstone = self.by_id.get(record.get("id") if record_id is None else record_id)  # type: ignore[arg-type]
        return record if tombstone is None else masked(record, tombstone)

    def masks(self, records: Iterable[Any]) -> Iterator[Any]:
        return (self.mask(record) for record in records) if self.by_id else iter(records)


def masked(record: dict[str, Any], tombstone: dict[str, Any]) -> dict[str, Any]:
    """The record with only what it keeps (KEPT, and times: `*_at`, `*_iso`): every other field the marker,
    a list emptied."""
    text = marker(str(tombstone.get("reason", "")))
    shown: dict[str, Any] = {}
    for key, value in record.items():
        if key in KEPT or key.endswith(("_at", "_iso")) or value is None:
            shown[key] = value
        else:
            shown[key] = [] if isinstance(value, list) else text
    return shown


_HELD: dict[Path, tuple[tuple[Any, ...], tuple[Any, ...], Forgotten]] = {}


def _stats(root: Path, relpaths: list[str]) -> tuple[Any, ...]:
    """The stats of these files (None: absent): what says a ledger shard changed."""
    found: list[Any] = []
    for relpath in relpaths:
        try:
            st = os.stat(root / relpath, follow_symlinks=False)
            found.append((st.st_ino, st.st_size, st.st_mtime_ns))
        except (FileNotFoundError, NotADirectoryError):
            found.append(None)
    return tuple(found)


def _signature(root: Path) -> tuple[Any, ...]:
    """The tombstone files' names and stats: what says they changed (a long-lived MCP server reads them once)."""
    found: list[Any] = []
    top = root / layout.FORGOTTEN_DIR
    try:
        agents = sorted(os.listdir(top))
    except (FileNotFoundError, NotADirectoryError):
        return ()
    for agent in agents:
        try:
            with os.scandir(top / agent) as entries:
                for entry in entries:
                    st = entry.stat(follow_symlinks=False)
                    found.append((agent, entry.name, st.st_ino, st.st_size, st.st_mtime_ns))
        except (FileNotFoundError, NotADirectoryError):
            continue
    return tuple(sorted(found))
