"""The handoff verbs: seal one, show the latest."""

from typing import Any

from memstack.base.errors import MemstackError
from memstack.base.shown import Shown
from memstack.base.times import now_ms
from memstack.boot import context as boot
from memstack.handoff import sealed as handoff
from memstack.repo.sources import WorktreeSource
from memstack.repo.store import Store, agent_origin, resolve_agent


def write_document(store: Store, agent: str | None, text: str) -> dict[str, Any]:
    """Seal one handoff; the document `handoff write --json` prints and the `handoff_write` tool returns."""
    return handoff.write(store.root, resolve_agent(store, agent), text, now_ms(), agent_origin(agent))


def show_document(store: Store, agent: str | None) -> dict[str, Any]:
    """The agent's latest handoff; the document `handoff show --json` prints and the `handoff_show` tool returns."""
    agent = resolve_agent(store, agent)
    found = boot.latest_handoff(WorktreeSource(store.root), agent)
    if found is None:
        raise MemstackError(f"no handoff for agent {agent!r} yet (handoffs/{agent}/ is empty)")
    relpath, parsed = found
    return Shown.in_store(store.root).record({  # forgotten: without its content; a credential: redacted
        "path": relpath, "front_matter": parsed.front, "open_threads": parsed.open_threads,
        "capabilities": parsed.capabilities, "text": parsed.text}, relpath)
