"""Every verb over MCP: tool metadata on the wire, each tool's result against its output schema,
the new tools with valid and invalid arguments, the prompts, and the README's list of them."""

import json
import re
import subprocess
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft202012Validator
from mcp import Client
from mcp.shared.exceptions import MCPError

from helpers import MEMSTACK, git, memstack, tree_snapshot
from mcp_support import HANDOFF, cli_error, cli_json, refused, run, server, worded
from memstack.base.errors import MemstackError, bad
from memstack.mcp import prompts, registry, tools, wording
from team_support import guarded_remote

ROOT = Path(__file__).resolve().parents[2]


def test_every_tool_has_a_title_an_output_schema_and_all_four_hints() -> None:
    for tool in tools.TOOLS.values():
        assert tool.title.strip() and len(tool.title) <= 40, tool.name
        assert len(tool.description) >= 40 and "\n" not in tool.description, tool.name
        Draft202012Validator.check_schema(tool.output)
        Draft202012Validator.check_schema(tool.output_schema)
        assert tool.output_schema["type"] == "object", tool.name  # MCP: structured content is an object
        assert all(isinstance(getattr(tool.hints, h), bool)
                   for h in ("read_only", "destructive", "idempotent", "open_world")), tool.name
        if tool.hints.read_only:
            assert not tool.hints.destructive and tool.hints.idempotent, tool.name
    assert tools.TOOLS["sync"].hints.open_world and not tools.TOOLS["recall"].hints.open_world
    assert tools.TOOLS["fact_invalidate"].hints.destructive and not tools.TOOLS["intake_write"].hints.destructive


def test_a_tool_without_title_output_or_hints_cannot_be_made() -> None:
    with pytest.raises(TypeError, match="title.*output.*hints"):
        registry.Tool("bare", "A tool in the old format.", {}, lambda store, a: {})  # type: ignore[call-arg]


def _rpc(lines: list[dict[str, Any]], store: Path) -> dict[int, dict[str, Any]]:
    """Raw JSON-RPC over the server's stdio: the bytes a client sees, camelCase and all. Stdin stays open
    until every request is answered (the server stops at end of input)."""
    wanted = {line["id"] for line in lines if "id" in line}
    answers: dict[int, dict[str, Any]] = {}
    with subprocess.Popen([MEMSTACK, "mcp", "--store", str(store)], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                          stderr=subprocess.DEVNULL, text=True) as process:
        assert process.stdin and process.stdout
        process.stdin.write("".join(json.dumps(line) + "\n" for line in lines))
        process.stdin.flush()
        while set(answers) != wanted:
            line = process.stdout.readline()
            assert line, f"the server stopped before answering {sorted(wanted - set(answers))}"
            answer = json.loads(line)
            if "id" in answer:
                answers[answer["id"]] = answer
        process.stdin.close()
    return answers


def test_titles_annotations_and_output_schemas_on_the_wire(store: Path) -> None:
    answers = _rpc([
        {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}}},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
        {"jsonrpc": "2.0", "id": 3, "method": "prompts/list"},
    ], store)
    assert "prompts" in answers[1]["result"]["capabilities"]
    listed = {t["name"]: t for t in answers[2]["result"]["tools"]}
    assert set(listed) == set(tools.TOOLS)
    for name, wire in listed.items():
        tool = tools.TOOLS[name]
        assert wire["title"] == tool.title and wire["outputSchema"] == tool.output_schema
        assert wire["annotations"] == {"title": tool.title, "readOnlyHint": tool.hints.read_only,
                                       "destructiveHint": tool.hints.destructive,
                                       "idempotentHint": tool.hints.idempotent,
                                       "openWorldHint": tool.hints.open_world}
    assert listed["soil_list"]["annotations"]["readOnlyHint"] is True
    assert listed["binder_ratify"]["annotations"]["destructiveHint"] is False  # appends a decision
    assert {p["name"] for p in answers[3]["result"]["prompts"]} == {"frame", "learn"}


class Checked:
    """A client whose every successful call is checked against the tool's output schema and remembered."""

    def __init__(self, client: Client) -> None:
        self.client = client
        self.called: set[str] = set()

    async def ok(self, tool: str, **arguments: Any) -> Any:
        result = await self.client.call_tool(tool, arguments)
        assert not result.is_error, result.content
        document = json.loads(result.content[0].text)
        spec = tools.TOOLS[tool]
        assert result.structured_content == spec.structured(document)
        errors = [e.message for e in Draft202012Validator(spec.output).iter_errors(document)]
        assert not errors, (tool, errors)
        self.called.add(tool)
        return document

    async def refused(self, tool: str, **arguments: Any) -> str:
        return await refused(self.client, tool, **arguments)


def _code_with_memory(code: Path) -> Path:
    """A code repository with a store in `.memory/` holding a fact anchored to `app.py`, committed."""
    code.mkdir()
    git(code, "init", "-q", "-b", "main")
    (code / "app.py").write_text("def deploy_day():\n    return 'monday'\n")
    git(code, "add", "-A")
    git(code, "commit", "-q", "-m", "code")
    for args in (("init", ".memory", "--agent", "alice"),
                 ("capture", "--subject", "deploys", "--predicate", "decided", "--object", "monday",
                  "--anchor", "app.py:1-2")):
        done = memstack(*args, cwd=code)
        assert done.returncode == 0, done.stderr
    git(code, "add", "-A")
    git(code, "commit", "-q", "-m", "memory")
    return code / ".memory"


def test_every_tool_over_stdio_valid_and_invalid(store: Path, tmp_path: Path) -> None:
    guarded_remote(store, tmp_path)
    day = "2026-04-01T10:00:00Z"

    async def session() -> None:
        async with server("--store", str(store)) as client:
            c = Checked(client)
            # intake: three by alice, one by bob; intake_list pages through them as the CLI lists them
            written = [await c.ok("intake_write", content=f"note {i}", created_at=f"2026-04-01T10:0{i}:00Z")
                       for i in range(3)]
            await c.ok("intake_write", agent="bob", content="the lexer is table driven", tier="verified",
                       confidence=0.9, subject="lexer", predicate="chose", object="tables", created_at=day)
            everything = cli_json(store, "intake", "list")["items"]
            first = await c.ok("intake_list", limit=3)
            assert first["items"] == everything[:3] and first["remaining"] == 1 and first["next_cursor"]
            rest = await c.ok("intake_list", limit=3, cursor=first["next_cursor"])
            assert rest == {"items": everything[3:], "next_cursor": None, "remaining": 0}
            assert (await c.ok("intake_list"))["items"] == everything  # the default page holds up to 50
            mine = await c.ok("intake_list", agent="alice", pending=True)
            assert [r["id"] for r in mine["items"]] == [w["record"]["id"] for w in written]
            assert await c.refused("intake_list", limit=0) == "bad limit 0: expected a whole number from 1 to 10000"
            assert "bad cursor 'zzz'" in await c.refused("intake_list", cursor="zzz")
            assert await c.refused("intake_list", agent="Bob") == cli_error(store, "intake", "list", "--agent", "Bob")

            # promote: a dry run writes nothing; a bad now_ts names the argument; then one commit
            before = tree_snapshot(store)
            dry = await c.ok("promote", dry_run=True, now_ts=day)
            assert dry["dry_run"] and len(dry["records"]) == 4 and tree_snapshot(store) == before
            told = await c.refused("promote", now_ts="soon")
            assert told == worded(cli_error(store, "promote", "--now-ts", "soon"), ("--now-ts", "now_ts"))
            assert told.startswith("bad now_ts 'soon'")
            moved = await c.ok("promote", now_ts=day)
            assert moved["routed"] == {"binder": 3, "knowledge": 1} and moved["commit"]
            assert git(store, "rev-parse", "HEAD").stdout.strip() == moved["commit"]
            assert (await c.ok("promote", now_ts=day))["facts_added"] == 0  # idempotent

            # the Binder: decisions made over MCP are recorded as the agent's own (by the agent, via mcp)
            waiting = (await c.ok("binder_list"))["items"]
            assert [r["id"] for r in waiting] == [w["record"]["id"] for w in written]
            ratified = await c.ok("binder_ratify", id=waiting[0]["id"], note="checked")
            assert ratified == {**ratified, "intake_id": waiting[0]["id"], "decision": "ratify", "by": "alice",
                                "via": "mcp"}
            rejected = await c.ok("binder_reject", id=waiting[1]["id"], by="alice")
            assert rejected["decision"] == "reject"
            assert [r["id"] for r in cli_json(store, "binder", "list")["items"]] == [waiting[2]["id"]]
            for tool, arguments, argv, words in (
                ("binder_ratify", {"id": "nope"}, ["binder", "ratify", "nope"],
                 [("bad ID", "bad id"), ("`memstack fact history`", "`fact_history`"),
                  ("`memstack intake list`", "`intake_list`")]),
                ("binder_reject", {"id": waiting[0]["id"]}, ["binder", "reject", waiting[0]["id"]],
                 [("bad ID", "bad id")]),
                ("binder_ratify", {"id": waiting[2]["id"], "by": " "}, ["binder", "ratify", waiting[2]["id"],
                                                                        "--by", " "], [("bad --by", "bad by")]),
            ):
                told = await c.refused(tool, **arguments)
                assert told == worded(cli_error(store, *argv), *words), told
                assert not re.search(r"--[a-z]|\bID\b", told), told
            assert "not a fact or intake id" in await c.refused("binder_ratify", id="nope")  # no schema's words
            assert "already ratified by alice" in await c.refused("binder_reject", id=waiting[0]["id"])
            assert await c.refused("binder_ratify") == "missing argument 'id': binder_ratify needs id"

            # SOIL: list a page at a time, expire (kept), include_expired
            for key in ("a", "b", "c"):
                await c.ok("soil_put", collection="session", key=key, value={"k": key})
            await c.ok("soil_update", collection="session", key="a", value={"more": 1})
            assert (await c.ok("soil_get", collection="session", key="a"))["value"] == {"k": "a", "more": 1}
            page = await c.ok("soil_list", collection="session", limit=2)
            assert [r["key"] for r in page["items"]] == ["a", "b"] and page["remaining"] == 1
            more = await c.ok("soil_list", collection="session", limit=2, cursor=page["next_cursor"])
            assert [r["key"] for r in more["items"]] == ["c"] and more["next_cursor"] is None
            expired = await c.ok("soil_expire", collection="session", key="b", at="2026-01-01T00:00:00Z")
            assert expired["expires_at"] == "2026-01-01T00:00:00.000Z"
            assert json.loads((store / "store/session/b.json").read_text()) == expired
            assert [r["key"] for r in (await c.ok("soil_list", collection="session"))["items"]] == ["a", "c"]
            listed = await c.ok("soil_list", collection="session", include_expired=True)
            assert [r["key"] for r in listed["items"]] == ["a", "b", "c"]
            assert listed["items"] == cli_json(store, "soil", "list", "session", "--include-expired")["items"]
            for tool, arguments, argv, words in (
                ("soil_expire", {"collection": "session", "key": "zz"}, ["soil", "expire", "session", "zz"],
                 [("`soil put`", "`soil_put`")]),
                ("soil_expire", {"collection": "session", "key": "a", "at": "soon"},
                 ["soil", "expire", "session", "a", "--at", "soon"], [("bad --at", "bad at")]),
                ("soil_list", {"collection": "Session"}, ["soil", "list", "Session"], []),
            ):
                told = await c.refused(tool, **arguments)
                assert told == worded(cli_error(store, *argv), *words) and "--" not in told, told
            assert await c.refused("soil_expire", collection="session", key="a", at=True) == \
                "bad at True: must be an integer or a string"

            # handoff, boot: nothing tells the agent to run a command it cannot run
            told = await c.refused("handoff_show")
            assert told == cli_error(store, "handoff", "show") and "handoffs/alice/" in told
            sealed = await c.ok("handoff_write", text=HANDOFF)
            shown = await c.ok("handoff_show")
            assert shown == cli_json(store, "handoff", "show") and shown["path"] == sealed["path"]
            assert "run `boot_rebuild`" in await c.refused("boot_show")
            told = await c.refused("boot_rebuild", agent="bob")
            assert told == worded(cli_error(store, "boot", "rebuild", "--agent", "bob"),
                                  ("`memstack handoff write`", "`handoff_write`")), told
            assert "`handoff_write`" in told
            assert await c.ok("boot_rebuild", agent="alice") == {"changed": ["session_anchor_alice.json",
                                                                             "willow.md"]}
            assert await c.ok("boot_rebuild") == {"changed": []}  # idempotent
            assert (await c.ok("boot_show"))["open_threads"] == sealed["open_threads"]

            # the fact tools, so that every tool's result meets its schema here
            await c.ok("capture", subject="build", predicate="chose", object="make", valid_from=day)
            await c.ok("capture", subject="build", predicate="chose", object="ninja", valid_from="2026-04-02T00:00:00Z",
                       contradicts=True)
            await c.ok("fact_add", subject="build", predicate="uses", object="ccache", valid_from=day)
            assert [f["object"] for f in (await c.ok("recall", subject="build"))["items"]] == ["ninja"]
            assert len((await c.ok("fact_get_valid_at", ts="2026-04-03T00:00:00Z", subject="build"))["items"]) == 2
            assert len((await c.ok("fact_history", subject="build"))["items"]) == 3
            await c.ok("fact_invalidate", subject="build", predicate="uses", valid_to="2026-04-03T00:00:00Z")

            # search: ranked hits across the layers, each with where it lives
            found = await c.ok("search", query="table driven lexer", layer=["intake"])
            assert [h["layer"] for h in found["hits"]] == ["intake"] and found["hits"][0]["agent"] == "bob"
            assert "bad" in await c.refused("search", query="   ")

            # the seed layers: graduate a SOIL record, file a document, enter an edge, walk it, ask the status
            grad = await c.ok("soil_graduate", collection="session", key="c")
            assert grad["soil"]["graduated_to"] == grad["intake"]["record"]["id"]
            assert "already graduated" in await c.refused("soil_graduate", collection="session", key="c")
            (store / "adr.md").write_text("# ADR 1\nWe build with ninja.\n")  # inside the store's repository
            filed = await c.ok("binder_file", path=str(store / "adr.md"))
            assert filed["kind"] == "file" and filed["path"].startswith("kb/files/")
            edge = await c.ok("binder_edge", **{"from": "build", "to": "lexer", "relation": "feeds"})
            assert (edge["from"], edge["to"]) == ("build", "lexer")
            walked = await c.ok("related", subject="build")
            assert ("edge", "lexer") in [(i["kind"], i["to"]) for i in walked["items"]]
            state = await c.ok("status")
            assert state["pending_total"] >= 1 and state["uncommitted"]
            blamed = await c.ok("blame", id=waiting[0]["id"])
            assert blamed["kind"] == "intake" and blamed["decisions"][0]["record"]["via"] == "mcp"
            assert (await c.refused("blame", id="../x")).startswith("bad id '../x': not a fact or intake id")
            anchored = await c.ok("anchors")  # nothing written here carries a code anchor
            assert (anchored["items"], anchored["next_cursor"]) == ([], None)
            assert "bad status 'stale'" in await c.refused("anchors", status="stale")
            outside = await c.refused("anchors_check", range="HEAD~1..HEAD")
            assert "not a folder of a code repository" in outside
            # the tool takes no repo: the command line's option is named as the command line's
            assert "--repo PATH (on the command line: no tool takes it)" in outside, outside

            # forget: recorded as the agent's (via mcp), refused as the command line refuses, pushed below
            gone = await c.ok("forget", id=[waiting[2]["id"]], reason="pasted by mistake")
            assert gone["tombstones"][0] == {**gone["tombstones"][0], "forgets": waiting[2]["id"], "kind": "intake",
                                             "by": "alice", "via": "mcp"} and gone["closed"] == []
            assert gone["intake_kept"] == []  # an intake record: no record of its words is left behind
            assert await c.refused("forget", id=["nope/none"], reason="x") == worded(
                cli_error(store, "forget", "nope/none", "--reason", "x"), ("bad ID", "bad id"))
            assert "bad by 'Grace'" in await c.refused("forget", id=[written[0]["record"]["id"]], reason="x",
                                                       by="Grace")
            assert "missing argument 'reason'" in await c.refused("forget", id=[written[0]["record"]["id"]])
            shown = {r["id"]: r for r in (await c.ok("intake_list"))["items"]}[waiting[2]["id"]]
            assert shown["content"] == "[forgotten: pasted by mistake]"
            assert shown["created_at"] == waiting[2]["created_at"]
            hits = (await c.ok("search", query="note 2", layer=["intake"]))["hits"]
            assert all("note 2" not in h["snippet"] for h in hits)

            done = await c.ok("sync")
            assert done["ok"] and done["pushed"]
        async with server("--store", str(_code_with_memory(tmp_path / "code"))) as client:  # code anchors
            coded = Checked(client)
            (tmp_path / "code" / "app.py").write_text("def deploy_day():\n    return 'friday'\n")
            git(tmp_path / "code", "commit", "-q", "-am", "fridays")
            checked = await coded.ok("anchors_check", range="HEAD~1..HEAD")
            assert (checked["stale"], checked["files"][0]["path"], checked["next_cursor"]) == (1, "app.py", None)
            c.called |= coded.called
        assert c.called == set(tools.TOOLS), set(tools.TOOLS) - c.called  # a new tool joins this scenario

    run(session)


def test_frame_and_learn_prompts(store: Path) -> None:
    async def session() -> None:
        async with server("--store", str(store)) as client:
            listed = {p.name: p for p in (await client.list_prompts()).prompts}
            assert set(listed) == set(prompts.PROMPTS)
            assert [(a.name, a.required) for a in listed["frame"].arguments] == [("subject", True)]
            assert [(a.name, a.required) for a in listed["learn"].arguments] == [("subject", False)]
            assert listed["frame"].title and listed["learn"].description

            empty = (await client.get_prompt("frame", {"subject": "build"})).messages[0].content.text
            assert "nothing yet: no decision about 'build' is recorded" in empty

            for obj, when, contradicts in (("make", "2026-01-01T00:00:00Z", False),
                                           ("ninja", "2026-02-01T00:00:00Z", True)):
                result = await client.call_tool("capture", {"subject": "build", "predicate": "chose", "object": obj,
                                                            "valid_from": when, "contradicts": contradicts})
                assert not result.is_error
            got = await client.get_prompt("frame", {"subject": "build"})
            [message] = got.messages
            assert message.role == "user"
            text = message.content.text
            assert "- build chose ninja (since 2026-02-01T00:00:00.000Z" in text
            assert "make" not in text  # superseded: not what is decided now
            assert "contradicts=true" in text and "capture" in text

            learned = (await client.get_prompt("learn", {"subject": "build"})).messages[0].content.text
            for word in ("capture", "contradicts=true", "intake_write", "handoff_write", "boot_rebuild",
                         "build chose ninja"):
                assert word in learned, word
            plain = (await client.get_prompt("learn")).messages[0].content.text
            assert "build chose ninja" not in plain and "handoff_write" in plain
            for name in re.findall(r"\b[a-z]+_[a-z_]+\b", learned + text):  # every tool a prompt names exists
                assert name in tools.TOOLS or name in ("valid_from", "fact_get_valid_at") or name in \
                    {a for t in tools.TOOLS.values() for a in t.arguments}, name

            with pytest.raises(MCPError, match="missing argument 'subject': frame needs subject"):
                await client.get_prompt("frame", {})
            with pytest.raises(MCPError, match="unknown argument 'topic'"):
                await client.get_prompt("frame", {"subject": "s", "topic": "t"})
            with pytest.raises(MCPError, match="unknown prompt 'plan': the prompts are frame, learn"):
                await client.get_prompt("plan", {})

    run(session)


def test_the_readme_lists_every_tool_prompt_and_resource() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    section = readme.split("\n## MCP server\n", 1)[1].split("\n## ", 1)[0]
    for tool in tools.TOOLS.values():
        assert re.search(rf"^\| `{tool.name}` \|", section, re.M), f"README's MCP section lacks tool {tool.name}"
    for name in prompts.PROMPTS:
        assert f"`{name}`" in section, f"README's MCP section lacks prompt {name}"
    for uri in ("memstack://willow.md", "memstack://anchor/<agent>"):
        assert f"`{uri}`" in section, uri


def test_an_error_says_what_it_marks_in_each_interface_s_words() -> None:
    marked = MemstackError.marked
    for error, cli, tool in (
        (bad("--now-ts", "'x'", "expected ms"), "bad --now-ts 'x': expected ms", "bad now_ts 'x': expected ms"),
        (bad("created-at", "5", "too early"), "bad created-at 5: too early", "bad created_at 5: too early"),
        (bad("ID", "'x'", "not waiting (`{verb:memstack binder list}`)"),
         "bad ID 'x': not waiting (`memstack binder list`)", "bad id 'x': not waiting (`binder_list`)"),
        (marked("run `{verb:memstack boot rebuild}`"), "run `memstack boot rebuild`", "run `boot_rebuild`"),
        (marked("see `{verb:memstack fact get-valid-at --ts now}`"), "see `memstack fact get-valid-at --ts now`",
         "see `fact_get_valid_at ts=now`"),
        (marked("run `{verb:memstack rebuild}`"), "run `memstack rebuild`", "run `memstack rebuild`"),  # no tool
        (marked("no store: {pass:--store PATH}"), "no store: pass --store PATH",
         "no store: start `memstack mcp` with --store PATH"),
        (marked("no agent: {pass:--agent NAME}"), "no agent: pass --agent NAME",  # binder_ratify takes no agent
         "no agent: start `memstack mcp` with --agent NAME"),
        # a value is never read for marks, nor is a plain message
        (bad("key", repr("{arg:x} --y"), "{what}", what="`memstack boot rebuild` {z}"),
         "bad key '{arg:x} --y': `memstack boot rebuild` {z}", "bad key '{arg:x} --y': `memstack boot rebuild` {z}"),
        (MemstackError("bad --now-ts {x}: `memstack boot rebuild`"), "bad --now-ts {x}: `memstack boot rebuild`",
         "bad --now-ts {x}: `memstack boot rebuild`"),
    ):
        assert str(error) == error.message == cli
        assert wording.message(error, tools.TOOLS["binder_ratify"]) == tool, tool
    no_agent = marked("no agent: {pass:--agent NAME}")
    assert wording.message(no_agent, tools.TOOLS["intake_write"]) == \
        "no agent: pass agent or start `memstack mcp` with --agent NAME"  # the tool takes one
    refused = bad("valid-from", "'soon'", "expected ms or ISO-8601 (`{verb:memstack fact add}`)")
    assert (refused.field, refused.reason) == ("valid_from", "expected ms or ISO-8601 (`memstack fact add`)")
    assert MemstackError("plain").field is None
    with pytest.raises(TypeError, match="may not be named"):
        marked("{verb}", verb="x")  # a value named as a mark would be read as one


def test_a_resource_error_speaks_in_tools(store: Path) -> None:
    async def session() -> None:
        async with server("--store", str(store)) as client:
            with pytest.raises(MCPError, match=r"then run `boot_rebuild`$"):
                await client.read_resource("memstack://willow.md")

    (store / "willow.md").unlink(missing_ok=True)
    run(session)
    assert memstack("boot", "show", cwd=store).returncode == 2


def test_a_number_json_does_not_have_is_refused_and_nothing_written(store: Path) -> None:
    """The SDK parses arguments with Python's json, which takes 1e400, NaN and Infinity; written as JSON they
    would become null, so a tool refuses them before anything is written."""
    from memstack.base.errors import MemstackError
    from memstack.mcp import tools

    for value in (float("inf"), {"x": [1, float("nan")]}, -float("inf")):
        with pytest.raises(MemstackError, match=r"^bad value: holds a number that is not finite"):
            tools.call("soil_put", {"collection": "c", "key": "k", "value": value}, store=str(store))
    with pytest.raises(MemstackError, match=r"^bad confidence: holds a number that is not finite"):
        tools.call("intake_write", {"content": "x", "confidence": float("nan")}, store=str(store))
    assert not (store / "store/c").exists() and not list((store / "intake").glob("*/*.jsonl"))
    with pytest.raises(MemstackError, match=r"^unknown argument 'extra': status takes no arguments$"):
        tools.call("status", {"extra": 1}, store=str(store))
