"""The first search on a fresh clone of a large store does not wait for the index: it answers from what
is built, says so, and a detached build catches the index up file by file (search/build.py)."""

import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client, StdioServerParameters

from helpers import MEMSTACK, git, memstack
from memstack.base import files, jsonio, locks
from memstack.intake import log
from memstack.search import build, index
from memstack.search.semantic import available

DAY = 86_400_000
T0 = 1_767_225_600_000  # 2026-01-01T00:00:00Z


def search(store: Path, query: str) -> tuple[dict[str, Any], str]:
    ran = memstack("search", query, "--json", "--limit", "5", cwd=store)
    assert ran.returncode == 0, ran.stderr
    return json.loads(ran.stdout), ran.stderr


def over_mcp(store: Path, query: str) -> dict[str, Any]:
    async def session() -> dict[str, Any]:
        params = StdioServerParameters(command=MEMSTACK, args=["mcp"], cwd=store, env=dict(os.environ))
        async with Client(params, mode="legacy") as client:
            result = await client.call_tool("search", {"query": query})
            assert not result.is_error, result.content
            document: dict[str, Any] = json.loads(result.content[0].text)
            return document

    return anyio.run(session)


def record(n: int, content: str) -> dict[str, Any]:
    return log.make_record(agent="alice", content=content, created_at=T0 + (n % 40) * DAY + n)


# Another process asking, as fast as it can, whether a build is at work: what each search does when it
# finds the index behind.
ASKING = """
import sys, time
from pathlib import Path
from memstack.search import build
store, end = Path(sys.argv[1]), time.monotonic() + 60
print("asking", flush=True)
while time.monotonic() < end:
    assert not build.building(store), "a search's question was taken for a build"
"""


def test_searches_asking_at_once_whether_a_build_is_at_work_do_not_take_each_other_for_one(store: Path) -> None:
    for n in range(3):
        log.write(store, record(n, f"the lighthouse keeper logs storm {n}"))
    asker = subprocess.Popen([sys.executable, "-c", ASKING, str(store)], stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True)
    try:
        assert asker.stdout is not None and asker.stdout.readline() == "asking\n"
        for _ in range(12):  # each from no index: it is behind, and the search asks whether a build is at it
            index.drop(store)
            found, said = search(store, "lighthouse")
            assert len(found["hits"]) == 3 and "index" not in found and said == ""
        assert asker.poll() is None, asker.communicate()[1]  # nor did it ever take a search for a build
    finally:
        asker.kill()
        asker.communicate()


def test_a_search_while_a_build_is_at_work_answers_from_what_is_built(store: Path) -> None:
    for n in range(3):
        log.write(store, record(n, f"the lighthouse keeper logs storm {n}"))
    found, said = search(store, "lighthouse")
    assert len(found["hits"]) == 3 and "index" not in found and said == ""
    log.write(store, record(3, "a new lighthouse on the northern cape"))
    with locks.acquire(str(files.local_dir(store, "locks") / "search-index-build.lock")):  # a build at work
        found, said = search(store, "lighthouse")
        assert len(found["hits"]) == 3  # the index as built: the new record is not in it yet
        assert found["index"]["built"] is False and found["index"]["records_indexed"] == 3
        assert found["index"]["bytes_behind"] > 0
        assert "still being built" in said and "3 records indexed" in said
        assert over_mcp(store, "lighthouse")["index"] == found["index"]  # an agent is told too
        told = memstack("search", "northern", cwd=store)  # only in the record the index does not hold yet
        assert told.stdout == "nothing found for 'northern' yet: the index is still being built, search again in a" \
                              " moment\n" and "still being built" in told.stderr
    found, said = search(store, "lighthouse")  # no build at work, a small catch-up: done before answering
    assert len(found["hits"]) == 4 and "index" not in found and said == ""
    assert memstack("search", "westward", cwd=store).stdout == "nothing found for 'westward'\n"  # all built: no "yet"


def test_a_search_answering_from_a_stale_index_never_shows_a_record_forgotten_since(store: Path) -> None:
    """docs/forgetting.md: from the moment `forget` ran, a forgotten record is found only by the words of its
    reason, in every read, also while a build is at work and the index still holds its text."""
    secret = record(0, "the lighthouse keeper's albatross code is 4417")
    log.write(store, secret)
    others = [record(n, f"the lighthouse keeper logs storm {n}") for n in range(1, 3)]
    for made in others:
        log.write(store, made)
    assert len(search(store, "lighthouse")[0]["hits"]) == 3  # all indexed, the secret's text too
    log.write(store, record(3, "a new lighthouse on the northern cape"))  # the index is behind
    forgot = memstack("forget", secret["id"], "--reason", "an erasure request", cwd=store)
    assert forgot.returncode == 0, forgot.stderr
    with locks.acquire(str(files.local_dir(store, "locks") / "search-index-build.lock")):  # a build at work
        found, said = search(store, "lighthouse")
        assert "index" in found and "still being built" in said  # answered from the index as it was
        assert sorted(hit["id"] for hit in found["hits"]) == sorted(made["id"] for made in others)
        assert "albatross" not in json.dumps(found) and secret["id"] not in json.dumps(found)
        assert search(store, "albatross")[0]["hits"] == []
        text = memstack("search", "albatross", cwd=store)
        assert text.returncode == 0 and "albatross code" not in text.stdout and secret["id"] not in text.stdout
        assert text.stdout.startswith("nothing found for 'albatross' yet")
        shown = memstack("search", "lighthouse", "--limit", "500", cwd=store).stdout
        assert "albatross" not in shown and secret["id"] not in shown and "lighthouse" in shown
        if available():  # ranked by meaning too: the model found it by what it said
            meant = memstack("search", "albatross code", "--semantic", "--json", cwd=store)
            assert meant.returncode == 0 and "albatross" not in json.dumps(json.loads(meant.stdout)["hits"])
            assert secret["id"] not in meant.stdout
        told = over_mcp(store, "keeper")  # an agent: the keeper's other records, not the forgotten one
        assert told["hits"] and "albatross" not in json.dumps(told["hits"]) and secret["id"] not in json.dumps(told)
    found, said = search(store, "erasure")  # the build done (a small catch-up): found by its reason alone
    assert [hit["id"] for hit in found["hits"]] == [secret["id"]] and said == ""
    assert found["hits"][0]["title"] == "[forgotten: an erasure request]"
    assert search(store, "albatross")[0]["hits"] == []


@pytest.mark.slow
def test_the_first_search_on_a_fresh_clone_of_a_large_store_starts_a_build(store: Path, tmp_path: Path) -> None:
    size, n = 0, 0
    while size <= build.BUILD_BUDGET + 2**20:
        line = jsonio.dumps_line(record(n, f"record {n} of the archive " + "filler " * 600))
        relpath = log.relpath_for(json.loads(line))
        path = store / relpath
        path.parent.mkdir(parents=True, exist_ok=True)
        with path.open("ab") as handle:
            handle.write(line)
        size, n = size + len(line), n + 1
    git(store, "add", "-A")
    git(store, "commit", "-q", "--no-verify", "-m", "a large archive")
    clone = tmp_path / "clone"
    git(tmp_path, "clone", "-q", "--local", str(store), str(clone))

    first, said = search(clone, "archive")
    assert first["index"] == {"built": False, "records_indexed": 0, "bytes_indexed": 0, "bytes_behind": size}
    assert "still being built" in said
    deadline = time.monotonic() + 300
    while True:
        found, said = search(clone, f"record {n - 1}")
        if "index" not in found and not build.building(clone):
            break
        assert found["index"]["records_indexed"] <= n
        assert time.monotonic() < deadline, "the background search index build never finished"
        time.sleep(0.2)
    assert f"**record** **{n - 1}** of the archive" in found["hits"][0]["snippet"]
    assert search(clone, "archive")[0]["remaining"] == n - 5


def test_a_stale_index_shows_no_forgotten_soil_record_or_fact_either(store: Path) -> None:
    """The other layers a tombstone names: a SOIL record by its collection/key, a fact by its id."""
    put = memstack("soil", "put", "notes", "keeper", "--value", '"the albatross code is 4417"', cwd=store)
    assert put.returncode == 0, put.stderr
    fact = json.loads(memstack("capture", "--subject", "albatross", "--predicate", "code", "--object", "4417",
                               "--json", cwd=store).stdout)[0]
    assert {hit["layer"] for hit in search(store, "albatross")[0]["hits"]} == {"soil", "facts"}  # indexed
    log.write(store, record(0, "a new lighthouse on the northern cape"))  # the index is behind
    forgot = memstack("forget", "notes/keeper", fact["id"], "--reason", "an erasure request", cwd=store)
    assert forgot.returncode == 0, forgot.stderr
    with locks.acquire(str(files.local_dir(store, "locks") / "search-index-build.lock")):  # a build at work
        found, said = search(store, "albatross 4417")
        assert "still being built" in said and found["hits"] == []
    assert {hit["layer"] for hit in search(store, "erasure")[0]["hits"]} == {"soil", "facts"}  # by the reason
