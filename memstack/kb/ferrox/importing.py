"""A ferrox fact store into memstack's fact files: every window and closing kept, idempotent.

- Each ferrox record becomes one memstack fact of the importing agent (table knowledge,
  source `ferrox`), appended to that agent's month file of its `recorded_at`.
- Its id is derived from its content (subject, predicate, object, valid_from, recorded_at,
  confidence, and which occurrence of that content it is in the file), bound to the agent
  and `recorded_at` like every id (`ids.from_content`). Importing the same file again finds
  every fact already there and adds nothing.
- A closed record (valid_to set) stays closed: `valid_to` as the file says; its successor,
  where one can be derived (same subject and predicate, `valid_from` equal to this
  `valid_to`; the earliest recorded if several), is named in `superseded_by`; `expired_at`
  (when the closing was learned, which the seed does not keep) is the successor's
  `recorded_at`, else the fact's own (the earliest a closing can be recorded).
- A record whose twin memstack wrote itself (the same seven fields: exported, then imported back)
  takes that fact's id (`find_twins`): found present, or closed as the file says, never copied.
- A file that closes a fact an earlier import left open closes it now (the closing a fact
  may have, I2). A fact the store already closed is never changed: if the file says
  otherwise, it is counted as `differs` and left as the store has it.

Two passes over the file (three in a store holding facts), each read as a stream (storefile.py): it
is never held. The first checks every record and the fact it makes (schema, secrets, transaction times
not in the future) and keeps, packed, each one's id and closing (`Plan`); the first problem is refused
naming the record (`facts[3].valid_to`) and nothing is written. In a store holding facts, the next
looks for the records' twins (an indexed lookup for each record whose subject it holds). The last makes
the facts again a batch at a time and appends the new ones (one write per file a batch), then closes
what an earlier import left open. Memory follows the number of records (about 190 bytes each while the
first pass runs; a twin's id besides), not the size of the file or of its texts. Were the last pass cut
short (a crash), importing the file again finishes it.
"""

import hashlib
from array import array
from bisect import bisect_left
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NamedTuple

from memstack.base import clock, ids, jsonio, limits, progress, schemas, secrets
from memstack.base.errors import MemstackError
from memstack.kb import factfiles, facts, factstore
from memstack.kb.factfiles import Closing
from memstack.kb.facts import Fact
from memstack.kb.ferrox.storefile import Record
from memstack.kb.index import queries

BATCH = 5000  # facts made, looked up and appended at a time
BATCH_TEXT = 4 << 20  # or fewer, when their texts reach this many characters (long objects)


@dataclass
class Report:
    facts: int = 0  # records in the file
    added: int = 0  # new facts appended
    closed: int = 0  # facts already here, open, now closed as the file says
    present: int = 0  # facts already here as the file has them
    differs: int = 0  # facts the store closed otherwise than the file: left as they are
    files: list[str] = field(default_factory=list)

    def document(self) -> dict[str, Any]:
        return {"facts": self.facts, "added": self.added, "closed": self.closed, "present": self.present,
                "differs": self.differs, "files": self.files}


class Planned(NamedTuple):
    """What the first pass keeps of a record: its fact's id and closing (None: open)."""

    id: str
    closing: Closing | None


def identity(record: Record, occurrence: int) -> bytes:
    """What makes an imported fact the same fact: everything the seed keeps except its closing.

    A digest: orjson's output costs a page of memory a bytes object while it is kept."""
    return hashlib.sha256(jsonio.dumps_line([
        record["subject"], record["predicate"], record["object"], record["valid_from"], record["recorded_at"],
        record["confidence"], occurrence])).digest()


def make(record: Record, fact_id: str, closing: Closing | None, *, agent: str, source: str) -> Fact:
    fact = facts.make(subject=record["subject"], predicate=record["predicate"], object=record["object"],
                      valid_from=record["valid_from"], recorded_at=record["recorded_at"], agent=agent,
                      confidence=record["confidence"], source=source, id=fact_id)
    if closing is not None:
        fact.update(valid_to=closing.valid_to, expired_at=closing.expired_at, superseded_by=closing.superseded_by)
    return fact


Read = Callable[[], Iterator[Record]]  # the file's checked records, from its start, each time it is called


class Plan:
    """What the first pass keeps of the records, packed: each one's fact id (32 hex digits: 16 bytes
    here) and, for each closed one in the file's order, its index, valid_to, when the closing was
    learned and its successor's index (-1: none). About 16 bytes a record and 32 a closed one."""

    def __init__(self) -> None:
        self.ids = bytearray()
        self.closed = array("q")  # per closed record: index, valid_to, expired_at, successor index
        self.twins: dict[int, str] = {}  # a record's twin already in the store, whose id it takes (`find_twins`)

    def __len__(self) -> int:
        return len(self.ids) // ID_BYTES

    def fact_id(self, index: int) -> str:
        return self.twins.get(index) or self.ids[index * ID_BYTES:(index + 1) * ID_BYTES].hex()

    def recorded_at(self, index: int) -> int:
        """The record's recorded_at: its fact id's first 12 hex digits (base/ids.py)."""
        return int.from_bytes(self.ids[index * ID_BYTES:index * ID_BYTES + 6], "big")

    def __getitem__(self, index: int) -> Planned:
        at = 4 * bisect_left(range(len(self.closed) // 4), index, key=lambda n: self.closed[4 * n])
        if at == len(self.closed) or self.closed[at] != index:
            return Planned(self.fact_id(index), None)
        _, valid_to, expired_at, successor = self.closed[at:at + 4]
        fact_id, successor_id = self.fact_id(index), None if successor < 0 else self.fact_id(successor)
        return Planned(fact_id, Closing(fact_id, valid_to, expired_at, successor_id))


ID_BYTES = 16  # a fact id's 32 hex digits (time, content, agent tag), as bytes
START_BYTES = 16  # a digest of where a window starts (subject, predicate, valid_from)
SAME_BYTES = 16  # of a record's identity digest kept to find its repeats (a collision: one in 2**128)


def _starts(subject: str, predicate: str, valid_from: int) -> bytes:
    """Where a window starts, as a digest (the records starting there are a closed one's successors)."""
    return hashlib.blake2b(jsonio.dumps_line([subject, predicate, valid_from]), digest_size=START_BYTES).digest()


def plan(read: Read, *, agent: str, source: str, store: Path | None = None) -> Plan:
    """Each record's fact id and closing, every fact checked on the way (an error names its record): the
    first pass over the file. What it keeps follows the records, packed (a fact id, where its window
    starts, a closed one's end: bytes in arrays) but for one set entry a record (its identity, to number
    the occurrences of one content); the file and its records are never held."""
    planned = Plan()
    seen: set[int] = set()  # each record's identity digest, as a number
    repeats: dict[int, int] = {}  # how often each content seen more than once was seen
    start_keys = bytearray()  # where each record's window starts (`_starts`)
    ends = array("q")  # each closed record's index and valid_to, in pairs
    end_keys = bytearray()  # and where its successor starts
    now = None if store is None else clock.for_store(store)
    policy = secrets.DEFAULT if store is None else secrets.for_store(store)
    for index, record in enumerate(progress.each(read(), None, "checking", "facts")):
        where = f"facts[{index}]"
        if now is not None and now.too_late(record["recorded_at"]):
            raise MemstackError(f"bad {where}.{now.problem('recorded_at', record['recorded_at'])}")
        content = identity(record, 0)
        same = int.from_bytes(content[:SAME_BYTES])
        occurrence = repeats.get(same, 1) if same in seen else 0  # the same content again: its occurrence
        if occurrence:  # is part of its identity
            repeats[same] = occurrence + 1
            content = identity(record, occurrence)
        seen.add(same)
        fact_id = ids.from_content(record["recorded_at"], agent, content)
        fact = make(record, fact_id, None, agent=agent, source=source)
        schemas.validate("fact", fact, where)
        for name in ("subject", "predicate", "object"):  # within limits.text_bytes, the record named
            limits.check_text(store, f"{where}.{name}", fact[name])
        found = secrets.scan({k: fact[k] for k in ("subject", "predicate", "object", "source")}, where, policy)
        if found:
            raise MemstackError(secrets.message(found))
        planned.ids += bytes.fromhex(fact_id)
        start_keys += _starts(record["subject"], record["predicate"], record["valid_from"])
        if record["valid_to"] is not None:
            ends.extend((index, record["valid_to"]))
            end_keys += _starts(record["subject"], record["predicate"], record["valid_to"])
    del seen, repeats
    _link(planned, start_keys, ends, end_keys)
    return planned


def find_twins(store: Path, read: Read, planned: Plan) -> None:
    """Each record's twin: a fact already in the store with its seven fields that no import made (one memstack
    wrote itself: `capture`, `fact add`, a promotion; exported, then imported back), each taken by one record
    at most; the record takes its id (`Plan.twins`), so the import finds it present (or closes it, as the
    file says) instead of adding a copy. A fact an import made (its id's middle the digest of the record's
    content, of any occurrence, whichever agent imported it) is no twin: another agent's import keeps its
    copies, and a record this agent imported before keeps its fact. A second pass over the file, BATCH
    records at a time: a lookup for each record whose subject the store holds."""
    if not factfiles.list_files(store):  # nothing here yet: no twin, no second read
        return
    taken: set[str] = set()
    offset = 0  # the index of the batch's first record
    for batch in batches(read, planned):
        known = queries.known_subjects(store, (record["subject"] for record, _ in batch))
        asked = [(offset + n, record) for n, (record, _) in enumerate(batch) if record["subject"] in known]
        offset += len(batch)
        if not asked:
            continue
        imported_here = queries.locate(store, [planned.fact_id(index) for index, _ in asked])  # kept as they are
        asked = [(index, record) for index, record in asked if planned.fact_id(index) not in imported_here]
        found = queries.same_start(store, [_start_of(record) for _, record in asked]) if asked else {}
        for index, record in asked:
            twin = _twin(record, found[_start_of(record)], taken)
            if twin is not None:
                taken.add(twin)
                planned.twins[index] = twin


def _start_of(record: Record) -> tuple[str, str, int, int]:
    return record["subject"], record["predicate"], record["valid_from"], record["recorded_at"]


def _twin(record: Record, candidates: list[Fact], taken: set[str]) -> str | None:
    """The first of `candidates` with the record's object and confidence that no import made and no earlier
    record took, whose id carries the record's time (an id of an older release does not: never a twin)."""
    imported = {hashlib.sha256(identity(record, n)).hexdigest()[:12] for n in range(len(candidates) + 1)}
    for fact in candidates:
        fact_id = fact["id"]
        if fact["object"] == record["object"] and fact["confidence"] == record["confidence"] \
                and fact_id not in taken and fact_id[12:24] not in imported \
                and ids.ID.match(fact_id) and int(fact_id[:12], 16) == record["recorded_at"]:
            return str(fact_id)
    return None


def _link(planned: Plan, start_keys: bytearray, ends: "array[int]", end_keys: bytearray) -> None:
    """Each closed record's closing: its successor the earliest recorded of the records whose window starts
    where its own ends (the records sorted by where they start, each end looked up in them)."""
    def start(index: int) -> bytes:
        return bytes(start_keys[index * START_BYTES:(index + 1) * START_BYTES])

    order = sorted(range(len(planned)), key=start) if ends else []
    for at in range(0, len(ends), 2):
        index, valid_to = ends[at], ends[at + 1]
        key = bytes(end_keys[at // 2 * START_BYTES:(at // 2 + 1) * START_BYTES])
        after = []
        at_key = bisect_left(order, key, key=start)
        while at_key < len(order) and start(order[at_key]) == key:
            i = order[at_key]
            if i != index:
                after.append((planned.recorded_at(i), planned.fact_id(i), i))
            at_key += 1
        successor = min(after) if after else None
        learned = max(planned.recorded_at(index), 1, 0 if successor is None else successor[0])
        planned.closed.extend((index, valid_to, learned, -1 if successor is None else successor[2]))


def batches(read: Read, planned: Plan) -> Iterator[list[tuple[Record, Planned]]]:
    """The second pass: the records again, with what the first pass planned for each, a batch at a time."""
    batch: list[tuple[Record, Planned]] = []
    count = size = 0
    for count, record in enumerate(read(), start=1):
        if count > len(planned):
            break
        batch.append((record, planned[count - 1]))
        size += len(record["subject"]) + len(record["predicate"]) + len(record["object"])
        if len(batch) == BATCH or size >= BATCH_TEXT:
            yield batch
            batch, size = [], 0
    if count != len(planned):
        raise MemstackError(f"the file changed while it was imported ({len(planned)} records, then {count}):"
                            " import it again")
    if batch:
        yield batch


def run(root: Path, read: Read, *, agent: str, source: str) -> Report:
    """Import the checked records into the store at `root`; nothing is written if one is bad. `read` is
    called two or three times: the file is checked whole, its twins looked for, then written a batch at a
    time."""
    planned = plan(read, agent=agent, source=source, store=root)
    factstore.finish_pending(root)
    find_twins(root, read, planned)
    report = Report(facts=len(planned))
    closings: list[Closing] = []
    written: set[str] = set()
    with progress.bar(len(planned), "importing", "facts") as shown:
        for batch in batches(read, planned):
            here = queries.locate(root, [p.id for _, p in batch])
            new = []
            for record, (fact_id, closing) in batch:
                held = here[fact_id][1] if fact_id in here else None
                if held is None:
                    new.append(make(record, fact_id, closing, agent=agent, source=source))
                elif held["valid_to"] == (None if closing is None else closing.valid_to):
                    report.present += 1
                elif closing is not None and facts.is_open(held):  # open here, closed in the file
                    closings.append(closing)
                else:
                    report.differs += 1
            if new:
                written.update(factstore.append_many(root, new))
            report.added += len(new)
            shown.update(len(batch))
    if closings:
        written.update(factfiles.relpath_for(f) for f in factstore.close_many(root, closings))
    report.closed, report.files = len(closings), sorted(written)
    return report
