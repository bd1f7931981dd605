"""The kinds of argument a tool takes: each a JSON Schema fragment, whether it is required, its default.

A tool's arguments are its command's options with `_` for `-`. The schemas advertise the library's own
rules (NAME_RULE, the bounds of a page) from the library's own constants; the library checks them again
and refuses with its own message, as it does for the command line.
"""

from dataclasses import dataclass
from typing import Any

from memstack.base.names import NAME_RULE
from memstack.base.pages import MAX_LIMIT, MCP_DEFAULT_LIMIT, MCP_MAX_BYTES


@dataclass(frozen=True)
class Arg:
    schema: dict[str, Any]
    required: bool = False
    default: Any = None


def text(description: str, *, required: bool = False, default: str | None = None) -> Arg:
    extra = {} if default is None else {"default": default}
    return Arg({"type": "string", "description": description, **extra}, required, default)


def name(description: str, *, required: bool = False) -> Arg:
    return Arg({"type": "string", "pattern": NAME_RULE, "description": f"{description} (no '..')"}, required)


def timestamp(description: str, *, required: bool = False) -> Arg:
    return Arg({"type": ["integer", "string"],
                "description": f"{description}: integer ms since the epoch, ISO-8601 (e.g. 2026-11-30T12:00:00Z)"
                               " or now"},
               required)


def fraction(description: str, *, default: float | None = None) -> Arg:
    extra = {} if default is None else {"default": default}
    return Arg({"type": "number", "minimum": 0, "maximum": 1, "description": description, **extra}, False, default)


def integer(description: str, *, required: bool = False) -> Arg:
    return Arg({"type": "integer", "description": description}, required)


def texts(description: str) -> Arg:
    return Arg({"type": "array", "items": {"type": "string"}, "description": description}, False, [])


def flag(description: str) -> Arg:
    return Arg({"type": "boolean", "default": False, "description": description}, False, False)


def json_value(description: str, *, required: bool = False) -> Arg:
    kinds = ["object", "array", "string", "number", "integer", "boolean", "null"]
    return Arg({"type": kinds, "description": description}, required)


AGENT = Arg({"type": "string", "pattern": NAME_RULE,
             "description": "the agent (default: the server's --agent, else MEMSTACK_AGENT, else"
                            " memory.default_agent of memstack.yaml)"})

# Bounded answers (pages.py): a list tool hands out at most `limit` items, MCP_DEFAULT_LIMIT when not asked.
PAGE_LIMIT = Arg({"type": "integer", "minimum": 1, "maximum": MAX_LIMIT, "default": MCP_DEFAULT_LIMIT,
                  "description": f"at most this many items (default {MCP_DEFAULT_LIMIT}, at most {MAX_LIMIT}); a page"
                                 f" also ends before {MCP_MAX_BYTES // 1024} KiB of items"})
PAGE_CURSOR = Arg({"type": "string",
                   "description": "continue after the page whose next_cursor this is (pass it as is)"})


def page_arguments(arguments: dict[str, Any]) -> dict[str, Any]:
    """The arguments with the MCP page size when no limit was given, and the MCP page's byte budget."""
    return {**arguments, "limit": MCP_DEFAULT_LIMIT if arguments["limit"] is None else arguments["limit"],
            "max_bytes": MCP_MAX_BYTES}


_KINDS = {"string": "a string", "integer": "an integer", "number": "a number", "boolean": "true or false",
          "array": "a list", "object": "a JSON object", "null": "null"}


def described(schema: dict[str, Any]) -> str:
    """What a value of this schema is, in words, for a message."""
    kinds = schema["type"] if isinstance(schema["type"], list) else [schema["type"]]
    if kinds == ["array"] and schema.get("items", {}).get("type") == "string":
        return "a list of strings"
    return " or ".join(_KINDS[kind] for kind in kinds)


ANCHORS = Arg({"type": "array", "items": {"type": "string"}, "maxItems": 64,
               "description": "code anchors: files of the code repository this is about, each PATH, PATH:LINE or"
                              " PATH:START-END (from the repository's top)"}, False, [])
