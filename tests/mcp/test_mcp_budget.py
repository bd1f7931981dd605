"""Every MCP list tool keeps its answer within the byte budget (pages.MCP_MAX_BYTES, of compact JSON), however
large the records and the limit asked, and hands out a cursor for the rest: paging on gets every item once."""

import json
from pathlib import Path
from typing import Any

from mcp import Client

from mcp_support import run, server
from memstack.base.pages import MCP_MAX_BYTES

COUNT = 40
DAY = "2026-01-02T00:00:00Z"


def _big(n: int, size: int) -> str:
    return f"entry {n} " + "word " * (size // 5)


async def _fill(c: Client) -> None:
    """Records of several KiB each, in every layer a list tool reads: each listing holds several budgets."""
    for n in range(COUNT):
        assert not (await c.call_tool("intake_write", {"content": _big(n, 5_000), "title": _big(n, 5_000),
                                                       "created_at": DAY})).is_error
        assert not (await c.call_tool("soil_put", {"collection": "notes", "key": f"k{n:02}",
                                                   "value": {"text": _big(n, 5_000)}})).is_error
        assert not (await c.call_tool("fact_add", {"subject": "big", "predicate": "decided",
                                                   "object": _big(n, 5_000), "valid_from": DAY})).is_error
        spoke = f"spoke {n} " + "x" * 3_000  # a long subject: long items, and long cursors
        for subject, object_ in (("hub", spoke), (spoke, "a spoke")):
            assert not (await c.call_tool("fact_add", {"subject": subject, "predicate": "links",
                                                       "object": object_, "valid_from": DAY})).is_error
    assert not (await c.call_tool("promote", {})).is_error  # the intake records now wait in the Binder


def _identity(tool: str, item: dict[str, Any]) -> str:
    if tool == "soil_list":
        return item["key"]
    if tool == "related":
        return item["to"]
    return item.get("id") or item["where"]


async def _every_page(c: Client, tool: str, listed: str, **arguments: Any) -> list[str]:
    """Page through `tool` asking for far more than a budget holds; check each answer's size and form."""
    seen: list[str] = []
    cursor = None
    pages = 0
    while True:
        result = await c.call_tool(tool, {**arguments, "limit": 1_000, **({"cursor": cursor} if cursor else {})})
        assert not result.is_error, result.content
        [block] = result.content
        text = block.text
        assert len(text.encode()) <= MCP_MAX_BYTES, (tool, len(text.encode()))
        assert "\n" not in text and text.startswith("{")  # compact JSON, one line
        document = json.loads(text)
        assert result.structured_content == document  # the same document, structured
        assert document[listed], (tool, document)
        seen += [_identity(tool, item) for item in document[listed]]
        pages += 1
        cursor = document["next_cursor"]
        if cursor is None:
            assert document["remaining"] == 0
            break
        assert document["remaining"] == COUNT - len(seen)
    assert pages >= 2, (tool, pages)  # the budget, not the limit, ended the pages
    return seen


def test_every_list_tool_answers_within_the_byte_budget_and_pages_through_everything(store: Path) -> None:
    async def scenario() -> None:
        async with server("--store", str(store)) as c:
            await _fill(c)
            calls = {"intake_list": ("items", {}), "soil_list": ("items", {"collection": "notes"}),
                     "binder_list": ("items", {}), "fact_history": ("items", {"subject": "big"}),
                     "fact_get_valid_at": ("items", {"subject": "big", "ts": "now"}),
                     "recall": ("items", {"subject": "big"}), "related": ("items", {"subject": "hub"}),
                     "search": ("hits", {"query": "entry word", "layer": ["intake"]})}
            for tool, (listed, arguments) in calls.items():
                seen = await _every_page(c, tool, listed, **arguments)
                assert len(seen) == len(set(seen)) == COUNT, (tool, len(seen), len(set(seen)))

    run(scenario)
