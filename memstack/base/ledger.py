"""The promotion ledger: one append-only shard per intake file, `kb/promotions/<agent>/YYYY-MM-DD.jsonl`
holding a line for each of that file's records a promotion routed (docs/reference.md: store layout).

What is pending in an intake file is its records less the intake ids of its shard, so a reader that
wants one file's state reads one shard (`shard_lines`). The few readers that want every line (the
views' distillation times and the Binder queue, `memstack status` on a cold cache) go shard after
shard (`each_line`), never holding more than one.

The readers take the store's files (a folder) or anything that lists folders and streams files
like `repo.sources.Source` (a commit, the index, the work tree).
"""

from collections.abc import Iterator
from pathlib import Path
from typing import Any, Protocol

from memstack.base import ids, jsonio, logfiles
from memstack.base.layout import LEDGER_DIR, ledger_shard
from memstack.base.times import day

SUFFIX = ".jsonl"


class Tree(Protocol):
    """What the readers need of a source of files (repo.sources.Source is one)."""

    def listdir(self, relpath: str) -> list[str]: ...

    def stream(self, relpath: str) -> Iterator[bytes]: ...


class Folder:
    """The store's files on disk as a Tree."""

    def __init__(self, root: Path) -> None:
        self.root = root

    def listdir(self, relpath: str) -> list[str]:
        folder = self.root / relpath
        return sorted(p.name for p in folder.iterdir()) if folder.is_dir() else []

    def stream(self, relpath: str) -> Iterator[bytes]:
        path = self.root / relpath
        if not path.is_file():
            return iter(())
        logfiles.check_tail(path, relpath)  # a torn last line is refused, naming it
        return iter((path.read_bytes(),))


def _tree(where: Path | Tree) -> Tree:
    return Folder(where) if isinstance(where, Path) else where


def intake_file(shard: str) -> str:
    """The intake file whose records a shard routes: `intake/<agent>/YYYY-MM-DD.jsonl`."""
    return "intake" + shard[len(LEDGER_DIR):]


def shards(where: Path | Tree) -> list[str]:
    """Every shard's store-relative path, agent by agent, day by day."""
    tree = _tree(where)
    return [f"{LEDGER_DIR}/{agent}/{name}" for agent in tree.listdir(LEDGER_DIR)
            for name in tree.listdir(f"{LEDGER_DIR}/{agent}") if name.endswith(SUFFIX)]


def shard_lines(where: Path | Tree, intake: str) -> Iterator[dict[str, Any]]:
    """The ledger lines of one intake file's records (none when its shard does not exist yet)."""
    shard = ledger_shard(intake)
    return jsonio.iter_jsonl_pieces(_tree(where).stream(shard), shard)


def each_line(where: Path | Tree) -> Iterator[dict[str, Any]]:
    """Every ledger line, shard after shard (within a shard, in its order)."""
    tree = _tree(where)
    for shard in shards(tree):
        yield from jsonio.iter_jsonl_pieces(tree.stream(shard), shard)


def routed_ids(where: Path | Tree, intake: str) -> set[str]:
    """The intake ids one intake file's shard routes (ratifications included: they repeat a routed id)."""
    return {line["intake_id"] for line in shard_lines(where, intake) if isinstance(line.get("intake_id"), str)}


def intake_files_of(where: Path | Tree, intake_id: str) -> list[str]:
    """The intake files that can hold the record `intake_id`: an id is bound to its day and to its
    agent's tag (base/ids.py), so the day's file of each agent whose tag it carries (usually one;
    none for an id that is not bound)."""
    match = ids.ID.match(intake_id)
    if match is None:
        return []
    try:
        name = day(int(match.group(1), 16)) + SUFFIX
    except (OverflowError, ValueError, OSError):  # past year 9999: no file holds it
        return []
    return [f"intake/{agent}/{name}" for agent in _tree(where).listdir("intake")
            if ids.agent_tag(agent) == match.group(3)]


def record_lines(where: Path | Tree, intake_id: str) -> Iterator[dict[str, Any]]:
    """The ledger lines about one intake record: read from the shard of the day and agent its id is
    bound to (from every shard for an id bound to none, written before ids were bound)."""
    tree = _tree(where)
    bound = intake_files_of(tree, intake_id)
    if bound or ids.ID.match(intake_id):
        lines: Iterator[dict[str, Any]] = (line for relpath in bound for line in shard_lines(tree, relpath))
    else:
        lines = each_line(tree)
    return (line for line in lines if line.get("intake_id") == intake_id)
