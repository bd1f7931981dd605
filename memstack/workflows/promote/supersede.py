"""A new fact against the open facts of its table, subject and predicate, in time order: it closes the
older ones with another object, is added already closed when a newer one is open, is a duplicate
when one with its object is open; then the facts, closings and ledger lines are written."""

import dataclasses
from collections.abc import Iterator
from pathlib import Path

from memstack.base import files, jsonio, layout, synced
from memstack.base.errors import MemstackError
from memstack.kb import facts, factstore
from memstack.kb.factfiles import Closing
from memstack.kb.facts import Fact
from memstack.kb.index import queries
from memstack.workflows.promote.gather import BATCH
from memstack.workflows.promote.planner import NOTED, Made, Routed

Open = tuple[str, str, int, int, int | None]  # an open fact: (id, object, valid_from, recorded_at, its Made index)


@dataclasses.dataclass
class Decided:
    """What supersede decided: the Made facts to append (by index, in order), the closings of the
    facts on disk, the closing of each new fact appended already closed, each record's fact id."""

    append: list[int]
    closings: list[Closing]
    closed: dict[int, Closing]
    fact_ids: list[str | None]  # by Routed index: the fact that holds it (a duplicate: the existing one)


def _open_facts(store: Path, made: list[Made]) -> dict[tuple[str, str, str], list[Open]]:
    """The open facts on disk of the (table, subject, predicate) keys of the new facts, as small tuples;
    asked of the fact index a thousand keys at a time."""
    batch_ids = {m.fact_id for m in made}
    keys = sorted({(fact["subject"], fact["predicate"]) for fact in map(_parsed, made)})
    open_now: dict[tuple[str, str, str], list[Open]] = {}
    for at in range(0, len(keys), 1000):
        for (subject, predicate), found in queries.open_by_key(store, keys[at:at + 1000]).items():
            for fact in found:
                if fact["id"] not in batch_ids:  # a fact an interrupted run wrote is decided again, the same way
                    open_now.setdefault((fact["table"], subject, predicate), []).append(
                        (fact["id"], fact["object"], fact["valid_from"], fact["recorded_at"], None))
    return open_now


def _parsed(made: Made) -> Fact:
    return jsonio.loads(made.line, f"fact {made.fact_id}")


def supersede(store: Path, made: list[Made]) -> Decided:
    """Decide each new fact's fate against the open facts, in time order."""
    open_now = _open_facts(store, made)
    decided = Decided([], [], {}, [None] * (max((m.routed for m in made), default=-1) + 1))
    for index, item in enumerate(made):
        new = _parsed(item)
        current = open_now.setdefault((new["table"], new["subject"], new["predicate"]), [])
        if new["predicate"] == NOTED:  # notes accumulate: two notes under one title are two notes
            decided.fact_ids[item.routed] = item.fact_id
            decided.append.append(index)
            continue
        same = [f for f in current if f[1] == new["object"]]
        if same:
            decided.fact_ids[item.routed] = same[0][0]  # a duplicate: the ledger points at the fact that holds it
            continue
        decided.fact_ids[item.routed] = item.fact_id
        later = [f for f in current if f[2] > new["valid_from"]]
        for old in [f for f in current if f[2] < new["valid_from"]]:
            closing = Closing(old[0], new["valid_from"], max(new["recorded_at"], old[3]), item.fact_id)
            if old[4] is not None:
                decided.closed[old[4]] = closing  # not written yet: appended already closed
            else:
                decided.closings.append(closing)
            current.remove(old)
        if later:
            successor = min(later, key=lambda f: (f[2], f[0]))
            decided.closed[index] = Closing(item.fact_id, successor[2], max(new["recorded_at"], successor[3]),
                                            successor[0])
        else:
            current.append((item.fact_id, new["object"], new["valid_from"], new["recorded_at"], index))
        decided.append.append(index)
    return decided


def facts_to_append(made: list[Made], decided: Decided) -> Iterator[list[Fact]]:
    """The facts to append, in order, BATCH at a time, each as decided (closed or open)."""
    for at in range(0, len(decided.append), BATCH):
        batch = []
        for index in decided.append[at:at + BATCH]:
            fact = _parsed(made[index])
            closing = decided.closed.get(index)
            if closing is not None:
                fact.update(valid_to=closing.valid_to, expired_at=closing.expired_at,
                            superseded_by=closing.superseded_by)
            batch.append(fact)
        yield batch


def write_facts(store: Path, made: list[Made], decided: Decided, checked: bool = False) -> int:
    """Append the new facts BATCH at a time, then the closings; returns how many facts this superseded
    (`facts.superseded_by_change`: what `review` of the commit lists). Facts an interrupted run already wrote
    are not written again; where that run left one open and this run closes it (a record that arrived
    since), the closing is written. `checked`: the promotion's commit check validates and screens every
    line written (factstore.append_many), so it is done once, there."""
    closings = list(decided.closings)
    superseded = 0
    for batch in facts_to_append(made, decided):
        on_disk = {i: fact for i, (_, fact) in queries.locate(store, [f["id"] for f in batch]).items()}
        for fact in batch:
            written = on_disk.get(fact["id"])
            if written is not None and written["valid_to"] is None and fact["valid_to"] is not None:
                closings.append(Closing(fact["id"], fact["valid_to"], fact["expired_at"], fact["superseded_by"]))
            else:  # new to the commit (an interrupted run commits nothing); a closing is counted below
                superseded += facts.superseded_by_change(None, fact)
        factstore.append_many(store, [f for f in batch if f["id"] not in on_disk], check_ids=False, checked=checked)
    if closings:
        superseded += sum(facts.superseded_by_change(before, after)
                          for before, after in factstore.close_many_changes(store, closings, checked))
    return superseded


def write_ledger(store: Path, routed: list[Routed], fact_ids: list[str | None]) -> None:
    """One ledger line for each routed record, in order, appended to the shard of the record's intake
    file (layout.ledger_shard), BATCH lines at a time; its promoted_at is derived from the record
    (`planner.promoted_at`), so the line is the same in every clone."""
    by_shard: dict[str, list[bytes]] = {}
    for index, item in enumerate(routed):
        if not item.file:
            raise MemstackError(f"intake record {item.intake_id}: its intake file was not found, so its ledger"
                                " shard cannot be named — `memstack check` names what is wrong with the store")
        by_shard.setdefault(layout.ledger_shard(item.file), []).append(jsonio.dumps_line({
            "intake_id": item.intake_id, "agent": item.agent, "sub_tier": item.sub_tier,
            "fact_id": fact_ids[index] if index < len(fact_ids) else None, "promoted_at": item.at,
            "via": item.via, "file": item.file}))
    def appends() -> Iterator[tuple[Path, str, bytes]]:
        for shard in sorted(by_shard):
            lines = by_shard[shard]
            (store / shard).parent.mkdir(parents=True, exist_ok=True)
            for at in range(0, len(lines), BATCH):
                yield store / shard, shard, b"".join(lines[at:at + BATCH])

    with files.locked(store, layout.LEDGER_DIR):
        synced.append_many_held(appends())  # their fsyncs made together (a promotion's 1,000 shards)
