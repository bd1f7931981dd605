"""The agents of a store: `agents:` in memstack.yaml, each with its identity/<agent>.md.

A write for an agent the list does not name is refused (`repo.store.listed_agent`), so an agent is added
on purpose, here: the name joins the list (the config schema checks it), its identity file is written
when missing, and the first agent becomes `memory.default_agent` when none is set.
"""

from typing import Any

from memstack.base import config
from memstack.base.files import write_atomic
from memstack.base.names import check_name
from memstack.repo.store import Store


def identity_text(agent: str) -> str:
    """A new agent's identity file: its heading and what a human should write below it."""
    return f"# {agent}\n\nWho this agent is, what it is for, and how it works. Written by a human.\n"


def _append(document: Any, agent: str) -> None:
    """Append to `agents:` in place, so the file keeps its comments and the blank line after the list."""
    seq = document.get("agents")
    if not hasattr(seq, "ca"):  # no list yet, or not a round-trip one: a new list
        document["agents"] = [*(seq or []), agent]
        return
    last = len(seq) - 1
    seq.append(agent)
    seq.fa.set_block_style()  # `agents: []` becomes a list of lines
    if last in seq.ca.items:  # the comment after the old last item follows the list's end
        seq.ca.items[last + 1] = seq.ca.items.pop(last)


def add(store: Store, agent: str) -> dict[str, Any]:
    """List `agent` in memstack.yaml and give it an identity file; an agent already listed changes nothing."""
    check_name(agent, "agent")
    cfg = config.load(store.root)  # a copy of its own, comments kept: store.config is shared, to read
    listed = cfg.agents
    written = []
    if agent not in listed:
        _append(cfg.document, agent)
        if not cfg.get("memory", "default_agent"):
            cfg.document.setdefault("memory", {})["default_agent"] = agent
        cfg.save()  # validated by the config schema first
        written.append("memstack.yaml")
    identity = store.path(f"identity/{agent}.md")
    if not identity.exists():
        identity.parent.mkdir(exist_ok=True)
        write_atomic(identity, identity_text(agent).encode())
        written.append(f"identity/{agent}.md")
    if not written:
        message = f"{agent} is already an agent of this store; nothing changed"
    elif "memstack.yaml" in written:
        message = (f"added agent {agent}: wrote {' and '.join(written)}; commit {'them' if len(written) > 1 else 'it'}"
                   f" (`git add {' '.join(written)} && git commit`) so every clone knows the agent: `memstack sync`"
                   " leaves a change of memstack.yaml to a person")
    else:
        message = f"{agent} was already listed; wrote its missing identity/{agent}.md"
    return {"agent": agent, "added": "memstack.yaml" in written, "written": written,
            "agents": cfg.agents, "message": message}
