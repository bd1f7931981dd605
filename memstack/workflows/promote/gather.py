"""What a promotion routes: the pending intake records, each kept as one int (its time, file and line),
and the records a human ratified since they were routed to the Binder; read CHUNK at a time."""

import dataclasses
import itertools
import sys
from array import array
from collections.abc import Iterator
from pathlib import Path
from typing import Any, NamedTuple

from memstack.base import jsonio, schemas, secrets
from memstack.base.errors import MemstackError
from memstack.base.forgotten import Forgotten
from memstack.base.times import parse_ts
from memstack.workflows.promote import pending, vetting

BATCH = 8192  # records read back, facts parsed, lines written at a time


CHUNK = 1 << 17  # records routed, decided and written at a time: all a promotion holds beyond one int a record


MASK = (1 << 32) - 1  # a pending record's file number and line number, each in 32 bits of its key


def _created_ms(record: dict[str, Any]) -> int | str:
    """A pending record's created_at in ms, or what makes it no record to promote (the rest of the record is
    vetted with its file's other pending lines: vetting.py)."""
    try:
        ms: int | None = parse_ts(record.get("created_at"), "created_at")
    except MemstackError:
        ms = None
    if ms is None or ms < 0:  # what is wrong with it, as the schema says first
        problems = schemas.errors("intake", record)
        if problems:
            return f"invalid intake record: {problems[0]}"
        if ms is None:  # a time the schema takes and memstack cannot hold: its error raised
            ms = parse_ts(record["created_at"], "created_at")
    return "created_at is before 1970: a fact's transaction time cannot be" if ms < 0 else ms


class Pending:
    """The records a promotion routes, gathered one file at a time, each kept as one int, its key:
    (created_at in ms, file number, line number) packed so that sorted keys are the records in time
    order, ties in the order they were read (a million cost about 48 MB). A record already promoted is
    dropped once its id is read; one that is not a valid intake record stops the promotion, named by
    path:line; an id read twice is promoted once, where it was first read."""

    def __init__(self, store: Path) -> None:
        self.store = store
        self.forgotten = Forgotten.in_store(store)  # skipped: a forgotten record is never promoted
        self.keys: list[int] = []
        self.hashes = array("q")  # the hash of each key's id, in step with the keys: ids read twice
        self.files: list[str] = []  # by file number
        self._numbers: dict[str, int] = {}
        self.vetting = vetting.Vetting(secrets.for_store(store))
        self.taken: list[int] = []  # the lines of the file being read that were taken: vetted once it is read
        self.held: dict[tuple[int, int], tuple[str, str]] = {}  # (file number, line) -> a credential's kind, field

    def take(self, relpath: str, number: int, record: dict[str, Any]) -> None:
        ident = record.get("id")
        if ident in self.forgotten:
            return
        file_number = self._numbers.get(relpath)
        if file_number is None:
            file_number = self._numbers[relpath] = len(self.files)
            self.files.append(relpath)
        ms = _created_ms(record)
        if isinstance(ms, str):
            self.vetting.refused(file_number, number, ms)  # raised once every file is read (`vetted`)
            return
        if number > MASK:
            raise MemstackError(f"{relpath}: more than {MASK:,} lines in one intake file")
        self.keys.append(ms << 64 | file_number << 32 | number)
        self.hashes.append(hash(ident))
        self.taken.append(number)

    def read(self, relpath: str, data: bytes) -> None:
        """A file's pending records all taken: their lines vetted (vetting.py), here or by a second process."""
        if self.taken:
            self.vetting.file(relpath, self._numbers[relpath], data, self.taken)
            self.taken = []

    def vetted(self) -> None:
        """Every file read: raise for the first record read that is no valid intake record; keep the
        records holding a credential (`held_in`)."""
        self.held = self.vetting.finish(self.files)

    def held_in(self, key: int) -> tuple[str, str] | None:
        """The credential a key's record holds (its kind and field), if it holds one."""
        return self.held.get((key >> 32 & MASK, key & MASK)) if self.held else None

    def sorted(self) -> list[int]:
        """The keys in time order, each id once; the hashes are dropped."""
        ordered = sorted(self.hashes)
        twice = {a for a, b in zip(ordered, itertools.islice(ordered, 1, None), strict=False) if a == b}
        del ordered
        if twice:  # rare (the hook refuses it; an uncommitted copy): the ids are read again to be sure
            seen: set[str] = set()
            kept = []
            for key, hashed in zip(self.keys, self.hashes, strict=True):
                if hashed in twice:
                    relpath, number = self.where(key)
                    ident = self.record(key)["id"]
                    if ident in seen:
                        print(f"memstack promote: {relpath}:{number}: intake id {ident} appears twice; the"
                              " first is promoted, this one is left out", file=sys.stderr)
                        continue
                    seen.add(ident)
                kept.append(key)
            self.keys = kept
        self.hashes = array("q")
        self.keys.sort()
        return self.keys

    def where(self, key: int) -> tuple[str, int]:
        """The file and line number of a key."""
        return self.files[key >> 32 & MASK], key & MASK

    def record(self, key: int, lines: dict[str, list[bytes]] | None = None) -> dict[str, Any]:
        """A key's record read again (`lines`: the files read, kept by the caller), checked to be the one
        gathered."""
        relpath, number = self.where(key)
        if lines is None:
            lines = {}
        if relpath not in lines:
            lines[relpath] = (self.store / relpath).read_bytes().split(b"\n")
        where = f"{relpath}:{number}"
        record = jsonio.loads(lines[relpath][number - 1], where) if number <= len(lines[relpath]) else None
        try:
            same = isinstance(record, dict) and parse_ts(record.get("created_at"), "created_at") == key >> 64
        except MemstackError:
            same = False
        if not same:
            raise MemstackError(f"{where}: the intake file changed while it was promoted (intake files are"
                                " append-only) — restore it, then promote again")
        return record  # type: ignore[return-value]


class Ratified(NamedTuple):
    """A record a human ratified since it was routed to the binder: made knowledge at its own time."""

    ms: int  # its created_at
    order: int  # its decision's place among the decisions: its ledger line's
    decision: dict[str, Any]
    record: dict[str, Any]
    file: str | None


@dataclasses.dataclass
class Gathered:
    """What a promotion routes: the pending records (keys in time order) and the ratified ones."""

    pending: Pending
    keys: list[int]  # in time order
    ratified: list[Ratified]  # by time
    read: tuple[dict[str, list[int]], list[int], set[str], dict[str, list[int] | None]]  # how far the logs were
    # read, for pending.save

    def chunks(self) -> Iterator[tuple[list[int], list[Ratified]]]:
        """The keys CHUNK at a time, never splitting a millisecond, each with the ratified records of its
        span of time (the last takes the rest): the facts of one chunk are all older than the next one's,
        so deciding them chunk after chunk decides them as one pass in time order would."""
        at = taken = 0
        while at < len(self.keys) or taken < len(self.ratified):
            end = min(at + CHUNK, len(self.keys))
            while 0 < end < len(self.keys) and self.keys[end] >> 64 == self.keys[end - 1] >> 64:
                end += 1
            upto = len(self.ratified)
            if end < len(self.keys):
                last = self.keys[end - 1] >> 64
                upto = next((n for n in range(taken, upto) if self.ratified[n].ms > last), upto)
            yield self.keys[at:end], self.ratified[taken:upto]
            at, taken = end, upto


def gather(store: Path) -> Gathered:
    """The records a promotion routes: each intake file's records not in its ledger shard, the files
    unchanged since the last promotion unread (pending.scan), and the ratified records."""
    gathered = Pending(store)
    try:
        found = pending.scan(store, gathered.take, gathered.read)
    finally:
        gathered.vetting.close()  # a second process ends with the scan (`vetted` has its answers)
    gathered.vetted()
    keys = gathered.sorted()
    decided = sorted(Ratified(parse_ts(found.by_id[d["intake_id"]]["created_at"], "created_at"), n, d,
                              found.by_id[d["intake_id"]], found.files[d["intake_id"]])
                     for n, d in enumerate(found.ratified))
    opened = {*found.read, *found.files.values()}  # the intake files whose shards this promotion may write
    return Gathered(gathered, keys, decided, (found.marks, found.decisions, opened, found.folders))
