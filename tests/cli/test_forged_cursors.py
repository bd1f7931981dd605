"""A cursor a verb did not hand out is refused, and a failed call leaves the MCP server as it was.

A list verb's cursor carries the verb's name and its sort key (memstack/base/pages.py). A forged one
(`[1,"a"]` in base64), garbage, a key of the wrong types or another verb's cursor is refused with exit 2
naming the verb, before anything is read: never a traceback, never a silently empty page. Over MCP the
same is a tool error, and the next calls of the same server all answer.
"""

import base64
import json
from pathlib import Path
from typing import Any

import pytest

from helpers import memstack, tree_snapshot
from mcp_support import ok, refused, run, server
from memstack.base import pages
from memstack.intake import log as intake
from memstack.kb import factstore

JAN_MS = 1_767_225_600_000
DAY = 86_400_000
NOW = str(JAN_MS + 40 * DAY)

# Each verb with the name its cursors carry and enough items that a cursor is compared with some.
VERBS = {
    "intake list": ["intake", "list"],
    "intake list --pending": ["intake", "list", "--pending"],
    "fact history": ["fact", "history", "--subject", "acme"],
    "fact get-valid-at": ["fact", "get-valid-at", "--ts", NOW],
    "soil list": ["soil", "list", "notes"],
    "binder list": ["binder", "list"],
    "recall": ["recall", "--subject", "acme", "--now-ts", NOW],
    "related": ["related", "acme"],
    "search": ["search", "note"],
}


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).decode().rstrip("=")


FORGED = {
    "the issue's [1,'a']": "WzEsImEiXQ",
    "garbage": "%%%not-a-cursor",
    "a JSON object": _b64(b'{"verb": "recall"}'),
    "the verb right, the types wrong": None,  # made per verb: [verb, [1, "a"]]
    "the verb right, a key too short": None,  # [verb, []]
}


def fill(store: Path) -> None:
    for n in range(6):
        factstore.add(store, subject="acme", predicate="decided", object=f"v{n}", valid_from=JAN_MS + n * DAY,
                      recorded_at=JAN_MS + n * DAY, agent="alice")
    for n in range(3):  # facts that name another subject: `related` has items
        factstore.add(store, subject="acme", predicate="uses", object=f"lib{n}", valid_from=JAN_MS,
                      recorded_at=JAN_MS, agent="alice")
        factstore.add(store, subject=f"lib{n}", predicate="is", object="a library", valid_from=JAN_MS,
                      recorded_at=JAN_MS, agent="alice")
    for n in range(4):
        intake.write(store, intake.make_record(agent="alice", content=f"note {n}", created_at=JAN_MS + n * DAY))
    for key in ("a", "b", "c"):
        assert memstack("soil", "put", "notes", key, "--value", '"a note"', cwd=store).returncode == 0


def forged(name: str, verb: str) -> str:
    if name == "the verb right, the types wrong":
        return pages.encode([1, "a"], verb) if verb != "soil list" else pages.encode([1], verb)
    if name == "the verb right, a key too short":
        return pages.encode([], verb)
    cursor = FORGED[name]
    assert cursor is not None
    return cursor


@pytest.mark.parametrize("name", list(FORGED))
def test_a_forged_cursor_is_refused_by_every_list_verb_with_exit_2_naming_the_verb(store: Path, name: str) -> None:
    fill(store)
    before = tree_snapshot(store)
    for shown, argv in VERBS.items():
        verb = shown.removesuffix(" --pending")
        cursor = forged(name, verb)
        result = memstack(*argv, "--limit", "1", "--cursor", cursor, cwd=store)
        assert result.returncode == 2, (shown, result)
        assert "Traceback" not in result.stderr, (shown, result.stderr)
        assert result.stderr.splitlines() == [
            f"memstack: bad cursor {cursor!r}: not a cursor {verb} handed out (pass its next_cursor as is)"], shown
    assert tree_snapshot(store) == before


def test_a_cursor_of_another_verb_is_refused_and_its_own_verb_takes_it(store: Path) -> None:
    fill(store)
    cursors = {}
    for shown, argv in VERBS.items():
        found = memstack(*argv, "--limit", "1", "--json", cwd=store)
        assert found.returncode == 0, (shown, found.stderr)
        cursors[shown] = json.loads(found.stdout)["next_cursor"]
    assert all(cursors[v] for v in VERBS if v != "binder list"), cursors  # the queue is empty
    for shown, argv in VERBS.items():
        verb = shown.removesuffix(" --pending")
        for other, cursor in cursors.items():
            if cursor is None:
                continue
            result = memstack(*argv, "--limit", "1", "--cursor", cursor, cwd=store)
            if other.removesuffix(" --pending") == verb:  # the pending records: a part of the list, in its order
                assert result.returncode == 0, (shown, other, result.stderr)
            else:
                assert result.returncode == 2 and f"not a cursor {verb} handed out" in result.stderr, (shown, other)
                assert "Traceback" not in result.stderr


LIST_TOOLS: dict[str, dict[str, Any]] = {
    "intake_list": {}, "fact_history": {"subject": "acme"}, "fact_get_valid_at": {"ts": NOW},
    "soil_list": {"collection": "notes"}, "binder_list": {}, "recall": {"subject": "acme", "now_ts": NOW},
    "related": {"subject": "acme"}, "search": {"query": "note"},
}


def test_over_mcp_a_forged_cursor_is_a_tool_error_and_the_next_ten_reads_all_answer(store: Path) -> None:
    fill(store)

    async def check() -> None:
        async with server(cwd=store) as client:
            for tool, arguments in LIST_TOOLS.items():
                verb = {"fact_get_valid_at": "fact get-valid-at"}.get(tool, tool.replace("_", " "))
                message = await refused(client, tool, **arguments, limit=1, cursor="WzEsImEiXQ")
                assert message == f"bad cursor 'WzEsImEiXQ': not a cursor {tool} handed out (pass its next_cursor" \
                                  " as is)", (tool, verb, message)
                for n in range(10):  # the server's index connections are as they were: every read answers
                    read = list(LIST_TOOLS)[n % len(LIST_TOOLS)]
                    await ok(client, read, **LIST_TOOLS[read], limit=2)

    run(check)


def test_a_cursor_of_one_subject_or_collection_is_refused_by_another_s_list(store: Path) -> None:
    """Continued on another subject's history (another collection, other words searched), a cursor would
    skip every item of that list sorting before its key, in silence: it is refused, and its own list takes it."""
    fill(store)
    for name in ("other", "another"):
        assert memstack("soil", "put", name, "a1", "--value", '"x"', cwd=store).returncode == 0
    asked = ((("fact", "history", "--subject", "acme"), ("fact", "history", "--subject", "lib0")),
             (("soil", "list", "notes"), ("soil", "list", "other")), (("search", "note"), ("search", "library")))
    for first, second in asked:
        given = json.loads(memstack(*first, "--limit", "1", "--json", cwd=store).stdout)
        assert given["next_cursor"], first
        again = memstack(*first, "--limit", "1", "--cursor", given["next_cursor"], cwd=store)
        assert again.returncode == 0, again.stderr
        other = memstack(*second, "--limit", "1", "--cursor", given["next_cursor"], cwd=store)
        assert other.returncode == 2 and "handed out for other arguments" in other.stderr, (second, other.stderr)
        assert len(other.stderr.splitlines()) == 1
