"""`memstack mcp`: the tools (`tools.py`) and the boot files, served over stdio with the official SDK.

Built on the `mcp` SDK's low-level `Server` (2.x API: handlers passed to the
constructor), because the registry already carries each tool's JSON Schema;
the SDK does the protocol. Every tool call runs the same library code as the
command line, in a worker thread, with the same file locks; a MemstackError
(bad name, bad timestamp, not a store, ...) comes back as a tool error carrying
the library's message in the tool's words (`wording.py`), and the server stays up.

Prompts (`prompts.py`): `frame` and `learn`, the ferrox seed's protocol around a piece of work.
Resources for a cold start: `memstack://willow.md` (every agent's boot context)
and `memstack://anchor/<agent>` (an agent's `session_anchor_<agent>.json`).
The store is resolved on every request, as each CLI invocation resolves it.
"""

import functools
import sys
from typing import Any

import anyio
import anyio.to_thread
from mcp import types
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server
from mcp.shared.exceptions import MCPError

from memstack import __version__
from memstack.base import jsonio, sqlitecache
from memstack.base.errors import MemstackError, os_problem
from memstack.base.names import NAME_RE
from memstack.base.output import render_compact
from memstack.boot import context as boot
from memstack.mcp import prompts, tools, wording
from memstack.repo.store import open_store

WILLOW_URI = "memstack://willow.md"
ANCHOR_PREFIX = "memstack://anchor/"

INSTRUCTIONS = (
    "memstack is your persistent memory, kept in a git repository. At the start of a session call boot_show"
    f" (or read {WILLOW_URI}) to pick up your open threads. Before planning work on a subject, call recall (or use"
    " the frame prompt) and plan within what was decided. Record decisions with capture (contradicts=true when"
    " one replaces a prior) and observations with intake_write; promote routes intake into knowledge. Keep"
    " structured session state with soil_put, soil_get, soil_update, soil_list and soil_expire. At the end"
    " (the learn prompt) seal a handoff with handoff_write, then call boot_rebuild. A tool's result is the JSON"
    " document the `memstack` command prints with --json; list tools answer a page at a time (next_cursor)."
)


def resource_list(store: str | None) -> list[tuple[str, str, str, str]]:
    """(uri, name, mime type, description) of each boot file present; none while there is no store."""
    try:
        root = open_store(store).root
    except MemstackError:
        return []
    found = []
    if (root / boot.WILLOW).is_file():
        found.append((WILLOW_URI, boot.WILLOW, "text/markdown", "Every agent's boot context: start here."))
    for path in sorted(root.glob("session_anchor_*.json")):
        agent = path.name[len("session_anchor_"):-len(".json")]
        if NAME_RE.fullmatch(agent):
            found.append((ANCHOR_PREFIX + agent, f"anchor/{agent}", "application/json",
                          f"The boot anchor of agent {agent}: open threads, capabilities, recent knowledge."))
    return found


def resource_read(uri: str, store: str | None) -> tuple[str, str]:
    """The text and mime type of one boot file; raises MemstackError."""
    root = open_store(store).root
    if uri == WILLOW_URI:
        path = root / boot.WILLOW
        if not path.is_file():
            raise MemstackError.marked("no {willow} yet — seal a handoff, then run `{verb:memstack boot rebuild}`",
                                       willow=boot.WILLOW)
        return path.read_text(encoding="utf-8"), "text/markdown"
    if uri.startswith(ANCHOR_PREFIX):
        return jsonio.dumps_pretty(boot.show(root, uri[len(ANCHOR_PREFIX):])).decode(), "application/json"
    raise MemstackError(f"unknown resource {uri!r}: the resources are {WILLOW_URI} and {ANCHOR_PREFIX}<agent>")


def _call(name: str, arguments: Any, **where: Any) -> Any:
    """One tool call, in its worker thread; whatever it ends with, no index connection stays in a transaction
    for the next call."""
    try:
        return tools.call(name, arguments, **where)
    finally:
        sqlitecache.settle()


def _tool_error(message: str) -> types.CallToolResult:
    return types.CallToolResult(content=[types.TextContent(type="text", text=message)], is_error=True)


def build(store: str | None, agent: str | None, pg: str | None = None) -> Server[Any]:
    """The server: `store`, `agent` and `pg` are `memstack mcp`'s --store, --agent and --pg DSN (None: as the CLI
    finds them; no replica)."""

    async def list_tools(ctx: Any, params: Any) -> types.ListToolsResult:
        return types.ListToolsResult(tools=[
            types.Tool(name=tool.name, title=tool.title, description=tool.description, input_schema=tool.schema,
                       output_schema=tool.output_schema, annotations=types.ToolAnnotations(
                           title=tool.title, read_only_hint=tool.hints.read_only,
                           destructive_hint=tool.hints.destructive, idempotent_hint=tool.hints.idempotent,
                           open_world_hint=tool.hints.open_world))
            for tool in tools.TOOLS.values()])

    async def call_tool(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        run = functools.partial(_call, params.name, params.arguments, store=store, agent=agent, pg=pg)
        try:
            document = await anyio.to_thread.run_sync(run)
        except MemstackError as exc:  # the library's message, in the tool's words
            return _tool_error(wording.message(exc, tools.TOOLS.get(params.name)))
        except OSError as exc:  # the file system refused: the CLI's exit-2 line
            return _tool_error(os_problem(exc))
        except Exception as exc:  # an OSError, a bug: one line in the server's log, no traceback to the client
            print(f"memstack mcp: tool {params.name} failed: {type(exc).__name__}: {exc}", file=sys.stderr)
            return _tool_error(f"internal error in {params.name}: {type(exc).__name__}: {exc}")
        # The document `--json` prints, as compact JSON, in the text (what most clients give the model) and as
        # structured content (what the MCP specification asks a tool with an outputSchema to send beside it);
        # structured content must be an object, so a list document is wrapped as {"result": [...]} (its
        # outputSchema says so), as the SDK's own MCPServer wraps one.
        return types.CallToolResult(
            content=[types.TextContent(type="text", text=render_compact(document))],
            structured_content=tools.TOOLS[params.name].structured(document))

    async def list_resources(ctx: Any, params: Any) -> types.ListResourcesResult:
        found = await anyio.to_thread.run_sync(resource_list, store)
        return types.ListResourcesResult(resources=[
            types.Resource(uri=uri, name=name, mime_type=mime, description=description)
            for uri, name, mime, description in found])

    async def list_resource_templates(ctx: Any, params: Any) -> types.ListResourceTemplatesResult:
        return types.ListResourceTemplatesResult(resource_templates=[types.ResourceTemplate(
            uri_template=ANCHOR_PREFIX + "{agent}", name="anchor", mime_type="application/json",
            description="An agent's boot anchor (session_anchor_<agent>.json).")])

    async def read_resource(ctx: Any, params: types.ReadResourceRequestParams) -> types.ReadResourceResult:
        try:
            text, mime = await anyio.to_thread.run_sync(resource_read, params.uri, store)
        except MemstackError as exc:
            raise MCPError(code=types.INVALID_PARAMS, message=wording.message(exc)) from None
        # Memory changes under the client: never let it serve a stale boot file from its cache.
        contents: list[types.TextResourceContents | types.BlobResourceContents] = [
            types.TextResourceContents(uri=params.uri, mime_type=mime, text=text)]
        return types.ReadResourceResult(contents=contents, ttl_ms=0)

    async def list_prompts(ctx: Any, params: Any) -> types.ListPromptsResult:
        return types.ListPromptsResult(prompts=[
            types.Prompt(name=p.name, title=p.title, description=p.description, arguments=[
                types.PromptArgument(name=key, description=text, required=required)
                for key, (text, required) in p.arguments.items()])
            for p in prompts.PROMPTS.values()])

    async def get_prompt(ctx: Any, params: types.GetPromptRequestParams) -> types.GetPromptResult:
        def recall(subject: str) -> Any:
            return tools.call("recall", {"subject": subject}, store=store, agent=agent, pg=pg)["items"]

        try:
            prompt, text = await anyio.to_thread.run_sync(prompts.render, params.name, params.arguments, recall)
        except MemstackError as exc:
            raise MCPError(code=types.INVALID_PARAMS, message=wording.message(exc)) from None
        return types.GetPromptResult(description=prompt.description, messages=[
            types.PromptMessage(role="user", content=types.TextContent(type="text", text=text))])

    return Server(
        "memstack", version=__version__, instructions=INSTRUCTIONS,
        on_list_tools=list_tools, on_call_tool=call_tool, on_list_resources=list_resources,
        on_list_resource_templates=list_resource_templates, on_read_resource=read_resource,
        on_list_prompts=list_prompts, on_get_prompt=get_prompt)


def serve(store: str | None, agent: str | None, pg: str | None = None) -> None:
    """Serve on stdin and stdout until the client closes stdin."""
    server = build(store, agent, pg)

    async def main() -> None:
        async with stdio_server() as (read_stream, write_stream):
            await server.run(read_stream, write_stream, server.create_initialization_options())

    anyio.run(main)
