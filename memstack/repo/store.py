"""Finding a store and the one agent a write is for."""

import os
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Any

from memstack.base.config import CONFIG_NAME, Config, read, require_format
from memstack.base.errors import MemstackError
from memstack.base.names import check_name
from memstack.repo import checkout, clonehooks, git


@dataclass(frozen=True)
class Store:
    root: Path

    @cached_property
    def config(self) -> Config:
        """memstack.yaml to read, shared by every reader (a command that changes it loads its own copy:
        `config.load`)."""
        return read(self.root)

    def path(self, relpath: str) -> Path:
        return self.root / relpath


def is_store(path: Path) -> bool:
    return (path / CONFIG_NAME).is_file()


def locate(explicit: str | os.PathLike[str] | None = None, cwd: Path | None = None,
           old_format_ok: bool = False) -> Path | None:
    """The store's root, in this order: --store, MEMSTACK_HOME, WILLOW_HOME, nearest ancestor,
    else the one store the enclosing git repository tracks (a store in a folder of a code
    repository, found from anywhere in it).

    Returns None when nothing names a store and no ancestor holds one; raises
    when a named path is not a store, when the repository holds several, or when the store's format is
    not the one this memstack reads (format 1 passes with `old_format_ok`: `migrate`, `check`).
    """
    root = _located(explicit, cwd)
    if root is not None:
        require_format(root, old_format_ok)
        clonehooks.remark(root)  # hooks an older memstack installed: one line, `memstack install`
    return root


def _located(explicit: str | os.PathLike[str] | None, cwd: Path | None) -> Path | None:
    for origin, value in (
        ("--store", explicit),
        ("MEMSTACK_HOME", os.environ.get("MEMSTACK_HOME")),
        ("WILLOW_HOME", os.environ.get("WILLOW_HOME")),
    ):
        if value:
            path = Path(value).expanduser().resolve()
            if not is_store(path):
                advice = checkout.advice(path) if path.is_dir() else None
                if advice is not None:  # a clone whose store is on a branch it has not checked out
                    raise MemstackError.marked("{path} (from {origin}) holds no store: {top} is {advice}", path=path,
                                               origin=origin, top=advice[0], advice=advice[1])
                raise MemstackError.marked(
                    "{path} (from {origin}) is not a memstack store (no {config}) — run"
                    " `{verb:memstack init {value}}` or point {origin} at a store",
                    path=path, origin=origin, config=CONFIG_NAME, value=value)
            return path
    return nearest((cwd or Path.cwd()).resolve())


def nearest(here: Path) -> Path | None:
    """The nearest ancestor of `here` holding memstack.yaml, else the one store of its work tree."""
    for candidate in (here, *here.parents):
        if is_store(candidate):
            return candidate
    return repository_store(here)


def folders(top: Path, rev: str | None = None) -> list[str]:
    """The folders ("" for the top, else "path/") of the stores the repository at `top` tracks,
    from the index, or from commit `rev` (a bare repository has no index)."""
    return [path[: -len(CONFIG_NAME)] for path in git.store_configs(top, rev)]


def folders_touched(top: Path, revs: Sequence[str]) -> list[str]:
    """The folders of the stores whose memstack.yaml the commits `git log REVS` add, change or delete
    (a store a range deletes is still checked: its deletion is a violation)."""
    return [path[: -len(CONFIG_NAME)] for path in git.store_configs_touched(top, revs)] if revs else []


def one_folder(found: list[str], where: object) -> str | None:
    """The one store folder of `found`; several are ambiguous (bad usage: say which)."""
    if len(found) > 1:
        names = ", ".join(folder.rstrip("/") or "." for folder in found)
        raise MemstackError.marked("{where} holds {count} memstack stores ({names}): {pass:--store PATH}",
                                   where=where, count=len(found), names=names)
    return found[0] if found else None


def repository_store(here: Path) -> Path | None:
    """The one store the git work tree around `here` tracks, or None (not in a work tree, no store)."""
    top = git.worktree_top(here)
    if top is None:
        return None
    folder = one_folder(folders(top), top)
    return None if folder is None else top / folder


def store_relative(path: str, top: Path) -> str:
    """A path of the repository at `top` (`.memory/kb/...`) as a path of its store (`kb/...`):
    below the nearest folder above it that holds memstack.yaml (a few stat calls, no git)."""
    parts = path.split("/")
    for cut in range(len(parts) - 1, 0, -1):
        if is_store(top.joinpath(*parts[:cut])):
            return "/".join(parts[cut:])
    return path


def folder_of(root: Path) -> tuple[Path, str]:
    """The work tree holding the store at `root`, and the store's folder in it ("" or "path/")."""
    top = git.worktree_top(root)
    if top is None:
        raise MemstackError.marked("{root} is not in a git work tree — `{verb:memstack init {root}}` makes a store",
                                   root=root)
    return top, folder_in(root, top) or ""


def folder_in(path: Path, top: Path) -> str | None:
    """The folder ("path/") `path` is in the work tree at `top`: "" for the top itself, None outside it."""
    try:
        rel = path.resolve().relative_to(top.resolve()).as_posix()
    except ValueError:
        return None
    return "" if rel == "." else f"{rel}/"


def open_store(explicit: str | os.PathLike[str] | None = None, cwd: Path | None = None,
               old_format_ok: bool = False) -> Store:
    root = locate(explicit, cwd, old_format_ok)
    if root is None:
        advice = checkout.advice((cwd or Path.cwd()).resolve())
        if advice is not None:  # a clone whose store is on a branch it has not checked out
            raise MemstackError.marked("no memstack store here: {top} is {advice}", top=advice[0], advice=advice[1])
        raise MemstackError.marked("no memstack store here: {pass:--store PATH}, set MEMSTACK_HOME, or run inside a"
                                   " store (`{verb:memstack init PATH}` makes one)")
    return Store(root)


def resolve_agent(store: Store, agent: str | None) -> str:
    """--agent, then MEMSTACK_AGENT, then memory.default_agent in memstack.yaml; an agent of the store.

    When memstack.yaml lists its agents (`agents:`), a name it does not list is refused, so a typo never
    starts a new agent's files (`memstack agent add NAME` lists one); a store listing none takes any name."""
    origin = agent_origin(agent)
    name = agent if origin == "--agent" else os.environ.get("MEMSTACK_AGENT") if origin == "MEMSTACK_AGENT" \
        else store.config.get("memory", "default_agent")
    if origin == "memory.default_agent" and not name:
        raise MemstackError.marked("no agent given: {pass:--agent NAME}, set MEMSTACK_AGENT, or set"
                                   " memory.default_agent in memstack.yaml")
    return listed_agent(store, check_name(name, "agent"), origin)


def agent_origin(agent: str | None) -> str:
    """Where `resolve_agent` takes the agent from: "--agent" (given, even empty: checked, an empty name is bad
    input, not "the default"), "MEMSTACK_AGENT" or "memory.default_agent"."""
    if agent is not None:
        return "--agent"
    return "MEMSTACK_AGENT" if os.environ.get("MEMSTACK_AGENT") else "memory.default_agent"


def agent_filter(store: Store, agent: Any) -> str | None:
    """The agent a read narrows to (`search --agent`, `intake list --agent`): None for every agent, else one
    memstack.yaml lists or whose memory is here; any other name is a typo, refused naming the agents, never
    answered "nothing found"."""
    if agent is None:
        return None
    name = check_name(agent, "agent")
    if name in store.config.agents or any((store.root / top / name).is_dir() for top in ("intake", "kb/facts",
                                                                                         "handoffs")):
        return name
    writers = sorted({*store.config.agents, *(p.name for p in (store.root / "intake").glob("*") if p.is_dir())})
    error = MemstackError.marked("bad {arg:--agent} {agent!r}: no agent of that name in this store (its agents: "
                                 "{known})", agent=name, known=", ".join(writers) or "none yet")
    error.field, error.reason = "agent", "not an agent of this store"
    raise error


def listed_agent(store: Store, agent: str, origin: str) -> str:
    """`agent` if memstack.yaml lists it (or lists no agent at all); else bad input naming the known ones."""
    known = store.config.agents
    if not known or agent in known:
        return agent
    where = "{arg:--agent} {agent!r}" if origin == "--agent" else "agent {agent!r} (from " + origin + ")"
    error = MemstackError.marked(
        "bad " + where + ": not an agent of this store (memstack.yaml lists {known}); `{verb:memstack agent add"
        " {agent}}` adds it", agent=agent, known=", ".join(known))
    error.field, error.reason = "agent", "not an agent of this store"
    raise error
