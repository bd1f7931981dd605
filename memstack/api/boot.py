"""The boot context's verbs: rebuild the anchors and willow.md, show an agent's anchor."""

from typing import Any

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
    kb/binder.jsonl as it is now, not part of the derived anchor)."""

    anchor = boot.show(store.root, resolve_agent(store, agent))
    anchor = Shown.in_store(store.root).record(anchor, anchor.get("handoff"))  # a forgotten handoff: its content gone
    return {**anchor, "edges": edges.touching(store.root, anchor.get("open_threads") or [])}
