"""A ferrox fact store into memstack's fact files: every window and closing kept, idempotent.

- Each ferrox record becomes one memstack fact of the importing agent (table knowledge,
  source `ferrox:<file>`), appended to that agent's month file of its `recorded_at`.
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

The whole file is checked before anything is written (every record, every fact it makes,
secrets, transaction times not in the future); the first problem is refused naming the
record (`facts[3].valid_to`).
"""

from collections import Counter, defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from memstack import clock, factfiles, factindex, facts, factstore, ids, jsonio, progress, schemas
from memstack.errors import MemstackError
from memstack.factfiles import Closing
from memstack.facts import Fact
from memstack.ferrox.storefile import Record
from memstack.secrets import refuse_secrets


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


def identity(record: Record, occurrence: int) -> bytes:
    """What makes an imported fact the same fact: everything the seed keeps except its closing."""
    return jsonio.dumps_line([record["subject"], record["predicate"], record["object"], record["valid_from"],
                              record["recorded_at"], record["confidence"], occurrence])


def plan(records: list[Record], *, agent: str, source: str, store: Path | None = None) -> list[Fact]:
    """The memstack facts the records become, closed and linked, each checked (naming its record)."""
    seen: Counter[bytes] = Counter()
    made: list[Fact] = []
    now = None if store is None else clock.for_store(store)
    for index, record in enumerate(progress.each(records, len(records), "checking", "facts")):
        where = f"facts[{index}]"
        key = identity(record, 0)
        occurrence, seen[key] = seen[key], seen[key] + 1
        if now is not None and now.too_late(record["recorded_at"]):
            raise MemstackError(f"bad {where}.{now.problem('recorded_at', record['recorded_at'])}")
        fact = facts.make(subject=record["subject"], predicate=record["predicate"], object=record["object"],
                          valid_from=record["valid_from"], recorded_at=record["recorded_at"], agent=agent,
                          confidence=record["confidence"], source=source,
                          id=ids.from_content(record["recorded_at"], agent, identity(record, occurrence)))
        schemas.validate("fact", fact, where)
        refuse_secrets({k: fact[k] for k in ("subject", "predicate", "object", "source")}, where, store)
        made.append(fact)
    starts: dict[tuple[str, str, int], list[Fact]] = defaultdict(list)
    for fact in made:
        starts[(fact["subject"], fact["predicate"], fact["valid_from"])].append(fact)
    for fact, record in zip(made, records, strict=True):
        if record["valid_to"] is None:
            continue
        after = [f for f in starts.get((fact["subject"], fact["predicate"], record["valid_to"]), []) if f is not fact]
        successor = min(after, key=lambda f: (f["recorded_at"], f["id"])) if after else None
        learned = max(fact["recorded_at"], 1 if successor is None else successor["recorded_at"], 1)
        fact.update(valid_to=record["valid_to"], expired_at=learned,
                    superseded_by=None if successor is None else successor["id"])
    return made


def run(root: Path, records: list[Record], *, agent: str, source: str) -> Report:
    """Import the checked records into the store at `root`; nothing is written if one is bad."""
    made = plan(records, agent=agent, source=source, store=root)
    factstore.finish_pending(root)
    here = {i: fact for i, (_, fact) in factindex.locate(root, [f["id"] for f in made]).items()}
    report = Report(facts=len(made))
    new: list[Fact] = []
    closings: list[Closing] = []
    for fact in made:
        held = here.get(fact["id"])
        if held is None:
            new.append(fact)
        elif held["valid_to"] == fact["valid_to"]:
            report.present += 1
        elif facts.is_open(held):
            closings.append(Closing(fact["id"], fact["valid_to"], fact["expired_at"], fact["superseded_by"]))
        else:
            report.differs += 1
    written = set(factstore.append_many(root, new)) if new else set()
    written |= {factfiles.relpath_for(f) for f in factstore.close_many(root, closings)} if closings else set()
    report.added, report.closed, report.files = len(new), len(closings), sorted(written)
    return report
