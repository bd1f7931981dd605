"""`memstack mcp`: a real MCP client (the SDK's, over stdio) against a spawned `memstack mcp`."""

import json
import re
import subprocess
import sys
from functools import partial
from pathlib import Path
from typing import Any

import anyio
import pytest
from jsonschema import Draft202012Validator
from mcp import Client
from mcp.shared.exceptions import MCPError

from helpers import items, memstack, tree_snapshot
from mcp_support import HANDOFF, cli_error, cli_json, ok, refused, run, server, worded
from memstack.base.errors import MemstackError
from memstack.base.times import now_ms
from memstack.cli import main
from memstack.mcp import arguments as kinds
from memstack.mcp import documents, registry, tools
from memstack.mcp import server as mcp_server
from memstack.soil import records as soil

IMPLEMENTED = {"intake_write", "soil_put", "soil_get", "soil_update", "handoff_write", "boot_show", "recall",
               "capture", "fact_add", "fact_get_valid_at", "fact_history", "fact_invalidate", "binder_list",
               "sync", "boot_rebuild", "promote", "intake_list", "soil_list", "soil_expire", "handoff_show",
               "binder_ratify", "binder_reject", "search",
               "soil_graduate", "binder_file", "binder_edge", "related", "status", "blame", "anchors", "forget",
               "anchors_check"}

def test_the_registry_holds_the_implemented_tools_with_valid_schemas() -> None:
    assert set(tools.TOOLS) == IMPLEMENTED
    for tool in tools.TOOLS.values():
        Draft202012Validator.check_schema(tool.schema)
        assert tool.schema["type"] == "object" and tool.schema["additionalProperties"] is False
        assert tool.description and "\n" not in tool.description


def _cli_options(*verb: str) -> set[str]:
    """The option names of a CLI verb, as tool arguments (`-` read as `_`), without the global ones
    (--reveal: never over MCP)."""
    parser = main.parser()
    for word in verb:
        [sub] = [a for a in parser._actions if a.dest in ("command", "verb")]
        parser = sub.choices[word]
    return {a.dest for a in parser._actions if a.dest not in ("help", "store", "json", "reveal")}


@pytest.mark.parametrize(("tool", "verb", "cli_only", "tool_only"), [
    ("intake_write", ("intake", "write"), {"repo"}, set()),  # the code repository: the store's, memstack.yaml's
    ("soil_put", ("soil", "put"), {"file"}, set()),
    ("soil_update", ("soil", "update"), {"file"}, set()),
    ("soil_get", ("soil", "get"), set(), set()),
    ("handoff_write", ("handoff", "write"), {"file", "stdin"}, {"text"}),  # a tool has no stdin: the text itself
    ("boot_show", ("boot", "show"), set(), set()),
    ("recall", ("recall",), {"pg"}, set()),  # the replica is the server's choice: `memstack mcp --pg`
    ("capture", ("capture",), {"repo"}, set()),
    ("fact_add", ("fact", "add"), {"repo"}, set()),
    ("fact_get_valid_at", ("fact", "get-valid-at"), {"pg"}, set()),
    ("fact_history", ("fact", "history"), {"pg"}, set()),
    ("fact_invalidate", ("fact", "invalidate"), set(), set()),
    ("binder_list", ("binder", "list"), set(), set()),
    ("sync", ("sync",), set(), set()),
    ("boot_rebuild", ("boot", "rebuild"), set(), set()),
    ("promote", ("promote",), {"verbose"}, set()),  # the trailers shown as text; the document has the message
    ("intake_list", ("intake", "list"), set(), set()),
    ("soil_list", ("soil", "list"), set(), set()),
    ("soil_expire", ("soil", "expire"), set(), set()),
    ("handoff_show", ("handoff", "show"), set(), set()),
    ("binder_ratify", ("binder", "ratify"), set(), set()),
    ("binder_reject", ("binder", "reject"), set(), set()),
    ("search", ("search",), {"semantic"}, set()),  # over MCP: as memstack.yaml says (search.semantic)
    ("soil_graduate", ("soil", "graduate"), set(), set()),
    ("binder_file", ("binder", "file"), {"outside_repo"}, set()),  # a person's choice, never an agent's
    ("binder_edge", ("binder", "edge"), {"source", "target"}, {"from", "to"}),  # the CLI's --from/--to
    ("related", ("related",), set(), set()),
    ("status", ("status",), set(), set()),
    ("blame", ("blame",), set(), set()),
    ("anchors", ("anchors",), {"repo", "verb"}, set()),  # `anchors reverify`: a person's word, on the command line
    ("forget", ("forget",), set(), set()),
    ("anchors_check", ("anchors", "check"), {"repo"}, set()),
])
def test_tool_arguments_are_the_cli_options(tool: str, verb: tuple[str, ...], cli_only: set[str],
                                            tool_only: set[str]) -> None:
    assert set(tools.TOOLS[tool].schema["properties"]) == (_cli_options(*verb) - cli_only) | tool_only


def test_check_fills_defaults_and_refuses_structural_mistakes() -> None:
    intake_write = tools.TOOLS["intake_write"]
    args = intake_write.check({"content": "c", "title": None})
    assert (args["title"], args["tier"], args["confidence"], args["keyword"], args["agent"]) == \
        ("", "observed", 0.5, [], None)
    for arguments, message in (
        ({}, "missing argument 'content'"),
        ({"content": "c", "colour": "red"}, "unknown argument 'colour'"),
        ({"content": 3}, "bad content 3: must be a string"),
        ({"content": "c", "keyword": "k"}, "bad keyword 'k': must be a list of strings"),
        ({"content": "c", "created_at": True}, "bad created_at True: must be an integer or a string"),
    ):
        with pytest.raises(MemstackError, match=message):
            intake_write.check(arguments)
    with pytest.raises(MemstackError, match="unknown tool 'recal'"):
        tools.call("recal", {})
    with pytest.raises(ValueError, match="registered twice"):
        registry.by_name(intake_write, intake_write)


@pytest.mark.parametrize("mode", ["legacy", "auto"])  # the initialize handshake, and 2026-07-28 discovery
def test_each_tool_over_stdio_returns_what_the_cli_prints(store: Path, mode: str) -> None:
    async def session() -> None:
        async with server("--store", str(store), mode=mode) as client:
            listed = {t.name: t for t in (await client.list_tools()).tools}
            assert set(listed) == IMPLEMENTED
            assert listed["intake_write"].input_schema == tools.TOOLS["intake_write"].schema
            assert listed["soil_get"].annotations.read_only_hint is True

            written = await ok(client, "intake_write", content="tests run with pytest -q", title="tests",
                               source="https://docs.pytest.org", tier="verified", confidence=0.9,
                               keyword=["pytest"], tag=["tooling", "ci"], subject="project", predicate="uses",
                               object="pytest", relevance_score=0.6, created_at="2026-03-04T05:06:07Z")
            assert written["path"] == "intake/alice/2026-03-04.jsonl"  # memory.default_agent
            assert [json.loads(line) for line in (store / written["path"]).read_text().splitlines()] == \
                [written["record"]]
            assert items(cli_json(store, "intake", "list")) == [written["record"]]
            assert written["record"]["created_at"] == "2026-03-04T05:06:07.000Z"
            by_bob = await ok(client, "intake_write", agent="bob", content="bob was here", created_at=0)
            assert by_bob["path"] == "intake/bob/1970-01-01.jsonl" and by_bob["record"]["agent"] == "bob"

            put = await ok(client, "soil_put", collection="session", key="current",
                           value={"task": "lexer", "step": 1})
            assert json.loads((store / "store/session/current.json").read_text()) == put
            updated = await ok(client, "soil_update", collection="session", key="current", value={"step": 2})
            assert updated["value"] == {"task": "lexer", "step": 2}
            assert json.loads((store / "store/session/current.json").read_text()) == updated
            got = await client.call_tool("soil_get", {"collection": "session", "key": "current"})
            cli = memstack("soil", "get", "session", "current", "--json", cwd=store)
            assert json.loads(got.content[0].text) == json.loads(cli.stdout)  # the very document
            assert got.content[0].text == json.dumps(json.loads(cli.stdout), separators=(",", ":"),
                                                     sort_keys=True, ensure_ascii=False)  # as compact JSON

            sealed = await ok(client, "handoff_write", text=HANDOFF)
            assert (store / sealed["path"]).read_text().endswith(HANDOFF)
            assert cli_json(store, "handoff", "show")["path"] == sealed["path"]
            assert sealed["open_threads"] == ["wire the fact tools into the MCP server"]

            told = await refused(client, "boot_show")
            assert told == worded(cli_error(store, "boot", "show"), ("`memstack boot rebuild`", "`boot_rebuild`"))
            assert told.endswith("then run `boot_rebuild`")
            assert await ok(client, "boot_rebuild") == {"changed": ["session_anchor_alice.json", "willow.md"]}
            assert await ok(client, "boot_show") == cli_json(store, "boot", "show")

            chose = await ok(client, "capture", subject="build", predicate="chose", object="make",
                             valid_from="2026-01-01T00:00:00Z", recorded_at="2026-01-01T00:00:00Z")
            assert chose[0]["object"] == "make" and chose[0]["agent"] == "alice"
            switched = await ok(client, "capture", subject="build", predicate="chose", object="ninja",
                                valid_from="2026-02-01T00:00:00Z", recorded_at="2026-02-01T00:00:00Z",
                                contradicts=True)
            assert switched[1]["id"] == chose[0]["id"] and switched[1]["superseded_by"] == switched[0]["id"]
            added = await ok(client, "fact_add", subject="build", predicate="uses", object="ccache",
                             valid_from=1_767_225_600_000, recorded_at=1_767_225_600_000, table="opus_atoms")
            assert added[0]["table"] == "opus_atoms"
            args = ("--subject", "build", "--now-ts", "2026-03-01T00:00:00Z")
            recalled = await ok(client, "recall", subject="build", now_ts="2026-03-01T00:00:00Z")
            assert recalled == cli_json(store, "recall", *args) and items(recalled) == [switched[0]]
            assert await ok(client, "fact_get_valid_at", ts="2026-01-15T00:00:00Z", subject="build") == \
                cli_json(store, "fact", "get-valid-at", "--ts", "2026-01-15T00:00:00Z", "--subject", "build")
            history = await ok(client, "fact_history", subject="build")
            assert history == cli_json(store, "fact", "history", "--subject", "build") and len(items(history)) == 3
            closed = await ok(client, "fact_invalidate", subject="build", predicate="uses",
                              valid_to="2026-03-01T00:00:00Z", recorded_at="2026-03-01T00:00:00Z")
            assert closed[0]["id"] == added[0]["id"] and closed[0]["valid_to"] == 1_772_323_200_000
            [now] = [f for f in items(cli_json(store, "fact", "history", "--subject", "build"))
                     if f["id"] == added[0]["id"]]
            assert now["valid_to"] == 1_772_323_200_000

            assert await ok(client, "binder_list") == cli_json(store, "binder", "list") == \
                {"items": [], "next_cursor": None, "remaining": 0}
            promoted = memstack("promote", cwd=store)
            assert promoted.returncode == 0, promoted.stderr  # bob's record waits for a human
            waiting = await ok(client, "binder_list")
            assert waiting == cli_json(store, "binder", "list") and [r["agent"] for r in items(waiting)] == ["bob"]

            resources = {r.uri: r for r in (await client.list_resources()).resources}
            assert set(resources) == {"memstack://willow.md", "memstack://anchor/alice"}
            [willow] = (await client.read_resource("memstack://willow.md")).contents
            assert willow.text == (store / "willow.md").read_text() and willow.mime_type == "text/markdown"
            [anchor] = (await client.read_resource("memstack://anchor/alice")).contents
            assert json.loads(anchor.text) == json.loads((store / "session_anchor_alice.json").read_text())
            with pytest.raises(MCPError, match="no boot anchor for agent 'bob'"):
                await client.read_resource("memstack://anchor/bob")
            templates = (await client.list_resource_templates()).resource_templates
            assert [t.uri_template for t in templates] == ["memstack://anchor/{agent}"]

    run(session)


HANDOFF_WITHOUT_TABLE = HANDOFF.split("## Capability table")[0]

def _name(field: str) -> str:
    return f"{'an' if field == 'agent' else 'a'} {field} must match ^[a-z0-9][a-z0-9._-]{{0,63}}$ (and contain no '..')"


TIME = "expected integer milliseconds, ISO-8601 (e.g. 2026-11-30T12:00:00Z) or now"

# (tool, arguments, the same mistake on the command line, the message: one both say, or a pair of the
# tool's words and the command line's where they name an argument or a command differently)
BAD = [
    ("intake_write", {"agent": "../x", "content": "c"}, ["intake", "write", "--agent", "../x", "--content", "c"],
     f"bad agent '../x': {_name('agent')}"),
    ("intake_write", {"agent": "Alice", "content": "c"}, ["intake", "write", "--agent", "Alice", "--content", "c"],
     f"bad agent 'Alice': {_name('agent')}"),
    ("intake_write", {"content": "c", "created_at": "yesterday"},
     ["intake", "write", "--content", "c", "--created-at", "yesterday"],
     (f"bad created_at 'yesterday': {TIME}", f"bad created-at 'yesterday': {TIME}")),
    ("intake_write", {"content": "c", "confidence": 1.5}, ["intake", "write", "--content", "c", "--confidence", "1.5"],
     "bad confidence 1.5: must be a finite number in [0, 1]"),
    ("intake_write", {"content": "c", "tier": "guess"}, ["intake", "write", "--content", "c", "--tier", "guess"],
     "bad tier 'guess': must be one of observed, fetched, verified"),
    ("intake_write", {"content": "c", "subject": "s"}, ["intake", "write", "--content", "c", "--subject", "s"],
     ("bad subject: subject, predicate and object go together (missing object, predicate)",
      "bad subject: --subject, --predicate and --object go together (missing object, predicate)")),
    ("intake_write", {"content": "  "}, ["intake", "write", "--content", "  "], "bad content: must be non-empty text"),
    ("soil_put", {"collection": "Session", "key": "k", "value": 1}, ["soil", "put", "Session", "k", "--value", "1"],
     f"bad collection 'Session': {_name('collection')}"),
    ("soil_put", {"collection": "s", "key": "../../etc/passwd", "value": 1},
     ["soil", "put", "s", "../../etc/passwd", "--value", "1"], f"bad key '../../etc/passwd': {_name('key')}"),
    ("soil_update", {"collection": "s", "key": "missing", "value": 1},
     ["soil", "update", "s", "missing", "--value", "1"],
     ("bad key 'missing': no record s/missing to update (`soil_put` creates one)",
      "bad key 'missing': no record s/missing to update (`soil put` creates one)")),
    ("soil_get", {"collection": "s", "key": "missing"}, ["soil", "get", "s", "missing"],
     "bad key 'missing': no record s/missing"),
    ("handoff_write", {"text": HANDOFF_WITHOUT_TABLE}, ["handoff", "write"],
     ("handoff: I3 incomplete handoff: needs a '## Capability table' section holding a Markdown table"
      " (| header | ... | then | --- | ... |)")),
    ("handoff_write", {"agent": "bob", "text": "---\nagent: alice\ndate: 2026-01-01\nsession: s\n---\n" + HANDOFF},
     ["handoff", "write", "--agent", "bob"],
     ("bad handoff: front matter agent 'alice' is not agent 'bob'",
      "bad handoff: front matter agent 'alice' is not --agent 'bob'")),
    ("boot_show", {"agent": "a b"}, ["boot", "show", "--agent", "a b"], f"bad agent 'a b': {_name('agent')}"),
    ("fact_add", {"subject": "s", "predicate": "p", "object": "o", "valid_from": "soon"},
     ["fact", "add", "--subject", "s", "--predicate", "p", "--object", "o", "--valid-from", "soon"],
     (f"bad valid_from 'soon': {TIME}", f"bad valid-from 'soon': {TIME}")),
    ("fact_add", {"subject": "s", "predicate": "p", "object": "o", "valid_from": 0, "confidence": 1.5},
     ["fact", "add", "--subject", "s", "--predicate", "p", "--object", "o", "--valid-from", "0",
      "--confidence", "1.5"], "bad confidence 1.5: must be a finite number in [0, 1]"),
    ("fact_invalidate", {"subject": "nobody", "predicate": "p", "valid_to": 5},
     ["fact", "invalidate", "--subject", "nobody", "--predicate", "p", "--valid-to", "5"],
     (("nothing to invalidate: no open fact with subject 'nobody', predicate 'p' (`fact_history subject=S` lists"
       " every version)"),
      ("nothing to invalidate: no open fact with subject 'nobody', predicate 'p' (`memstack fact history"
       " --subject S` lists every version)"))),
    ("recall", {"subject": "s", "now_ts": "never"}, ["recall", "--subject", "s", "--now-ts", "never"],
     (f"bad now_ts 'never': {TIME}", f"bad now-ts 'never': {TIME}")),
    ("capture", {"subject": "s", "predicate": "p", "object": "o", "valid_from": 0, "agent": "A"},
     ["capture", "--subject", "s", "--predicate", "p", "--object", "o", "--valid-from", "0", "--agent", "A"],
     f"bad agent 'A': {_name('agent')}"),
    # values that once ended in a traceback
    ("intake_write", {"content": "c", "created_at": "99999999999999999999"},
     ["intake", "write", "--content", "c", "--created-at", "99999999999999999999"],
     ("bad created_at '99999999999999999999': must lie between 1000-01-01 and 9999-12-31 (UTC)",
      "bad created-at '99999999999999999999': must lie between 1000-01-01 and 9999-12-31 (UTC)")),
    ("intake_write", {"content": "c", "created_at": "-1"}, ["intake", "write", "--content", "c", "--created-at", "-1"],
     ("bad created_at -1: a transaction time must lie between 1970-01-01 and 9999-12-31 (UTC)",
      "bad created-at -1: a transaction time must lie between 1970-01-01 and 9999-12-31 (UTC)")),
    ("intake_write", {"content": "c", "agent": ""}, ["intake", "write", "--content", "c", "--agent", ""],
     f"bad agent '': {_name('agent')}"),
    ("recall", {"subject": "s", "now_ts": 0, "limit": 99999999999999999999999},
     ["recall", "--subject", "s", "--now-ts", "0", "--limit", "99999999999999999999999"],
     "bad limit 99999999999999999999999: expected a whole number from 1 to 10000"),
    ("capture", {"subject": "s", "predicate": "p", "object": "o", "valid_from": 0, "recorded_at": "253402300800000"},
     ["capture", "--subject", "s", "--predicate", "p", "--object", "o", "--valid-from", "0",
      "--recorded-at", "253402300800000"],
     ("bad recorded_at '253402300800000': must lie between 1000-01-01 and 9999-12-31 (UTC)",
      "bad recorded-at '253402300800000': must lie between 1000-01-01 and 9999-12-31 (UTC)")),
]

# Mistakes argparse catches on the command line: the tool's own wording, naming the argument.
BAD_SHAPE = [
    ("intake_write", {}, "missing argument 'content': intake_write needs content"),
    ("intake_write", {"content": "c", "confidance": 0.4}, "unknown argument 'confidance'"),
    ("intake_write", {"content": "c", "confidence": "high"}, "bad confidence 'high': must be a number"),
    ("soil_put", {"collection": "s", "key": "k"}, "missing argument 'value'"),
    ("soil_get", {"collection": "s", "key": "k", "include_expired": "yes"}, "bad include_expired 'yes'"),
]


def test_bad_arguments_are_tool_errors_with_the_cli_message_and_write_nothing(store: Path) -> None:
    said = [(words, words) if isinstance(words, str) else words for *_, words in BAD]
    for (_, arguments, argv, _), (_, cli) in zip(BAD, said, strict=True):  # the command line says it in its words
        assert cli_error(store, *argv, input=arguments.get("text")) == cli, argv
    before = tree_snapshot(store)

    async def session() -> None:
        async with server("--store", str(store)) as client:
            for (tool, arguments, _, _), (message, _) in zip(BAD, said, strict=True):
                assert await refused(client, tool, **arguments) == message, (tool, arguments)
                assert not re.search(r"--[a-z]", message), message  # the tool's argument names, not CLI flags
            for tool, arguments, fragment in BAD_SHAPE:
                assert fragment in await refused(client, tool, **arguments), (tool, arguments)
            assert "unknown tool 'forgot'" in await refused(client, "forgot", subject="s")
            assert tree_snapshot(store) == before
            await ok(client, "soil_put", collection="s", key="k", value=[1])  # still serving
            assert (store / "store/s/k.json").is_file()

    run(session)


def test_a_store_that_is_not_one_is_a_tool_error_and_the_server_stays_up(store: Path, tmp_path: Path) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    message = cli_error(store, "--store", str(empty), "soil", "get", "s", "k")  # --store: the server's, too

    async def session() -> None:
        async with server("--store", str(empty)) as client:
            assert await refused(client, "soil_get", collection="s", key="k") == message
            assert await refused(client, "intake_write", content="c") == message
            assert (await client.list_resources()).resources == []
            assert {t.name for t in (await client.list_tools()).tools} == IMPLEMENTED
        assert list(empty.iterdir()) == []

    run(session)


def test_store_and_agent_are_found_as_the_cli_finds_them(store: Path) -> None:
    async def session() -> None:
        # the nearest ancestor holding memstack.yaml, and MEMSTACK_AGENT
        async with server(cwd=store / "identity", env={"MEMSTACK_AGENT": "bob"}) as client:
            assert (await ok(client, "intake_write", content="c", created_at=0))["record"]["agent"] == "bob"
        # MEMSTACK_HOME; the server's --agent beats MEMSTACK_AGENT; a tool's agent beats both
        async with server("--agent", "bob", env={"MEMSTACK_HOME": str(store), "MEMSTACK_AGENT": "alice"}) as client:
            assert (await ok(client, "intake_write", content="c"))["record"]["agent"] == "bob"
            assert (await ok(client, "intake_write", agent="alice", content="c"))["record"]["agent"] == "alice"

    run(session)
    assert len(items(cli_json(store, "intake", "list", "--agent", "bob"))) == 2


def test_the_servers_agent_writes_and_never_narrows_a_read(store: Path) -> None:
    """`memstack mcp --agent bob` (the README's configuration): bob is who writes; a read whose `agent` filters
    (search, intake_list, boot_rebuild) still covers every agent unless the call narrows it."""
    assert memstack("intake", "write", "--agent", "alice", "--content", "the lexer tables live in gen/",
                    cwd=store).returncode == 0
    handoff = ("---\nagent: alice\ndate: 2026-03-02\nsession: s1\n---\n\n# Session\n\nThe lexer.\n\n"
               "## Open threads\n\n- the parser\n\n## Capability table\n\n| capability | status |\n|---|---|\n"
               "| lexing | ok |\n")
    assert memstack("handoff", "write", "--agent", "alice", "-", input=handoff, cwd=store).returncode == 0
    assert memstack("boot", "rebuild", cwd=store).returncode == 0

    async def session() -> None:
        async with server("--agent", "bob", cwd=store) as client:
            await ok(client, "intake_write", content="the parser tables live in gen/ too")
            listed = await ok(client, "intake_list")
            assert sorted(item["agent"] for item in listed["items"]) == ["alice", "bob"]
            assert [i["agent"] for i in (await ok(client, "intake_list", agent="bob"))["items"]] == ["bob"]
            found = await ok(client, "search", query="tables", layer=["intake"])
            assert sorted(hit["agent"] for hit in found["hits"]) == ["alice", "bob"]
            (store / "session_anchor_alice.json").unlink()  # stale: rebuilt only if every agent's anchor is
            rebuilt = await ok(client, "boot_rebuild")
            assert "session_anchor_alice.json" in rebuilt["changed"], rebuilt

    run(session)


def test_a_bad_agent_option_stops_the_server_before_it_serves(store: Path) -> None:
    result = memstack("mcp", "--agent", "../x", cwd=store)
    assert result.returncode == 2 and "bad agent '../x'" in result.stderr and "Traceback" not in result.stderr


def test_two_servers_writing_at_once_lose_nothing(store: Path) -> None:
    writes = 20
    day = "2026-05-06T07:08:09Z"

    async def writer(name: str) -> None:
        async with server("--store", str(store), mode="auto") as client:
            async with anyio.create_task_group() as group:
                for i in range(writes):
                    group.start_soon(partial(ok, client, "intake_write", content=f"{name} {i}", created_at=day))
                    group.start_soon(partial(ok, client, "soil_update", collection="s", key="shared",
                                             value={f"{name}-{i}": i}))

    async def both() -> None:
        async with server("--store", str(store)) as client:
            await ok(client, "soil_put", collection="s", key="shared", value={})
        async with anyio.create_task_group() as group:
            group.start_soon(writer, "one")
            group.start_soon(writer, "two")

    run(both)
    lines = (store / "intake/alice/2026-05-06.jsonl").read_text().splitlines()
    records = [json.loads(line) for line in lines]
    assert sorted(r["content"] for r in records) == sorted(f"{n} {i}" for n in ("one", "two") for i in range(writes))
    assert len({r["id"] for r in records}) == 2 * writes
    value = json.loads((store / "store/s/shared.json").read_text())["value"]
    assert value == {f"{n}-{i}": i for n in ("one", "two") for i in range(writes)}  # no lost update


def test_a_registry_entry_is_all_a_new_tool_needs(store: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The shape the fact tools will take; and an unexpected exception is a tool error, not a crash."""
    monkeypatch.setitem(tools.TOOLS, "soil_keys", registry.Tool(
        "soil_keys", "The keys of a SOIL collection's live records, in order.",
        {"collection": kinds.name("the collection", required=True),
         "limit": kinds.integer("at most this many")},
        lambda store, a: [r["key"] for r in soil.list_records(store.root, a["collection"], now_ms())][:a["limit"]],
        title="SOIL keys", output=documents.listing(documents.STRING, "keys"), hints=registry.READS))

    def broken(store: Any, arguments: Any) -> None:
        raise RuntimeError("denied")  # an OSError is the CLI's line instead (tests/cli/test_bad_state.py)

    monkeypatch.setitem(tools.TOOLS, "broken", registry.Tool("broken", "Always fails.", {}, broken, title="Broken",
                                                                 output=documents.document("nothing", {}),
                                                                 hints=registry.APPENDS))
    memstack("soil", "put", "c", "k1", "--value", "1", cwd=store)
    memstack("soil", "put", "c", "k2", "--value", "2", cwd=store)

    async def session() -> None:
        async with Client(mcp_server.build(str(store), None)) as client:  # in process: the same server object
            listed = {t.name: t for t in (await client.list_tools()).tools}
            assert listed["soil_keys"].input_schema["required"] == ["collection"]
            assert await ok(client, "soil_keys", collection="c") == ["k1", "k2"]  # a list: structured as result
            assert await ok(client, "soil_keys", collection="c", limit=1) == ["k1"]
            assert await refused(client, "soil_keys", collection="c", limit="1") == "bad limit '1': must be an integer"
            assert await refused(client, "broken") == "internal error in broken: RuntimeError: denied"
            assert await ok(client, "soil_keys", collection="c") == ["k1", "k2"]  # still serving

    run(session)


def test_help_does_not_import_the_mcp_sdk() -> None:
    code = ("import sys; from memstack.cli import main; main.parser();"
            " print(sorted(m for m in sys.modules if m.split('.')[0] in ('mcp', 'mcp_types')))")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert result.stdout.strip() == "[]"


def test_every_paged_tool_publishes_the_limit_it_takes() -> None:
    """A client reads the schema for what a call may ask: each tool that pages (a `cursor`) says the most
    `limit` may be, the figure every list refuses past (`related` said none)."""
    from memstack.base.pages import MAX_LIMIT
    from memstack.mcp.tools import TOOLS

    paged = {name: tool.schema["properties"]["limit"] for name, tool in TOOLS.items()
             if "cursor" in tool.schema["properties"]}
    assert {"related", "search", "intake_list", "binder_list"} <= paged.keys()
    assert {name for name, limit in paged.items() if limit.get("maximum") != MAX_LIMIT} == set()
