"""The boot context's verbs: rebuild the anchors and willow.md, show an agent's anchor."""

from typing import Any

from memstack.anchors.used import to_reverify
from memstack.base.shown import Shown
from memstack.boot import context as boot
from memstack.kb import edges
from memstack.repo.store import Store, resolve_agent


def rebuild_document(store: Store, agent: str | None = None) -> dict[str, Any]:
    """Rebuild the anchors (all, or `agent`'s) and willow.md; `boot rebuild --json` and the `boot_rebuild` tool."""
    return {"changed": boot.rebuild(store.root, agent)}


def show_document(store: Store, agent: str | None) -> dict[str, Any]:
    """The agent's anchor; the document `boot show --json` prints and the `boot_show` tool returns.
    With it, `edges`: the Binder's confirmed edges that touch the anchor's open threads (read from
    kb/binder.jsonl as it is now, not part of the derived anchor), and `to_reverify`: the agent's open facts
    whose code anchors drifted or are orphaned in the work tree (memstack/anchors/used.py; absent when the
    store has no code repository), `to_reverify_more` how many past the first ones."""

    who = resolve_agent(store, agent)
    anchor = boot.show(store.root, who)
    shown = Shown.in_store(store.root)
    anchor = shown.record(anchor, anchor.get("handoff"))  # a forgotten handoff: its content gone
    document = {**anchor, "edges": edges.touching(store.root, anchor.get("open_threads") or [])}
    found = to_reverify(store.root, who)
    if found is not None:  # None: no code repository to follow code anchors into (a standalone store)
        document["to_reverify"] = list(shown.records(found[0]))
        if found[1]:
            document["to_reverify_more"] = found[1]
    return document
