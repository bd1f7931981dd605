"""The Binder's verbs: the queue, a human's decision, a filed document, a confirmed edge."""

from collections.abc import Iterator
from pathlib import Path
from typing import Any

from memstack.base import config, ids, limits, pages
from memstack.base.errors import bad
from memstack.base.names import check_printable
from memstack.base.shown import Shown
from memstack.base.times import now_ms
from memstack.kb import binder, disputes, documents, edges, views
from memstack.repo import git
from memstack.repo.counts import CachedCounts
from memstack.repo.sources import WorktreeSource
from memstack.repo.store import Store, resolve_agent


def queue_key(entry: dict[str, Any]) -> tuple[Any, ...]:
    """The queue's order: waiting records by (created_at, id), then disputes by (subject, predicate, id)."""
    if entry.get("kind") == "dispute":
        return (1, entry["subject"], entry["predicate"], entry["id"])
    return (0, entry["created_at"], entry["id"])


_WAITING, _DISPUTE = pages.shaped(int, str, str), pages.shaped(int, str, str, str)


def _queue_shape(key: list[Any]) -> bool:
    """A key queue_key makes: (0, created_at, id) or (1, subject, predicate, id)."""
    return (_WAITING(key) and key[0] == 0) or (_DISPUTE(key) and key[0] == 1)


def list_document(store: Store, *, limit: Any = None, cursor: str | None = None,
                  max_bytes: int | None = None) -> dict[str, Any]:
    """`binder list --json` and the `binder_list` tool: one page of the waiting intake records, oldest first,
    then the disagreements between agents (`"kind": "dispute"`, docs/merge.md) and the records people decided
    differently (`"kind": "dispute"` with `"decisions"`, docs/binder.md). The page's records are read
    from the queue's shards of their days; the later shards are only counted."""

    pages.page([], limit=limit, cursor=cursor, key=queue_key, verb="binder list",
               shape=_queue_shape)  # a bad cursor is refused before the queue is read
    after = None if cursor in (None, "") else pages.decode(cursor, "binder list", _queue_shape)
    size = pages.check_limit(limit)
    head: list[dict[str, Any]] = []
    rest = 0
    if after is None or after[0] == 0:  # a cursor past every record leaves only disagreements
        counts = CachedCounts(store.root)
        head, rest = views.waiting_head(WorktreeSource(store.root), None if after is None else (after[1], after[2]),
                                        size, counts)
        counts.save()
    found = sorted([*disputes.waiting(store.root), *binder.disputed(store.root)], key=queue_key)
    items: list[dict[str, Any]] = head + found if not rest else head
    return pages.page(items, limit=limit, cursor=cursor, key=queue_key, verb="binder list", shape=_queue_shape,
                      max_bytes=max_bytes, uncounted=rest + (len(found) if rest else 0)).document()


def queue(store: Store) -> Iterator[dict[str, Any]]:
    """The queue in its order, streamed: the waiting records (read from the queue's shards a day at a
    time), then the disagreements and the records people decided differently."""

    yield from Shown.in_store(store.root).records(views.waiting(WorktreeSource(store.root)))  # forgetting.md
    yield from sorted([*disputes.waiting(store.root), *binder.disputed(store.root)], key=queue_key)


def decide_document(store: Store, verb: str, id: str, by: str | None = None, note: str | None = None, *,
                    mcp: bool = False, agent: str | None = None) -> dict[str, Any]:
    """Ratify or reject; the document `binder ratify|reject --json` prints and the `binder_*` tools return
    (`mcp`: made by the MCP server's `agent`, recorded as the agent's: `by_agent`)."""

    ids.checked(id)
    who, via = _by(store, by, note, mcp, agent, "decides")
    if disputes.side_of(store.root, id) is not None:  # a side of a disagreement between agents
        return disputes.decide(store.root, id, verb, who, now_ms(), note, via=via)
    return binder.decide(store.root, id, verb, who, now_ms(), note, via=via)


def _by(store: Store, by: str | None, note: str | None, mcp: bool, agent: str | None,
        does: str = "confirms it") -> tuple[str, str | None]:
    """Who a new Binder line names, and its `via`: on the command line the person given (default: git's
    user.name, else the login name); over MCP the server's agent (`by_agent`)."""
    limits.check_text(store.root, "--note", note)
    if by is not None and not by.strip():  # given empty: bad input, not "the default"
        raise bad("--by", repr(by), f"must name who {does}")
    check_printable(by, "--by")
    if mcp:
        return by_agent(store, by, agent), "mcp"
    return _listed(store, by or git.person(store.root)), None


def by_agent(store: Store, by: str | None, agent: str | None) -> str:
    """A Binder line made over MCP names the server's agent (--agent, MEMSTACK_AGENT, memory.default_agent):
    an agent cannot write a person's name, so a `by` naming anyone else is refused; with binder.people
    listed, only an agent listed there may decide (agents are not people unless the store says so); under
    binder.require_signed no agent decides (its line could never be committed)."""
    name = resolve_agent(store, agent)
    if by is not None and by != name:
        raise bad("--by", repr(by), "over MCP a Binder line is recorded as made by the agent itself ({agent}), never"
                  " in another's name: leave by out; a person decides with `memstack binder ratify ID` on the"
                  " command line",
                  agent=name)
    if config.binder_signing(store.config.document)[0]:
        raise bad("--by", repr(name), "binder.require_signed is on: a Binder line lands only in a commit a person"
                  " signs with the key binder.signers lists under their name, never one made over MCP by agent"
                  " {agent}; nothing written: a person decides with `memstack binder ratify|reject|file|edge` on"
                  " the command line", agent=name)
    people = config.binder_people(store.config.document)
    if people is not None and name not in people:
        raise bad("--by", repr(name), "agent {agent} is not one of the people memstack.yaml lists under"
                  " binder.people ({names}): agents do not decide, file or confirm in the Binder; a person"
                  " does, with `memstack binder ratify|reject|file|edge` on the command line", agent=name,
                  names=", ".join(sorted(people)) or "none")
    return name


def _listed(store: Store, who: str) -> str:
    """`who`, when memstack.yaml's `binder.people` lists it or lists no one (the checks hold every new
    Binder line to the same list)."""
    people = config.binder_people(store.config.document)
    if people is not None and who not in people:
        raise bad("--by", repr(who), "not one of the people memstack.yaml lists under binder.people ({names}):"
                  " only they decide, file and confirm in the Binder", names=", ".join(sorted(people)) or "none")
    return who


def file_document(store: Store, *, path: str, by: str | None = None, note: str | None = None,
                  outside_repo: bool = False, mcp: bool = False, agent: str | None = None) -> dict[str, Any]:
    """`binder file --json` and the `binder_file` tool: the Binder entry (the copy is at its `path`). The
    document comes from inside the repository that holds the store (the store's folder when it is in
    none) unless `outside_repo` (the command line's --outside-repo: a person's explicit choice; never
    over MCP)."""

    if not isinstance(path, str) or not path.strip():
        raise bad("PATH", repr(path), "name a document to file")
    within = None if outside_repo else git.worktree_top(store.root) or store.root
    who, via = _by(store, by, note, mcp, agent)
    return documents.file_document(store.root, Path(path), who, now_ms(), note, within=within, via=via)


def edge_document(store: Store, *, source: str, target: str, relation: str, by: str | None = None,
                  note: str | None = None, mcp: bool = False, agent: str | None = None) -> dict[str, Any]:
    """`binder edge --json` and the `binder_edge` tool: the entry appended."""

    who, via = _by(store, by, note, mcp, agent)
    return edges.add(store.root, source, target, relation, who, now_ms(), note, via=via)
