"""Opening the search index for a query, and building it in the background when it is far behind.

`opened` brings the index up to date before a query (index.sync), unless that means reading more than
BUILD_BUDGET bytes of memory files (a fresh clone of a large store, a large pull) or a build is already
at it: then the query answers from what the index holds, says so (`behind`: the `index` field of the
search document), and once it has answered, a detached process (`python -m memstack.search STORE`,
`main`; base/background.py, as the fact index does) catches the index up, committing file by file, so
each search meanwhile finds more. A build that failed on the files as they are now is not tried again in
the background: the next search catches up in the foreground and says why.
"""

import os
import sqlite3
import sys
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from memstack.base import background
from memstack.search import index

BUILD_BUDGET = 16 * 2**20  # bytes of memory files a search indexes itself (about a second) before it answers
_BUILD_LOCK = "search-index-build.lock"
_BUILD_FAILED = ".memstack/search-index-build.failed"


@contextmanager
def opened(store: Path) -> Iterator[tuple[sqlite3.Connection, dict[str, Any] | None]]:
    """The index and None, up to date; or, far behind, the index as it is and what it holds."""

    def defer(behind: int, changed: list[os.stat_result]) -> bool:
        if building(store):
            return True
        return behind > BUILD_BUDGET and not background.failed_since(store, _BUILD_FAILED, changed)

    with index.DB.guard:
        db, behind = index.DB.repaired(store, lambda db: index.sync(db, store, defer))
        try:
            yield db, behind
        finally:
            if behind is not None:
                background.start("memstack.search", store, _BUILD_LOCK)  # once the search has its answer


def caught_up(store: Path, told: Callable[[str], None]) -> None:
    """Bring the index wholly up to date in this process, as a search does when it is a little behind, however far
    behind it is: what `memstack test` answers from (a case searched in a half-built index fails, or passes an
    `expect_not` because nothing was searched). A build at work holds the index's lock while it builds: this waits
    for it, then reads what is left. `told` hears it when that is more than a search would wait for."""

    def say(behind: int, changed: list[os.stat_result]) -> bool:
        at_work = building(store)
        if at_work or behind > BUILD_BUDGET:
            told(f"the search index is behind ({behind / 2**20:.1f} MiB of memory files to index"
                 + ("; a build is at work: waiting for it" if at_work else "") + "): bringing it up to date first")
        return False

    with index.DB.guard:
        index.DB.repaired(store, lambda db: index.sync(db, store, say))


def building(store: Path) -> bool:
    """Whether a build is catching the store's search index up."""
    return background.running(store, _BUILD_LOCK)


def main(argv: Sequence[str] | None = None) -> int:
    """`python -m memstack.search STORE`: bring the store's search index up to date, file by file."""
    store = Path((sys.argv[1:] if argv is None else argv)[0]).resolve()

    def build() -> None:
        with index.DB.guard:
            index.DB.repaired(store, lambda db: index.sync(db, store, each=True))

    return background.run(store, _BUILD_LOCK, _BUILD_FAILED, build)
