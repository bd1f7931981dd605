"""Disagreements between agents: two facts that closed one predecessor differently (docs/merge.md).

Alice and Bob each `capture --contradicts` the same open fact P on their own
clones: P's line (in P's file) is closed twice, differently; the successors W
and F live in Alice's and Bob's own files and carry `supersedes: [P]`. When the
branches meet, the merge driver keeps one closing of P, the *winner*: the one
recorded first (smaller `expired_at`), then the smaller successor id, then the
smaller `valid_to` (`rank`). The loser's closing is not lost: it is exactly
(valid_to = F.valid_from, expired_at = F.recorded_at, superseded_by = F.id),
and F names P. So nothing is written for the disagreement: it is *derived*,
wherever it is needed, as a predecessor that two or more open facts claim to
have closed (`find`). It waits in the Binder until a human ratifies one side
(the other open sides are closed, superseded by it) or rejects a side (that
side is closed); closing the sides in any other way (a later capture
--contradicts closes them all) settles it too.

Finding the disagreements among facts is pure (base/disputed.py: recall and the
boot context mark them too); the first half of this module, which orders rival
closings, imports nothing costly, so the merge driver and the checks pay nothing
for it.
"""

from collections.abc import Callable
from typing import Any

from memstack.base import files, jsonio, layout, logfiles, schemas
from memstack.base.disputed import find
from memstack.base.errors import bad
from memstack.base.forgotten import Forgotten, closed_by_forgetting
from memstack.base.secrets import refuse_secrets
from memstack.base.times import iso
from memstack.kb import binder, factstore
from memstack.kb.factfiles import Closing
from memstack.kb.facts import CLOSING_FIELDS
from memstack.kb.index import queries

Fact = dict[str, Any]


def names_successor(fact: Fact) -> bool:
    """A closing with integer times that names its successor (what capture --contradicts writes)."""
    return (type(fact.get("valid_to")) is int and type(fact.get("expired_at")) is int
            and isinstance(fact.get("superseded_by"), str))


def rank(fact: Fact) -> tuple[int, str, int]:
    """The order of rival closings of one fact: the first one recorded wins (see the module text)."""
    return (fact["expired_at"], fact["superseded_by"], fact["valid_to"])


def winner(a: Fact, b: Fact) -> Fact | None:
    """Of two different closings of one fact, each naming a successor, the one kept; None if either names none."""
    if not (names_successor(a) and names_successor(b)):
        return None
    return a if rank(a) <= rank(b) else b


def replaces_forgetting(old: Fact, new: Fact, forgotten: Callable[[], Forgotten] | None) -> bool:
    """`new` closes the fact with a successor where `old` holds the closing forgetting gave it (no successor, at
    its tombstone's time: `forgotten.closed_by_forgetting`), nothing else differing. One clone forgot the fact
    while another superseded it: the merge keeps the successor's closing (the chain, as `forget` keeps an
    earlier closing), and the forget's loses nothing, its tombstone says it (docs/merge.md). `forgotten`: what
    the state forgets, asked only for such a pair."""
    return (forgotten is not None and names_successor(new) and new.get("superseded_by") != new.get("id")
            and all(old.get(k, ...) == new.get(k, ...) for k in old.keys() | new.keys() if k not in CLOSING_FIELDS)
            and old.get("superseded_by") is None and old.get("valid_to") is not None
            and type(new.get("valid_from")) is int and new["valid_to"] > new["valid_from"]
            and closed_by_forgetting(old, forgotten()))


# --- the store: what waits in the Binder, and a human's decision ----------------------------------

def waiting(store: Any) -> list[dict[str, Any]]:
    """Every disagreement in the store's facts (through the fact index: only the open facts of the
    subject+predicate keys holding two or more are read, then the predecessors by id), as `binder list`
    shows it."""

    found = []
    for open_facts in queries.open_by_key(store, queries.crowded(store)).values():
        found += find(open_facts)
    before = queries.locate(store, [dispute["id"] for dispute in found]) if found else {}
    for dispute in found:
        predecessor = before.get(dispute["id"], (None, None))[1]
        if any(side["id"] == dispute["id"] for side in dispute["sides"]):
            predecessor = None  # sides a promotion made: none names a predecessor
        dispute.update(predecessor=predecessor, kept_closing=predecessor and predecessor.get("superseded_by"),
                       created_at=iso(max(side["recorded_at"] for side in dispute["sides"])))
    return found


def side_of(store: Any, fact_id: str) -> dict[str, Any] | None:
    """The disagreement that fact `fact_id` is an open side of, or None."""

    where = queries.locate(store, [fact_id])
    if fact_id not in where:
        return None
    fact = where[fact_id][1]
    for dispute in find(queries.versions(store, fact["subject"], fact["predicate"])):
        if any(side["id"] == fact_id for side in dispute["sides"]):
            return dispute
    return None


def decide(store: Any, fact_id: str, decision: str, by: str, now: int, note: str | None = None, *,
           via: str | None = None) -> dict[str, Any]:
    """A human settles a disagreement: `ratify` closes every other open side at `now`, superseded by
    this one; `reject` closes this side at `now`. The decision is appended to kb/binder.jsonl (`via`:
    "mcp" when an agent made it over the MCP server)."""

    record: dict[str, Any] = {"fact_id": fact_id, "decision": decision, "decided_at": now, "by": by}
    if via:
        record["via"] = via
    if note:
        record["note"] = note
    refuse_secrets(record, store=store)
    problems = schemas.errors("binder", record)
    if problems:
        raise bad(problems[0].split(":", 1)[0], None, "{why}", why=problems[0].split(": ", 1)[-1])
    with files.locked(store, layout.DECISIONS + ".decide"):
        earlier = [d for d in logfiles.read_log(store, layout.DECISIONS) if d.get("fact_id") == fact_id]
        if earlier:
            raise bad("ID", repr(fact_id), "already {done} by {by} (one decision per side)",
                      done=binder.PAST[earlier[0]["decision"]], by=earlier[0]["by"])
        dispute = side_of(store, fact_id)
        if dispute is None:
            raise bad("ID", repr(fact_id), "not waiting in the binder queue (`{verb:memstack binder list}`)")
        ending = [s for s in dispute["sides"] if (s["id"] != fact_id) == (decision == "ratify")]
        for side in ending:
            if side["valid_from"] >= now:
                raise bad("ID", repr(fact_id), "fact {side} begins {begins}, after now; decide once it has begun"
                          " (a fact is closed after it begins)", side=side["id"], begins=iso(side["valid_from"]))
        successor = fact_id if decision == "ratify" else None
        factstore.close_many(store, [Closing(s["id"], now, now, successor) for s in ending])
        files.append_line(store, layout.DECISIONS, jsonio.dumps_line(record))
    return {**record, "closed": [s["id"] for s in ending]}
