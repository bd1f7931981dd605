"""Opening the fact index for a query, and catching it up in the background when it is far behind.

`opened` brings the index up to date (catchup.sync) before a query, unless that means reading
more than a budget (BUILD_BUDGET for a query that can be answered from the files: a fresh clone,
a large pull): then the caller answers from the files, and once it has, a detached process
(`python -m memstack.kb.index STORE`, `main`; base/background.py) catches the index up. The journal is WAL, so no
query waits for that build. A build that failed on the fact files as they are now is not tried
again in the background: the next query catches up in the foreground and says why.

`freshness` tells `memstack status` how far behind the index is, from stats alone.
"""

import sqlite3
import sys
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from memstack.base import background, follow
from memstack.kb import factfiles
from memstack.kb.index import catchup, schema

BUILD_BUDGET = 32 * 2**20  # bytes of fact files a query indexes itself (~1 s) before it answers from the files
_BUILD_LOCK = "facts-index-build.lock"
_BUILD_FAILED = ".memstack/facts-index-build.failed"


@contextmanager
def opened(store: Path, budget: int | None = None) -> Iterator[sqlite3.Connection | None]:
    """The index, up to date with the fact files (built on first use).

    With a `budget`, None instead when catching up would mean reading more than
    `budget` bytes of fact files (a fresh clone, a large pull): a background
    process catches the index up, and the caller answers from the files meanwhile.
    """
    with schema.DB.guard:
        db, current = schema.DB.repaired(
            store, lambda db: catchup.sync(db, store, None if _last_build_failed(store) else budget))
        try:
            yield db if current else None
        finally:
            if not current:
                start_build(store)  # once the caller has its answer: the build does not compete with it


def start_build(store: Path) -> None:
    """Catch the index up in a detached process, unless one is already at it."""
    background.start("memstack.kb.index", store, _BUILD_LOCK)


def building(store: Path) -> bool:
    """Whether a build is catching the store's index up (its lock is held)."""
    return background.running(store, _BUILD_LOCK)


def _last_build_failed(store: Path) -> bool:
    """A background build failed on the files as they are now: catch up in the foreground and say why."""
    return background.failed_since(store, _BUILD_FAILED, (st for _, st in factfiles.list_files(store)))


def main(argv: Sequence[str] | None = None) -> int:
    """`python -m memstack.kb.index STORE`: bring the store's index up to date (what start_build runs)."""
    store = Path((sys.argv[1:] if argv is None else argv)[0]).resolve()

    def build() -> None:
        with opened(store):
            pass

    return background.run(store, _BUILD_LOCK, _BUILD_FAILED, build)


def freshness(store: Path) -> dict[str, Any]:
    """Whether the index is in step with the fact files (`memstack status`), from their stats alone:
    the index is opened read-only, neither built nor synced, and no fact file is read."""
    on_disk = factfiles.list_files(store)
    known: dict[str, follow.Known] = {}
    exists = schema.DB.path(store).is_file()
    try:
        with schema.DB.read_only(store) as db:
            if db is not None:
                known = follow.known(db)
    except sqlite3.DatabaseError:
        known = {}  # unreadable: the next query drops and rebuilds it
    changed, gone = follow.stale(known, on_disk)
    return {"exists": exists, "fresh": not changed and not gone, "files_behind": len(changed) + len(gone),
            "bytes_behind": sum(follow.cost(known.get(rel), st) for rel, st in changed),
            "building": building(store) if exists else False}
