"""Bounded answers, times an agent can give, and recall's empty answer (issue 14).

Every list verb pages with --limit/--cursor through real `memstack` subprocesses: all items covered once,
in the unpaged order, and a write that lands between two pages neither repeats nor loses an item. The MCP
list tools page through the official SDK client. `now` works for every time a user gives, and `capture`,
`fact add` and `invalidate` default their times to now.
"""

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client, StdioServerParameters

from helpers import MEMSTACK, git, memstack, tree_snapshot
from memstack.base import pages
from memstack.base.times import now_ms, parse_ts
from memstack.intake import log as intake
from memstack.kb import factstore

JAN_MS = 1_767_225_600_000
DAY = 86_400_000


def doc(*args: str, cwd: Path) -> Any:
    result = memstack(*args, "--json", cwd=cwd)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


def walk(verb: list[str], cwd: Path, limit: int, between: Callable[[int], None] | None = None) -> list[Any]:
    """Every item of a list verb, `limit` at a time through next_cursor; `between(n)` runs after page n."""
    seen: list[Any] = []
    cursor = None
    for n in range(100):
        page = doc(*verb, "--limit", str(limit), *(["--cursor", cursor] if cursor else []), cwd=cwd)
        assert set(page) >= {"items", "next_cursor", "remaining"}
        assert len(page["items"]) <= limit
        seen += page["items"]
        if page["next_cursor"] is None:
            assert page["remaining"] == 0
            return seen
        assert page["remaining"] > 0 and len(page["items"]) == limit
        if between is not None:
            between(n)
        cursor = page["next_cursor"]
    raise AssertionError("the pages never ended")


def ids(found: list[dict[str, Any]], field: str = "id") -> list[Any]:
    return [item[field] for item in found]


def add_facts(store: Path, subject: str, count: int, predicate: str = "decided", start: int = 0) -> None:
    for n in range(start, start + count):
        factstore.add(store, subject=subject, predicate=predicate, object=f"v{n}", valid_from=JAN_MS + n * DAY,
                      recorded_at=JAN_MS + n * DAY, agent="alice")


def write_intake(store: Path, count: int, start: int = 0, **fields: Any) -> None:
    for n in range(start, start + count):
        intake.write(store, intake.make_record(agent=("alice", "bob")[n % 2], content=f"note {n}",
                                               created_at=JAN_MS + (n // 3) * DAY + n, **fields))


# --- paging through every list verb ---------------------------------------------------------------

def test_fact_verbs_page_through_every_fact_once_even_when_a_write_lands_between_pages(store: Path) -> None:
    add_facts(store, "acme", 7)
    add_facts(store, "beta", 3)
    for verb in (["fact", "get-valid-at", "--ts", str(JAN_MS + 30 * DAY)], ["fact", "history", "--subject", "acme"],
                 ["recall", "--subject", "acme", "--now-ts", str(JAN_MS + 30 * DAY)]):
        whole = doc(*verb, cwd=store)
        assert whole["next_cursor"] is None and whole["remaining"] == 0 and len(whole["items"]) >= 7
        for limit in (1, 3):
            assert walk(verb, store, limit) == whole["items"], (verb, limit)

    # another writer appends between two pages: nothing is repeated, nothing that was there is lost
    verb = ["fact", "history", "--subject", "acme"]
    before = ids(doc(*verb, cwd=store)["items"])
    got = walk(verb, store, 3, lambda n: add_facts(store, "acme", 1, start=100 + n))
    assert len(ids(got)) == len(set(ids(got))) and set(before) <= set(ids(got))
    recall = ["recall", "--subject", "beta", "--now-ts", str(JAN_MS + 300 * DAY)]
    before = ids(doc(*recall, cwd=store)["items"])  # most recent first: a new older decision sorts after
    got = walk(recall, store, 1, lambda n: add_facts(store, "beta", n < 2, start=-10 - n))
    assert len(ids(got)) == len(set(ids(got))) and ids(got)[:3] == before


def test_intake_list_pages_and_a_new_record_between_pages_comes_last(store: Path) -> None:
    write_intake(store, 8)
    whole = doc("intake", "list", cwd=store)["items"]
    assert len(whole) == 8 and walk(["intake", "list"], store, 3) == whole
    assert walk(["intake", "list", "--agent", "bob"], store, 2) == [r for r in whole if r["agent"] == "bob"]
    got = walk(["intake", "list"], store, 3, lambda n: write_intake(store, n < 2, start=100 + n))
    assert ids(got)[:8] == ids(whole) and len(got) == 10 and len(set(ids(got))) == 10


def test_soil_list_pages_by_key(store: Path) -> None:
    keys = ["a", "a-b", "a.b", "b", "c1", "c2", "d"]
    for key in keys:
        assert memstack("soil", "put", "notes", key, "--value", f'"{key}"', cwd=store).returncode == 0
    whole = doc("soil", "list", "notes", cwd=store)["items"]
    assert ids(whole, "key") == sorted(keys)
    assert walk(["soil", "list", "notes"], store, 2) == whole
    got = walk(["soil", "list", "notes"], store, 3,
               lambda n: memstack("soil", "put", "notes", f"z{n}", "--value", "1", cwd=store))
    assert ids(got, "key")[:7] == sorted(keys) and len(set(ids(got, "key"))) == len(got)


def test_binder_list_pages_the_waiting_records(store: Path) -> None:
    write_intake(store, 7)  # tier observed, confidence 0.5: every one goes to the Binder
    git(store, "add", "-A")
    git(store, "commit", "-q", "-m", "notes")
    assert memstack("promote", cwd=store).returncode == 0
    whole = doc("binder", "list", cwd=store)["items"]
    assert len(whole) == 7
    assert walk(["binder", "list"], store, 3) == whole
    text = memstack("binder", "list", "--limit", "2", cwd=store)
    assert text.returncode == 0 and len(text.stdout.splitlines()) == 2
    [more] = text.stderr.splitlines()
    cursor = doc("binder", "list", "--limit", "2", cwd=store)["next_cursor"]
    assert more == f"… 5 more; --cursor {cursor}"


VERBS = [["intake", "list"], ["binder", "list"], ["fact", "get-valid-at", "--ts", "now"],
         ["fact", "history", "--subject", "acme"], ["soil", "list", "notes"], ["recall", "--subject", "acme"]]


@pytest.mark.parametrize("verb", VERBS, ids=lambda v: " ".join(v[:2]))
@pytest.mark.parametrize(("option", "value", "field"), [
    ("--limit", "0", "limit"), ("--limit", "-3", "limit"), ("--limit", "ten", "limit"), ("--limit", "10001", "limit"),
    ("--cursor", "not a cursor", "cursor"), ("--cursor", "e30", "cursor")])
def test_a_bad_limit_or_cursor_is_refused_with_exit_2(store: Path, verb: list[str], option: str, value: str,
                                                      field: str) -> None:
    before = tree_snapshot(store)
    result = memstack(*verb, option, value, cwd=store)
    assert result.returncode == 2, result
    [line] = result.stderr.splitlines()
    assert line.startswith(f"memstack: bad {field} ") and "Traceback" not in result.stderr
    assert tree_snapshot(store) == before


# --- times: `now` and the defaults --------------------------------------------------------------------

def test_now_and_the_default_times_of_the_write_verbs(store: Path) -> None:
    before = now_ms()
    [captured] = doc("capture", "--subject", "db", "--predicate", "decided", "--object", "pg", cwd=store)
    [added] = doc("fact", "add", "--subject", "db", "--predicate", "uses", "--object", "git", cwd=store)
    [given] = doc("fact", "add", "--subject", "db", "--predicate", "owns", "--object", "x", "--valid-from", "now",
                  "--recorded-at", "NOW", cwd=store)
    [closed] = doc("fact", "invalidate", "--subject", "db", "--predicate", "uses", cwd=store)
    [reopened, *_] = doc("capture", "--subject", "db", "--predicate", "decided", "--object", "sqlite",
                         "--valid-from", "now", "--contradicts", cwd=store)
    wrote = doc("intake", "write", "--content", "c", "--created-at", "now", cwd=store)
    after = now_ms()
    for fact in (captured, added, given, reopened):
        assert before <= fact["valid_from"] <= fact["recorded_at"] <= after, fact
    assert closed["id"] == added["id"] and before <= closed["valid_to"] <= closed["expired_at"] <= after
    assert before <= parse_ts(wrote["record"]["created_at"], "created_at") <= after

    assert memstack("soil", "put", "s", "k", "--value", "1", cwd=store).returncode == 0
    expired = doc("soil", "expire", "s", "k", "--at", "now", cwd=store)
    assert before <= parse_ts(expired["expires_at"], "expires_at") <= now_ms()

    valid = doc("fact", "get-valid-at", "--ts", "now", "--subject", "db", cwd=store)["items"]
    assert {f["predicate"] for f in valid} == {"decided", "owns"}
    as_of = doc("fact", "get-valid-at", "--ts", "now", "--subject", "db", "--as-of", "now", cwd=store)["items"]
    assert as_of == valid
    recalled = doc("recall", "--subject", "db", "--now-ts", "now", cwd=store)["items"]
    assert [f["object"] for f in recalled] == ["sqlite"]
    git(store, "add", "-A")
    git(store, "commit", "-q", "-m", "memory")
    promoted = memstack("promote", "--now-ts", "now", cwd=store)
    assert promoted.returncode == 0, promoted.stderr


def test_explicit_times_still_work_and_a_bad_one_names_its_option(store: Path) -> None:
    [fact] = doc("fact", "add", "--subject", "db", "--predicate", "uses", "--object", "git", "--valid-from",
                 "2026-01-01T00:00:00Z", "--recorded-at", "1767225600000", cwd=store)
    assert fact["valid_from"] == fact["recorded_at"] == JAN_MS
    for args, field in ((["fact", "add", "--subject", "s", "--predicate", "p", "--object", "o", "--valid-from",
                          "nowish"], "valid-from"),
                        (["fact", "invalidate", "--subject", "db", "--predicate", "uses", "--valid-to", "later"],
                         "valid-to"),
                        (["capture", "--subject", "s", "--predicate", "p", "--object", "o", "--recorded-at", "soon"],
                         "recorded-at")):
        before = tree_snapshot(store)
        result = memstack(*args, cwd=store)
        assert result.returncode == 2 and result.stderr.startswith(f"memstack: bad {field} "), result.stderr
        assert tree_snapshot(store) == before


# --- recall explains an empty answer ------------------------------------------------------------------

def test_recall_says_why_it_found_nothing(store: Path) -> None:
    nothing = doc("recall", "--subject", "db", cwd=store)
    assert nothing == {"items": [], "next_cursor": None, "remaining": 0}  # nothing at all: no note
    add_facts(store, "db", 2, predicate="uses")
    add_facts(store, "db", 1, predicate="owns", start=5)
    note = doc("recall", "--subject", "db", cwd=store)["note"]
    assert note.startswith("3 facts about 'db' hold other predicates (owns, uses): recall returns"
                           " decided/chose/pattern/prefers; see `memstack fact get-valid-at --subject db --ts now`")
    text = memstack("recall", "--subject", "db", cwd=store)
    assert text.stdout == "nothing recalled about 'db'\n" and text.stderr == f"memstack: {note}\n"

    intake.write(store, intake.make_record(agent="alice", content="we chose postgres", subject="db",
                                           predicate="chose", object="postgres", created_at=JAN_MS))
    git(store, "add", "-A")
    git(store, "commit", "-q", "-m", "notes")
    assert memstack("promote", cwd=store).returncode == 0  # tier observed, confidence 0.5: the Binder
    note = doc("recall", "--subject", "db", cwd=store)["note"]
    assert "; 1 intake record about 'db' waits in the Binder for ratification by a human (`memstack binder list`)" \
        in note
    add_facts(store, "db", 1, predicate="decided", start=9)
    found = doc("recall", "--subject", "db", cwd=store)
    assert "note" not in found and len(found["items"]) == 1


# --- MCP: a page of at most 50 by default ---------------------------------------------------------------

def test_mcp_list_tools_hand_out_50_by_default_and_page_with_cursors(store: Path) -> None:
    add_facts(store, "acme", pages.MCP_DEFAULT_LIMIT + 7)

    async def check() -> None:
        params = StdioServerParameters(command=MEMSTACK, args=["mcp"], cwd=store)
        async with Client(params, mode="legacy") as client:
            async def call(tool: str, **arguments: Any) -> Any:
                result = await client.call_tool(tool, arguments)
                assert not result.is_error, result.content
                return json.loads(result.content[0].text)

            for tool, arguments in (("fact_history", {"subject": "acme"}),
                                    ("fact_get_valid_at", {"ts": "now", "subject": "acme"}),
                                    ("recall", {"subject": "acme", "now_ts": "now"})):
                first = await call(tool, **arguments)
                assert len(first["items"]) == pages.MCP_DEFAULT_LIMIT and first["remaining"] == 7
                rest = await call(tool, **arguments, cursor=first["next_cursor"])
                assert len(rest["items"]) == 7 and rest["next_cursor"] is None and rest["remaining"] == 0
                seen = ids(first["items"] + rest["items"])
                assert len(set(seen)) == pages.MCP_DEFAULT_LIMIT + 7
                small, cursor = [], None
                while True:
                    page = await call(tool, **arguments, limit=20, **({"cursor": cursor} if cursor else {}))
                    small += ids(page["items"])
                    if not (cursor := page["next_cursor"]):
                        break
                assert small == seen, tool
            for arguments, message in (({"limit": 0}, "bad limit 0: expected a whole number from 1 to 10000"),
                                       ({"cursor": "nope"}, "bad cursor 'nope'")):
                result = await client.call_tool("fact_history", {"subject": "acme", **arguments})
                assert result.is_error and result.content[0].text.startswith(message), result.content
            assert (await call("binder_list"))["items"] == []

            # a page also stops before pages.MCP_MAX_BYTES (one item always fits)
            big, cursor = [], None
            while True:
                page = await call("fact_history", subject="big", **({"cursor": cursor} if cursor else {}))
                assert len(json.dumps(page["items"])) <= pages.MCP_MAX_BYTES or len(page["items"]) == 1
                big += ids(page["items"])
                if not (cursor := page["next_cursor"]):
                    break
            assert len(set(big)) == len(big) == 10

    config = store / "memstack.yaml"  # a record larger than a page's budget: only with a raised limit
    config.write_text(config.read_text() + "limits:\n  text_bytes: 262144\n")
    for n in range(10):
        factstore.add(store, subject="big", predicate="notes", object="x" * (30_000 if n != 3 else 200_000),
                      valid_from=JAN_MS + n, recorded_at=JAN_MS + n, agent="alice")
    anyio.run(check)
