"""Where each record goes (kb/routing.py) and the fact it becomes: the triple, a derived id, its times
and its ledger line's promoted_at from the record (no clock), one chunk at a time."""

import dataclasses
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any, NamedTuple

from memstack.base import config, ids, jsonio, secrets
from memstack.base.spill import Spill
from memstack.base.times import parse_ts
from memstack.kb import facts
from memstack.kb.facts import Fact
from memstack.kb.routing import BROKEN, FACT_TABLES, Rules, route
from memstack.workflows.promote.gather import BATCH, Gathered, Pending, Ratified, gather

NOTED = "noted"


def fact_id_for(intake_id: str, recorded: int, ratified: bool = False, agent: str | None = None) -> str:
    """The fact an intake record becomes: deterministic, bound to its agent and recorded_at (memstack/base/ids.py)."""
    return ids.derived(intake_id, "r" if ratified else "f", recorded, agent)


def triple(record: dict[str, Any]) -> tuple[str, str, str]:
    if record.get("subject"):
        return record["subject"], record["predicate"], record["object"]
    return (record["title"].strip() or f"note:{record['id']}"), NOTED, record["content"]


class Routed(NamedTuple):
    """What routing decided for one record: small, as a promotion holds one for each pending record."""

    intake_id: str
    agent: str
    sub_tier: str
    via: str
    file: str | None
    decision: dict[str, Any] | None  # a human's ratify decision: the record becomes knowledge, tier ratified
    at: int  # its ledger line's promoted_at: `promoted_at(record, decision)`, never the clock


class Made(NamedTuple):
    """A fact a routed record becomes, kept as where its line is in the spool (parsed again only while
    it is decided and written)."""

    valid_from: int
    fact_id: str
    routed: int  # its Routed's index
    at: int  # where its line starts in `spool`
    spool: Spill

    @property
    def line(self) -> bytes:
        return self.spool.line(self.at)


def records_of(gathered: Pending, keys: list[int]) -> Iterator[tuple[int, dict[str, Any]]]:
    """Each pending record read again, in the order of `keys`, BATCH at a time: each batch reads the
    files it needs once, and only its lines are parsed; nothing of the rest is held."""
    for at in range(0, len(keys), BATCH):
        lines: dict[str, list[bytes]] = {}
        for key in keys[at:at + BATCH]:
            yield key, gathered.record(key, lines)


def promoted_at(record: dict[str, Any], decision: dict[str, Any] | None) -> int:
    """When a record's promotion happened, as far as the store can tell: when the last of its inputs
    existed (the record's `created_at`; a ratified record's decision `decided_at` when later). Also the
    `recorded_at` of the fact it becomes. Derived, never the clock: the same record promoted in two
    clones gives the same ledger line, which a merge keeps once (docs/merge.md)."""
    when = parse_ts(record["created_at"], "created_at")
    return max(when, decision["decided_at"]) if decision else when


def fact_of(record: dict[str, Any], table: str, decision: dict[str, Any] | None) -> Fact:
    subject, predicate, obj = triple(record)
    when = parse_ts(record["created_at"], "created_at")
    recorded = promoted_at(record, decision)
    return facts.make(subject=subject, predicate=predicate, object=obj, valid_from=when, recorded_at=recorded,
                      agent=record["agent"], confidence=record["confidence"], table=table,
                      source=record["source"] or None, intake_id=record["id"],
                      id=fact_id_for(record["id"], recorded, decision is not None, record["agent"]),
                      tier="ratified" if decision else writers_tier(record), anchors=record.get("anchors"))


def writers_tier(record: dict[str, Any]) -> str:
    """The tier of the fact a record becomes without a Binder ratification: its own, but "verified" for one its
    writer put at "ratified" (memstack 0.1.0 let a writer; only a person's ratification makes that tier now)."""
    return "verified" if record["tier"] == "ratified" else str(record["tier"])


class Planner:
    """Routes the records of a promotion one chunk at a time: what each becomes (`Routed`) and the
    facts they make (`Made`, in time order, ratified records among the rest)."""

    def __init__(self, store: Path, gathered: Gathered) -> None:
        self.store, self.gathered = store, gathered
        self.rules = Rules.from_config(config.read(store))
        self.names: dict[str, str] = {}  # one copy of each agent name, file name and via
        self.policy = gathered.pending.vetting.policy  # the screen of the ratified records too
        self.held: list[str] = []  # the records skipped for a credential (docs/forgetting.md)

    def sneaked(self, record: dict[str, Any], relpath: str | None) -> bool:
        """Whether `record` (a ratified one: the pending ones were screened as they were read, vetting.py) holds
        a credential that reached memory past the checks: then it is `skipped`."""
        found = secrets.scan(record, "", self.policy)
        if found:
            self.skipped(record, relpath, (found[0].kind, found[0].field or "the record"))
        return bool(found)

    def skipped(self, record: dict[str, Any], relpath: str | None, credential: tuple[str, str]) -> None:
        """A record holding a credential (its kind and field) is skipped, named on stderr, and waits for `memstack
        forget` (nothing of it is promoted)."""
        self.held.append(record["id"])
        print(f"memstack promote: warning: {relpath or 'intake'}: record {record['id']} holds a credential"
              f" ({credential[0]} in {credential[1]}), which reached memory past the checks:"
              f" skipped; rotate it, then `memstack forget {record['id']} --reason ...`", file=sys.stderr)

    def route(self, keys: list[int], ratified: list[Ratified], shown: Any = None) -> tuple[list[Routed], list[Made]]:
        """The chunk's pending records (`keys`, routed in order), then its ratified ones."""
        routed: list[Routed] = []
        made: list[Made] = []
        spool = Spill("memstack-promote-")
        names = self.names

        def add(record: dict[str, Any], relpath: str | None, sub_tier: str, via: str,
                decision: dict[str, Any] | None) -> None:
            if sub_tier in FACT_TABLES:
                fact = fact_of(record, sub_tier, decision)
                made.append(Made(fact["valid_from"], fact["id"], len(routed), spool.write(jsonio.dumps_line(fact)),
                                 spool))
            agent = names.setdefault(record["agent"], record["agent"])
            routed.append(Routed(record["id"], agent, sub_tier, names.setdefault(via, via),
                                 relpath and names.setdefault(relpath, relpath), decision,
                                 promoted_at(record, decision)))

        pending = self.gathered.pending
        for key, record in records_of(pending, keys):
            credential = pending.held_in(key)  # screened as it was read (vetting.py)
            if credential is not None:
                self.skipped(record, pending.where(key)[0], credential)
                continue
            sub_tier, via = route(record, self.rules, cwd=self.store)
            if via.endswith(BROKEN + ")"):
                print(f"memstack promote: {via[len('rules ('):-1]}; the rules route the rest", file=sys.stderr)
                self.rules = dataclasses.replace(self.rules, classifier=None)
            add(record, pending.where(key)[0], sub_tier, via, None)
            if shown is not None:
                shown.update(1)
        for item in ratified:
            if self.sneaked(item.record, item.file):
                continue
            add(item.record, item.file, "knowledge", "binder", item.decision)
        made.sort()
        return routed, made


def plan(store: Path) -> dict[str, Any]:
    """What a promotion would do, without writing, as one chunk: every routed record and how (`routed`),
    the facts they become (`made`), and how far the logs were read (`read`)."""
    gathered = gather(store)
    routed, made = Planner(store, gathered).route(gathered.keys, gathered.ratified)
    return {"routed": routed, "made": made, "read": gathered.read}
