"""A prefix query (`deploy*`): its hits cost what a plain query's cost, whatever the page's size.

FTS5 answers a prefix by merging the lists of every term the prefix begins. Looked up hit by hit (for the
hits' snippets), that merge was made again for each hit: `search 'o*' --limit 10000` took minutes where a
plain query of the same hits took under a second. Time is no test (machines are noisy): the work is counted
as the bytes the search reads from the index file, SQLite's page cache off, which do not depend on how busy
the machine is.
"""

import os
from pathlib import Path
from typing import Any

import orjson
import pytest

from helpers import memstack
from memstack.intake import log
from memstack.search import index, query

DAY = 86_400_000
T0 = 1_767_225_600_000  # 2026-01-01T00:00:00Z
RECORDS = 240

pytestmark = pytest.mark.skipif(not os.path.exists("/proc/self/io"), reason="counts the bytes read in /proc/self/io")


def orchard(store: Path) -> None:
    """RECORDS records, each with words of its own beginning with "orchard" (a prefix of many terms)."""
    for n in range(RECORDS):
        log.write(store, log.make_record(agent="alice", created_at=T0 + (n % 30) * DAY + n,
                                         content=f"row {n}: the pickers found apples ripe in "
                                         + " ".join(f"orchard{n}x{k}" for k in range(12))))


def _read() -> int:
    with open("/proc/self/io") as io:
        return next(int(line.split()[1]) for line in io if line.startswith("rchar:"))


def work(store: Path, text: str, limit: int, max_bytes: int | None = None) -> tuple[int, dict[str, Any]]:
    """The bytes a search reads (the index already up to date, SQLite's page cache off), and its document."""
    with index.opened(store) as db:
        db.execute("PRAGMA cache_size = 0")
        before = _read()
        found = query.search(store, text, limit=limit, max_bytes=max_bytes)
        return _read() - before, found


def test_a_prefix_search_costs_what_a_plain_query_of_the_same_hits_costs(store: Path) -> None:
    orchard(store)
    work(store, "orchard*", 10)  # the modules a search loads, loaded
    prefix, found = work(store, "orchard*", RECORDS)
    assert len(found["hits"]) == RECORDS
    assert all("**orchard" in hit["snippet"] for hit in found["hits"])  # each snippet marks its own words
    plain, same = work(store, "pickers", RECORDS)  # a plain query of the same hits
    assert len(same["hits"]) == RECORDS
    assert prefix < plain, (prefix, plain)  # not a merge of every "orchard…" term's list for each hit


def test_the_byte_budget_ends_a_prefix_page_and_its_work(store: Path) -> None:
    orchard(store)
    work(store, "orchard*", 10)
    whole, _ = work(store, "orchard*", RECORDS)
    budget = 8 * 2**10
    part, page = work(store, "orchard*", RECORDS, max_bytes=budget)  # as over MCP (pages.MCP_MAX_BYTES)
    assert 0 < len(page["hits"]) < RECORDS and len(orjson.dumps(page)) <= budget
    assert page["remaining"] == RECORDS - len(page["hits"])
    assert part < whole / 2, (part, whole)  # the hits past the budget are not made
    told = memstack("search", "orchard*", "--json", "--limit", str(RECORDS), cwd=store)  # the command line: whole
    assert told.returncode == 0 and len(orjson.loads(told.stdout)["hits"]) == RECORDS
