"""Sizes and depth: what is larger or deeper than memstack.yaml's `limits:` allows is refused before any work.

An intake record's content, a fact's object, a Binder note (limits.text_bytes), a SOIL value
(limits.value_bytes, limits.json_depth) and a search query (limits.query_bytes): exit 2 on the command
line, a tool error over MCP, one line naming the argument and the limit, nothing written, and fast (a
query of a megabyte is refused, not searched). JSON nested 1,000 deep is refused without a traceback.
"""

import json
import time
from pathlib import Path

import pytest

from helpers import git, memstack, tree_snapshot
from mcp_support import ok, refused, run, server
from memstack.base import limits

BIG = "x" * 70_000  # over the 64 KiB default, under the command line's 128 KiB for one argument


def deep(levels: int) -> str:
    return "[" * levels + "]" * levels


def refuse(store: Path, *args: str, names: str) -> str:
    before = (git(store, "status", "--porcelain").stdout, tree_snapshot(store))
    result = memstack(*args, cwd=store)
    assert result.returncode == 2, (args[:3], result.returncode, result.stderr[-500:])
    assert "Traceback" not in result.stderr
    [line] = result.stderr.splitlines()
    assert names in line, line
    assert (git(store, "status", "--porcelain").stdout, tree_snapshot(store)) == before
    return line


@pytest.mark.parametrize(("args", "names"), [
    (("intake", "write", "--content", BIG), "bad content: 70,000 bytes, more than the 65,536"),
    (("intake", "write", "--content", "x", "--subject", "s", "--predicate", "p", "--object", BIG), "bad object"),
    (("fact", "add", "--subject", "db", "--predicate", "decided", "--object", BIG), "bad object: 70,000 bytes"),
    (("capture", "--subject", BIG, "--predicate", "decided", "--object", "o"), "bad subject: 70,000 bytes"),
    (("soil", "put", "c", "deep", "--value", deep(1000)), "bad value: nested 1000 deep, deeper than the 64"),
    (("soil", "put", "c", "deep", "--value", deep(65)), "bad value: nested 65 deep"),
    (("soil", "put", "c", "big", "--value", json.dumps(BIG)), "bad value: 70,002 bytes of JSON, more than the 65,536"),
    (("search", "word " * 1000), "bad query: 5,000 bytes, more than the 4,096"),
])
def test_a_record_or_query_over_its_limit_is_refused_with_exit_2_and_nothing_written(
        store: Path, args: tuple[str, ...], names: str) -> None:
    line = refuse(store, *args, names=names)
    assert "limits." in line and "memstack.yaml" in line


def test_json_nested_deeper_than_any_parser_allows_is_bad_input_not_a_traceback(store: Path) -> None:
    for levels in (255, 1000, 1025, 5000):
        refuse(store, "soil", "put", "c", "deep", "--value", deep(levels), names="bad ")
    (store / "deep.json").write_text(deep(100_000))
    refuse(store, "soil", "put", "c", "deep", "--file", str(store / "deep.json"), names="bad --file")
    (store / "deep.json").unlink()
    assert memstack("soil", "put", "c", "fine", "--value", deep(64), cwd=store).returncode == 0


def test_a_binder_note_over_the_limit_is_refused(store: Path) -> None:
    assert memstack("intake", "write", "--content", "maybe", cwd=store).returncode == 0
    git(store, "add", "-A")
    git(store, "commit", "-q", "-m", "intake")
    assert memstack("promote", cwd=store).returncode == 0
    waiting = json.loads(memstack("binder", "list", "--json", cwd=store).stdout)["items"]
    refuse(store, "binder", "ratify", waiting[0]["id"], "--note", BIG, names="bad --note: 70,000 bytes")
    refuse(store, "binder", "edge", "--from", "a", "--to", "b", "--relation", "uses", "--note", BIG,
           names="bad --note")


def test_the_limits_are_set_in_memstack_yaml(store: Path) -> None:
    config = store / "memstack.yaml"
    config.write_text(config.read_text() + "limits:\n  text_bytes: 131072\n  json_depth: 8\n  query_bytes: 64\n")
    git(store, "commit", "-q", "-am", "limits")  # through the hooks: the block is valid
    assert memstack("intake", "write", "--content", BIG, cwd=store).returncode == 0
    refuse(store, "soil", "put", "c", "deep", "--value", deep(9), names="deeper than the 8")
    refuse(store, "search", "w" * 65, names="more than the 64")
    config.write_text(config.read_text() + "  value_bytes: 12\n")  # below the smallest allowed: the hook refuses
    result = git(store, "commit", "-q", "-am", "too small", check=False)
    assert result.returncode != 0 and "value_bytes" in result.stdout + result.stderr


def test_over_mcp_huge_records_and_queries_are_tool_errors_refused_fast(store: Path) -> None:
    async def check() -> None:
        async with server(cwd=store) as client:
            for tool, arguments, names in (
                    ("intake_write", {"content": "c" * 5_000_000}, "bad content: 5,000,000 bytes"),
                    ("soil_put", {"collection": "c", "key": "k", "value": {"v": "v" * 10_000_000}},
                     "bad value: 10,000,008 bytes of JSON"),
                    ("soil_put", {"collection": "c", "key": "k", "value": json.loads(deep(150))},
                     "bad value: nested 150 deep"),
                    ("search", {"query": "word " * 200_000}, "bad query: 1,000,000 bytes"),
                    ("capture", {"subject": "s", "predicate": "decided", "object": "o" * 100_000}, "bad object")):
                started = time.monotonic()
                message = await refused(client, tool, **arguments)
                assert message.startswith(names) and "limits." in message, (tool, message[:200])
                assert time.monotonic() - started < 5, tool  # refused, not worked on
            await ok(client, "soil_put", collection="c", key="k", value={"v": "fine"})

    before = tree_snapshot(store)
    run(check)
    after = tree_snapshot(store)
    assert set(after) - set(before) == {"store/c/k.json"}


def test_depth_is_measured_without_recursion() -> None:
    value: list = []
    inner = value
    for _ in range(200_000):
        inner.append([])
        inner = inner[0]
    assert limits.depth(value) == 200_001
    assert limits.depth({"a": [1, {"b": []}]}) == 4 and limits.depth("text") == 0
