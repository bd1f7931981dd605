"""`memstack anchors reverify ID --by NAME`: someone checked an anchored fact against the code as it is now and
it still holds. Recorded append-only, as a `kind: reverify` line of the Binder log naming the fact, who and
when, and the fact's anchors taken again where its lines are now; from then on `memstack anchors` follows
those (the fact is fresh at the new commit). The fact itself never changes."""

from typing import Any

from memstack.anchors.coderepo import code_repository, head
from memstack.anchors.follow import Follower
from memstack.anchors.records import anchored_facts, latest
from memstack.anchors.take import take
from memstack.base import jsonio
from memstack.base.errors import bad
from memstack.base.files import append_line, locked
from memstack.base.layout import DECISIONS
from memstack.base.names import check_printable
from memstack.kb.binder import check_entry
from memstack.repo.codetree import CodeTree
from memstack.repo.store import Store


def spelled(place: dict[str, Any]) -> str:
    return place["path"] if place["start"] is None else f"{place['path']}:{place['start']}-{place['end']}"


def reverify(store: Store, fact_id: str, by: str, now: int, *, note: str | None = None, repo: str | None = None,
             via: str | None = None) -> dict[str, Any]:
    """Append the reverification of the open fact `fact_id`; returns the line. An anchor whose lines are
    gone (orphaned) cannot be re-checked: capture the new truth instead."""
    if not isinstance(by, str) or not by.strip():
        raise bad("--by", repr(by), "must name who checked it")
    check_printable(by, "--by")  # both are printed on terminals (`memstack anchors`, review), as forget's are
    check_printable(note, "--note")
    found = [fact for fact in anchored_facts(store.root, None) if fact["id"] == fact_id]
    if not found:
        raise bad("ID", repr(fact_id), "no open fact with code anchors has this id (`{verb:memstack anchors}`)")
    anchors = latest(store.root).get(fact_id, found[0])["anchors"]
    top = code_repository(store, repo)
    tree = CodeTree(top, store=store.root)
    try:
        follower = Follower(tree, tree.entries({a["path"] for a in anchors}))
        followed = [follower.follow(anchor) for anchor in anchors]
    finally:
        tree.close()
    gone = [a for a in followed if a["status"] == "orphaned"]
    if gone:
        raise bad("ID", repr(fact_id), "its anchor {anchor} is orphaned ({reason}): nothing is left to re-check;"
                  " capture what holds now (`{verb:memstack capture --contradicts}`)",
                  anchor=spelled(gone[0]), reason=gone[0].get("reason"))
    commit = head(top)
    entry: dict[str, Any] = {"kind": "reverify", "reverified": fact_id,
                             "anchors": [take(top, top, spelled(a["now"]), commit) for a in followed],
                             "decided_at": now, "by": by}
    check_entry(store.root, entry, note, via)
    with locked(store.root, DECISIONS + ".decide"):
        append_line(store.root, DECISIONS, jsonio.dumps_line(entry))
    return entry
