"""`memstack forget`: tombstones for records forgotten on purpose (docs/forgetting.md)."""

from typing import Any

from memstack.base.errors import bad
from memstack.base.times import now_ms
from memstack.kb import tombstones
from memstack.repo import git
from memstack.repo.store import Store, resolve_agent
from memstack.workflows import derived


def forget_document(store: Store, *, id: Any, reason: Any, by: str | None = None, agent: str | None = None,
                    mcp: bool = False) -> dict[str, Any]:
    """`forget --json` and the `forget` tool: `{"path", "tombstones", "closed", "rebuilt"}` (the derived files
    the closings changed). On the command line `by` is the
    person (default: git's user.name, else the login name); over MCP the server's agent, never anyone else."""
    record_ids = [id] if isinstance(id, str) else list(id or [])
    name = resolve_agent(store, agent)
    if mcp and by is not None and by != name:
        raise bad("--by", repr(by), "over MCP a tombstone is recorded as made by the agent itself ({agent}), never"
                  " in another's name: leave by out", agent=name)
    forgetter = name if mcp else git.person(store.root) if by is None else by
    document = tombstones.forget(store.root, record_ids, reason, forgetter, name, now_ms(), via="mcp" if mcp else None)
    # the closed facts leave the views, a forgotten handoff the boot files, in the same commit as the tombstones
    document["rebuilt"] = derived.rebuild(store.root, changed_only=True)
    return document
