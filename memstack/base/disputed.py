"""Which facts disagree (kb/disputes.py has the story): two or more open facts that claim to have closed
one predecessor, or open facts made by promotion holding different objects for one table, subject and
predicate. Pure: recall, the boot context (willow.md, the anchors) and the Binder find disputes alike, and a
side is marked wherever it is shown (`marked`: `DISPUTED with ...`, as recall prints it)."""

from collections.abc import Iterable, Mapping
from typing import Any

from memstack.base import ids

Fact = dict[str, Any]


def _promoted(fact: Fact) -> bool:
    """An open fact a promotion made (its id derived from its intake record), naming no predecessor."""
    intake = fact.get("intake_id")
    return (fact.get("valid_to") is None and not fact.get("supersedes") and isinstance(intake, str)
            and fact.get("predicate") != "noted" and ids.made_from(str(fact.get("id")), intake))


def find(facts: Iterable[Fact]) -> list[dict[str, Any]]:
    """The disagreements among `facts`: each predecessor id that two or more open facts claim
    (`supersedes`), with those sides (oldest first) and the predecessor when `facts` holds it; then
    each table, subject and predicate where two or more open facts made by promotion hold different
    objects (a promotion leaves one open: clones that promoted without seeing each other's records
    left several, docs/merge.md), its id the oldest side's, no predecessor."""
    by_id: dict[str, Fact] = {}
    claims: dict[str, list[Fact]] = {}
    promoted: dict[tuple[str, str, str], list[Fact]] = {}
    for fact in facts:
        by_id[fact["id"]] = fact
        if fact.get("valid_to") is None:
            for predecessor in fact.get("supersedes") or ():
                claims.setdefault(predecessor, []).append(fact)
        if _promoted(fact):
            promoted.setdefault((fact["table"], fact["subject"], fact["predicate"]), []).append(fact)
    found = []
    for sides in (promoted[key] for key in sorted(promoted)):
        if len({side["object"] for side in sides}) > 1:
            sides = sorted(sides, key=lambda f: (f["recorded_at"], f["id"]))
            found.append({"kind": "dispute", "id": sides[0]["id"], "subject": sides[0]["subject"],
                          "predicate": sides[0]["predicate"], "predecessor": None, "kept_closing": None,
                          "sides": sides})
    for predecessor, sides in sorted(claims.items()):
        if len(sides) < 2:
            continue
        sides = sorted(sides, key=lambda f: (f["recorded_at"], f["id"]))
        before = by_id.get(predecessor)
        found.append({"kind": "dispute", "id": predecessor, "subject": sides[0]["subject"],
                      "predicate": sides[0]["predicate"], "predecessor": before,
                      "kept_closing": None if before is None else before.get("superseded_by"), "sides": sides})
    return found


def disputed_with(facts: list[Fact]) -> dict[str, list[str]]:
    """For each fact of `facts` that is a side of a disagreement among them: the other sides' ids."""
    others: dict[str, list[str]] = {}
    for dispute in find(facts):
        ids = [side["id"] for side in dispute["sides"]]
        for ident in ids:
            mine = others.setdefault(ident, [])
            mine += [i for i in ids if i != ident and i not in mine]
    return others


def marked(fact: Mapping[str, Any]) -> str:
    """What follows a fact that is a side of a disagreement (its `disputed_with`) on its line: "" for none."""
    others = fact.get("disputed_with")
    return f"  DISPUTED with {', '.join(others)} (`memstack binder list`)" if others else ""
