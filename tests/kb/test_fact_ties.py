"""Facts tied on their times are listed in the order they were written (fact file, then line).

Several facts of one subject share `valid_from` and `recorded_at`; their ids' random parts are neither
ascending nor descending in the order they were written. `recall --limit`, `fact history` and
`fact get-valid-at` (and their MCP tools) hand them out in the order written, the same on every run, with
the index rebuilt and in a fresh clone, page by page: which tied fact a recall limit leaves out never
depends on the random part.
"""

import json
from pathlib import Path
from typing import Any

from helpers import git, memstack
from mcp_support import ok, run, server
from memstack.base import ids, jsonio
from memstack.kb import facts

T = 1_767_225_600_000  # 2026-01-01
# The random parts in the order written: neither ascending (history by id) nor descending (recall by id).
RANDOM = ["888888888888", "ffffffffffff", "000000000000", "cccccccccccc", "444444444444"]


def tied(agent: str, random: str, n: int) -> bytes:
    fact = facts.make(subject="acme", predicate="decided", object=f"{agent}-{n}", valid_from=T, recorded_at=T,
                      agent=agent, id=f"{T:012x}{random}{ids.agent_tag(agent)}")
    return jsonio.dumps_line(fact)


def write_ties(store: Path) -> list[str]:
    """Tied facts by alice then bob, each file written top to bottom; the ids in the order written."""
    written = []
    for agent, randoms in (("alice", RANDOM[:3]), ("bob", RANDOM[3:])):
        path = store / "kb" / "facts" / agent / "2026-01.jsonl"
        path.parent.mkdir(parents=True, exist_ok=True)
        lines = [tied(agent, random, n) for n, random in enumerate(randoms)]
        path.write_bytes(b"".join(lines))
        written += [json.loads(line)["id"] for line in lines]
    git(store, "add", "kb")
    git(store, "commit", "-q", "-m", "tied facts")  # through the installed hooks: the files are valid
    return written


def found(store: Path, *args: str) -> Any:
    result = memstack(*args, "--json", cwd=store)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


def answers(store: Path) -> dict[str, Any]:
    now = str(T + 1)
    walked, cursor = [], None
    while True:  # recall one at a time: each page continues in the same order
        page = found(store, "recall", "--subject", "acme", "--now-ts", now, "--limit", "1",
                     *(["--cursor", cursor] if cursor else []))
        walked += [f["id"] for f in page["items"]]
        if not (cursor := page["next_cursor"]):
            break
    return {
        "recall 1": [f["id"] for f in found(store, "recall", "--subject", "acme", "--now-ts", now, "--limit", "1")
                     ["items"]],
        "recall 2": [f["id"] for f in found(store, "recall", "--subject", "acme", "--now-ts", now, "--limit", "2")
                     ["items"]],
        "recall paged": walked,
        "history": [f["id"] for f in found(store, "fact", "history", "--subject", "acme")["items"]],
        "valid at": [f["id"] for f in found(store, "fact", "get-valid-at", "--ts", now)["items"]],
    }


def test_tied_facts_come_in_the_order_written_on_every_run_and_in_a_fresh_clone(store: Path, tmp_path: Path) -> None:
    written = write_ties(store)
    assert [i[12:24] for i in written] == RANDOM
    expected = {"recall 1": written[:1], "recall 2": written[:2], "recall paged": written,
                "history": written, "valid at": written}
    assert answers(store) == expected
    assert answers(store) == expected  # a second run
    memstack("rebuild", cwd=store)
    (store / ".memstack" / "facts.sqlite3").unlink()  # the index rebuilt from the files
    assert answers(store) == expected
    clone = tmp_path / "clone"
    git(tmp_path, "clone", "-q", str(store), str(clone))
    assert not (clone / ".memstack" / "facts.sqlite3").exists()
    assert answers(clone) == expected

    async def over_mcp() -> None:
        async with server(cwd=clone) as client:
            got = await ok(client, "recall", subject="acme", now_ts=str(T + 1), limit=1)
            assert [f["id"] for f in got["items"]] == written[:1]
            history = await ok(client, "fact_history", subject="acme")
            assert [f["id"] for f in history["items"]] == written

    run(over_mcp)


def test_the_reference_answers_keep_the_files_order_among_ties() -> None:
    made = [json.loads(tied("alice", random, n)) for n, random in enumerate(RANDOM)]
    assert [f["id"] for f in facts.recall(made, "acme", T + 1, 2)] == [f["id"] for f in made[:2]]
    assert [f["id"] for f in facts.history(made, "acme")] == [f["id"] for f in made]
