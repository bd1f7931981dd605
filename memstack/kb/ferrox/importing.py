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
- A file that closes a fact an earlier import left open closes it now (the closing a fact
  may have, I2). A fact the store already closed is never changed: if the file says
  otherwise, it is counted as `differs` and left as the store has it.

Two passes. The first checks every record and the fact it makes (schema, secrets,
transaction times not in the future) and keeps only each one's id and closing; the first
problem is refused naming the record (`facts[3].valid_to`) and nothing is written. The
second makes the facts again a batch at a time and appends the new ones (one write per file
a batch), then closes what an earlier import left open: memory stays bounded by a batch,
not the file. Were the second pass cut short (a crash), importing the file again finishes it.
"""

import hashlib
from collections import Counter, defaultdict
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NamedTuple

from memstack.base import clock, ids, jsonio, progress, schemas, secrets
from memstack.base.errors import MemstackError
from memstack.kb import factfiles, facts, factstore
from memstack.kb.factfiles import Closing
from memstack.kb.facts import Fact
from memstack.kb.ferrox.storefile import Record
from memstack.kb.index import queries

BATCH = 5000  # facts made, looked up and appended at a time


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


def plan(records: list[Record], *, agent: str, source: str, store: Path | None = None) -> list[Planned]:
    """Each record's fact id and closing, every fact checked on the way (an error names its record)."""
    seen: Counter[bytes] = Counter()
    fact_ids = []
    now = None if store is None else clock.for_store(store)
    policy = secrets.DEFAULT if store is None else secrets.for_store(store)
    starts: dict[tuple[str, str, int], list[tuple[int, str]]] = defaultdict(list)
    for index, record in enumerate(progress.each(records, len(records), "checking", "facts")):
        where = f"facts[{index}]"
        if now is not None and now.too_late(record["recorded_at"]):
            raise MemstackError(f"bad {where}.{now.problem('recorded_at', record['recorded_at'])}")
        key = identity(record, 0)
        occurrence, seen[key] = seen[key], seen[key] + 1
        fact_id = ids.from_content(record["recorded_at"], agent, identity(record, occurrence))
        fact = make(record, fact_id, None, agent=agent, source=source)
        schemas.validate("fact", fact, where)
        found = secrets.scan({k: fact[k] for k in ("subject", "predicate", "object", "source")}, where, policy)
        if found:
            raise MemstackError(secrets.message(found))
        fact_ids.append(fact_id)
        starts[(record["subject"], record["predicate"], record["valid_from"])].append((record["recorded_at"], fact_id))
    planned = []
    for record, fact_id in zip(records, fact_ids, strict=True):
        end = record["valid_to"]
        if end is None:
            planned.append(Planned(fact_id, None))
            continue
        after = [s for s in starts.get((record["subject"], record["predicate"], end), []) if s[1] != fact_id]
        successor = min(after) if after else None
        learned = max(record["recorded_at"], 1, 0 if successor is None else successor[0])
        planned.append(Planned(fact_id, Closing(fact_id, end, learned, None if successor is None else successor[1])))
    return planned


def batches(records: list[Record], planned: list[Planned]) -> Iterator[list[tuple[Record, Planned]]]:
    pairs = list(zip(records, planned, strict=True))
    for at in range(0, len(pairs), BATCH):
        yield pairs[at:at + BATCH]


def run(root: Path, records: list[Record], *, agent: str, source: str) -> Report:
    """Import the checked records into the store at `root`; nothing is written if one is bad."""
    planned = plan(records, agent=agent, source=source, store=root)
    factstore.finish_pending(root)
    report = Report(facts=len(records))
    closings: list[Closing] = []
    written: set[str] = set()
    with progress.bar(len(records), "importing", "facts") as shown:
        for batch in batches(records, planned):
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
