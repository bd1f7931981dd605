"""Finding a store and the one agent a write is for."""

import os
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

from memstack.config import CONFIG_NAME, Config, load
from memstack.errors import MemstackError
from memstack.names import check_name


@dataclass(frozen=True)
class Store:
    root: Path

    @cached_property
    def config(self) -> Config:
        return load(self.root)

    def path(self, relpath: str) -> Path:
        return self.root / relpath


def is_store(path: Path) -> bool:
    return (path / CONFIG_NAME).is_file()


def locate(explicit: str | os.PathLike[str] | None = None, cwd: Path | None = None) -> Path | None:
    """The store's root by SPEC order: --store, MEMSTACK_HOME, WILLOW_HOME, nearest ancestor.

    Returns None when nothing names a store and no ancestor holds one; raises
    when a named path is not a store.
    """
    for origin, value in (
        ("--store", explicit),
        ("MEMSTACK_HOME", os.environ.get("MEMSTACK_HOME")),
        ("WILLOW_HOME", os.environ.get("WILLOW_HOME")),
    ):
        if value:
            path = Path(value).expanduser().resolve()
            if not is_store(path):
                raise MemstackError(
                    f"{path} (from {origin}) is not a memstack store (no {CONFIG_NAME})"
                    f" — run `memstack init {value}` or point {origin} at a store"
                )
            return path
    here = (cwd or Path.cwd()).resolve()
    for candidate in (here, *here.parents):
        if is_store(candidate):
            return candidate
    return None


def open_store(explicit: str | os.PathLike[str] | None = None, cwd: Path | None = None) -> Store:
    root = locate(explicit, cwd)
    if root is None:
        raise MemstackError(
            "no memstack store here: pass --store PATH, set MEMSTACK_HOME, or run inside a store"
            " (`memstack init PATH` makes one)"
        )
    return Store(root)


def resolve_agent(store: Store, agent: str | None) -> str:
    """--agent, then MEMSTACK_AGENT, then memory.default_agent in memstack.yaml."""
    if agent is not None:  # given, even empty: checked (an empty name is bad input, not "the default")
        return check_name(agent, "agent")
    if os.environ.get("MEMSTACK_AGENT"):
        return check_name(os.environ["MEMSTACK_AGENT"], "agent")
    default = store.config.get("memory", "default_agent")
    if default:
        return check_name(default, "agent")
    raise MemstackError(
        "no agent given: pass --agent NAME, set MEMSTACK_AGENT, or set memory.default_agent in memstack.yaml"
    )
