"""Facts closed in favour of each other (I2): a cycle of closings leaves none of them open.

`memstack binder ratify X` settles a disagreement by closing its other open sides, superseded by X
(docs/merge.md). Two people who ratify opposite sides on their own clones each close the other's side:
Alice's commit closes Y in favour of X, Bob's closes X in favour of Y. The two closings lie in two fact
files (each side in its own agent's file), so the merge driver, which sees one file at a time, keeps
both: X and Y each superseded by the other, nothing open, and recall finds nothing. Only Binder
ratifications close a fact in favour of a fact that already existed, so a cycle is made of facts the
state's Binder log ratifies: those few are looked up (each in the one fact file its id is bound to),
and only when the step closes a fact (a step's closings name the facts to start from; past `CAP` of
them, as in an audit, every ratified fact is a start).
"""

from typing import Any

from memstack.base import ids, layout
from memstack.base.times import iso
from memstack.integrity.report import Step
from memstack.integrity.rules.text import parse
from memstack.integrity.successors import bound
from memstack.integrity.violations import Violation

CAP = 10_000
FACT_ID, RATIFY = b'"fact_id":"', b'"decision":"ratify"'
UNDO = ("the store keeps one: keep the first decision ({first}) and undo the other before it is pushed (a merge:"
        " `git reset --keep HEAD^1`; then your own decision's commit: `git reset --keep <commit>^`), pull, and settle"
        " it with the other person (a new answer: `memstack capture --contradicts`)")
FIX = ("people ratified opposite sides of one disagreement in different clones, and each decision closed the other's"
       " side; " + UNDO)


class Closings:
    """The facts a step's closings name (closed or successor), to start the search from."""

    def __init__(self) -> None:
        self.named: set[str] = set()
        self.every = False  # past CAP closings: start from every ratified fact

    def note(self, numbered: list[tuple[int, bytes]]) -> None:
        for _, raw in numbered:
            if b'"superseded_by":"' not in raw or self.every:
                continue
            if len(self.named) > CAP:
                self.every = True
                continue
            fact, problem = parse(raw)
            if not problem and isinstance(fact, dict):
                self.named.update(v for v in (fact.get("id"), fact.get("superseded_by")) if isinstance(v, str))

    def __bool__(self) -> bool:
        return self.every or bool(self.named)

    def violations(self, step: Step) -> list[Violation]:
        ratified = _ratified(step.source.read(layout.DECISIONS) or b"")
        starts = set(ratified) if self.every else set(ratified) & self.named
        if not starts:
            return []
        agents = step.source.listdir("kb/facts")
        found: dict[str, tuple[str, int, dict]] = {}
        reported: set[frozenset[str]] = set()
        out = []
        for start in sorted(starts):
            chain, at = [start], start
            while True:
                fact = _fact(step, agents, at, found)
                successor = fact[2].get("superseded_by") if fact else None
                if not isinstance(successor, str) or successor not in ratified or successor in chain[1:]:
                    break
                if successor == start:
                    ring = frozenset(chain)
                    if ring not in reported:
                        reported.add(ring)
                        out.append(_violation(start, chain, found, ratified))
                    break
                chain.append(successor)
                at = successor
        return out


def _violation(start: str, chain: list[str], found: dict[str, tuple[str, int, dict]],
               ratified: dict[str, dict[str, Any]]) -> Violation:
    path, number, _ = found[start]
    names = " and ".join(f"fact {fid} (ratified by {ratified[fid].get('by')})" for fid in chain)
    first = min(chain, key=lambda fid: (type(ratified[fid].get("decided_at")) is not int,
                                        str(ratified[fid].get("decided_at")).rjust(20), fid))
    decision = ratified[first]
    return Violation(path, number, "I2", f"{names} are each closed in favour of the other, so none of them is open",
                     FIX.format(first=f"{decision.get('by')} ratified {first} at {_when(decision.get('decided_at'))}"))


def _when(ms: object) -> object:
    try:
        return iso(ms) if type(ms) is int else ms
    except (OverflowError, ValueError, OSError):
        return ms


def _fact(step: Step, agents: list[str], fact_id: str,
          found: dict[str, tuple[str, int, dict]]) -> tuple[str, int, dict] | None:
    """Where fact `fact_id` is in the state (its path, line and record), looked for in the one file its id is
    bound to (an id bound to none: not looked for)."""
    if fact_id in found:
        return found[fact_id]
    tag, month = bound(fact_id)
    if not tag or not month:
        return None
    needle = f'"id":"{fact_id}"'.encode()
    for agent in agents:
        if ids.agent_tag(agent) != tag:
            continue
        path = f"kb/facts/{agent}/{month}.jsonl"
        data = step.source.read(path) or b""
        at = data.find(needle)
        if at < 0:
            continue
        start, end = data.rfind(b"\n", 0, at) + 1, data.find(b"\n", at)
        fact, problem = parse(data[start:len(data) if end < 0 else end])
        if not problem and isinstance(fact, dict) and fact.get("id") == fact_id:
            found[fact_id] = (path, data.count(b"\n", 0, start) + 1, fact)
            return found[fact_id]
    return None


def _ratified(log: bytes) -> dict[str, dict[str, Any]]:
    """The fact ids the Binder's log ratifies (sides of disagreements), each with its first ratification,
    found by byte search."""
    out: dict[str, dict[str, Any]] = {}
    for raw in log.splitlines():
        if FACT_ID in raw and RATIFY in raw:
            line, problem = parse(raw)
            if not problem and isinstance(line, dict) and isinstance(line.get("fact_id"), str) \
                    and line.get("decision") == "ratify":
                out.setdefault(line["fact_id"], line)
    return out
