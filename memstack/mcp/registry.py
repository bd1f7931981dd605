"""What an MCP tool is, and the registry of them: one entry per tool (name, description, argument schema,
handler, and the three fields no tool may lack: `title`, `output` (the JSON Schema of its document) and
`hints` (the four MCP annotations); docs/agents.md). `tools.py` holds the registry of every tool.

Checking is split as the command line splits it. Here, as argparse does: unknown arguments, missing
required ones, wrong JSON types, refused in the tools' own words. In the library, as for the command
line: names, ranges, tiers and timestamps, refused before anything is written (`wording.py` says those
errors in the tools' words). This module knows nothing of the MCP SDK (`server.py` serves the registry),
so it is cheap to import and to test.
"""

import copy
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from memstack.base import limits
from memstack.base.errors import MemstackError
from memstack.mcp.arguments import Arg, described

Handler = Callable[[Any, dict[str, Any]], Any]  # the store, or a FactReader for the tools that read facts


@dataclass(frozen=True)
class Hints:
    """MCP tool annotations, all four said on purpose (the protocol's defaults are the pessimistic ones)."""
    read_only: bool    # changes nothing
    destructive: bool  # may change or hide what is there (false: only adds)
    idempotent: bool   # a second identical call changes nothing more (timestamps aside)
    open_world: bool   # reaches beyond the store (a git remote)


READS = Hints(read_only=True, destructive=False, idempotent=True, open_world=False)
APPENDS = Hints(read_only=False, destructive=False, idempotent=False, open_world=False)
REPLACES = Hints(read_only=False, destructive=True, idempotent=True, open_world=False)
# closes an open fact: kept forever and seen by as_of, but no longer valid, so a client should ask first
CLOSES = Hints(read_only=False, destructive=True, idempotent=False, open_world=False)
DERIVES = Hints(read_only=False, destructive=False, idempotent=True, open_world=False)


@dataclass(frozen=True)
class Tool:
    name: str
    description: str  # what it does, when to use it, what it returns: an agent acts on this
    arguments: Mapping[str, Arg]
    handler: Handler
    title: str = field(kw_only=True)  # a short human title
    output: dict[str, Any] = field(kw_only=True)  # the JSON Schema of the document the handler returns
    hints: Hints = field(kw_only=True)
    optional_store: bool = field(default=False, kw_only=True)  # no store is a graceful answer; handler gets None
    reads_facts: bool = field(default=False, kw_only=True)  # handler gets a readers.FactReader (files or `pg`)
    # the handler's args get "server_agent": the server's --agent (None: MEMSTACK_AGENT, memory.default_agent);
    # a Binder line made over MCP is the agent's own, never in a name the client gives
    as_agent: bool = field(default=False, kw_only=True)
    schema: dict[str, Any] = field(init=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "schema", {
            "type": "object",
            "properties": {key: arg.schema for key, arg in self.arguments.items()},
            "required": [key for key, arg in self.arguments.items() if arg.required],
            "additionalProperties": False,
        })

    @property
    def wraps(self) -> bool:
        """MCP structured content is an object: a document of another kind (a list) goes under "result"."""
        return self.output.get("type") != "object"

    @property
    def output_schema(self) -> dict[str, Any]:
        """The outputSchema published over MCP: the schema of the structured content."""
        if not self.wraps:
            return self.output
        return {"type": "object", "required": ["result"], "properties": {"result": self.output}}

    def structured(self, document: Any) -> Any:
        return {"result": document} if self.wraps else document

    def check(self, arguments: Mapping[str, Any] | None) -> dict[str, Any]:
        """Every declared argument, given or defaulted; raises MemstackError on a structural mistake."""
        from jsonschema import Draft202012Validator  # deferred: ~90 ms to import

        # An optional argument given as null means "not given" (agents often send null for "unset").
        given = {k: v for k, v in (arguments or {}).items()
                 if v is not None or k not in self.arguments or self.arguments[k].required}
        unknown = sorted(set(given) - set(self.arguments))
        if unknown:
            takes = ", ".join(sorted(self.arguments)) or "no arguments"
            raise MemstackError(f"unknown argument {unknown[0]!r}: {self.name} takes {takes}")
        for key, value in given.items():
            if not limits.finite(value):  # the SDK parses with Python's json, which takes them
                raise MemstackError(f"bad {key}: holds a number that is not finite (Infinity or NaN, or one too"
                                    " large for a double)")
        missing = [key for key, arg in self.arguments.items() if arg.required and key not in given]
        if missing:
            raise MemstackError(f"missing argument {missing[0]!r}: {self.name} needs"
                                f" {', '.join(k for k, a in self.arguments.items() if a.required)}")
        for error in Draft202012Validator(self.schema).iter_errors(given):
            if error.validator == "type":
                key = str(error.path[0])
                raise MemstackError(f"bad {key} {given[key]!r}: must be {described(self.arguments[key].schema)}")
        return {key: given[key] if key in given else copy.deepcopy(arg.default) for key, arg in self.arguments.items()}


def by_name(*tools: Tool) -> dict[str, Tool]:
    """The registry of `tools`, in their order (the order tools/list gives them); a name twice is a bug."""
    registry: dict[str, Tool] = {}
    for tool in tools:
        if tool.name in registry:
            raise ValueError(f"tool {tool.name!r} is registered twice")
        registry[tool.name] = tool
    return registry
