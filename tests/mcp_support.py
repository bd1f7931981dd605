"""What the MCP tests share: a server over stdio through the official SDK client, a tool's answer or its
refusal, and the command line's answer to compare with."""

import json
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
from mcp import Client, StdioServerParameters

from helpers import MEMSTACK, memstack

HANDOFF = """## Open threads

- wire the fact tools into the MCP server

## Capability table

| capability | status |
|---|---|
| mcp | partial |
"""


@asynccontextmanager
async def server(*args: str, cwd: Path | None = None, env: dict[str, str] | None = None,
                 mode: str = "legacy") -> AsyncIterator[Client]:
    """A client session with a `memstack mcp` subprocess (mode legacy: the initialize handshake)."""
    params = StdioServerParameters(command=MEMSTACK, args=["mcp", *args], cwd=cwd, env=env)
    async with Client(params, mode=mode) as client:
        yield client


def run(test: Callable[[], Awaitable[None]]) -> None:
    anyio.run(test)


async def ok(client: Client, tool: str, **arguments: Any) -> Any:
    """Call a tool that must succeed; return its document (text and structured content must agree)."""
    result = await client.call_tool(tool, arguments)
    assert not result.is_error, result.content
    [block] = result.content
    document = json.loads(block.text)
    assert result.structured_content == (document if isinstance(document, dict) else {"result": document})
    return document


async def refused(client: Client, tool: str, **arguments: Any) -> str:
    """Call a tool that must fail; return its one-line message."""
    result = await client.call_tool(tool, arguments)
    assert result.is_error
    [block] = result.content
    assert "\n" not in block.text and "Traceback" not in block.text
    return block.text


def cli_json(store: Path, *args: str) -> Any:
    result = memstack(*args, "--json", cwd=store)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


def cli_error(store: Path, *args: str, input: str | None = None) -> str:
    """The message the CLI prints for a refused command, without its `memstack: ` prefix."""
    result = memstack(*args, cwd=store, input=input)
    assert result.returncode == 2, result.stdout
    line = result.stderr.strip()
    assert line.startswith("memstack: ") and "\n" not in line
    return line.removeprefix("memstack: ")


def worded(message: str, *words: tuple[str, str]) -> str:
    """The command line's `message` with the `words` (command line's, tool's) a tool says differently."""
    for cli, tool in words:
        assert cli in message, (cli, message)
        message = message.replace(cli, tool)
    return message
