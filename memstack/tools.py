"""The MCP tools: a registry of one entry per tool (name, description, argument schema, handler).

A handler takes the store and the checked arguments and returns the very
document the equivalent command prints with `--json`: it calls the command
module's `*_document` function, the one place that builds that document.
Arguments are the command's options with `_` for `-`. This module knows
nothing of the MCP SDK (`mcp_server.py` serves the registry), so it is cheap to
import and to test.

Checking is split as the command line splits it. Here, as argparse does: unknown
arguments, missing required ones, wrong JSON types. In the library, as for the
CLI: names, ranges, tiers and timestamps, refused with the CLI's own message
before anything is written. The schemas advertise those library rules too,
built from the library's own constants (NAME_RULE, TIERS).
"""

import copy
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from memstack.commands import binder as binder_cmd
from memstack.commands import boot as boot_cmd
from memstack.commands import capture as capture_cmd
from memstack.commands import fact as fact_cmd
from memstack.commands import handoff as handoff_cmd
from memstack.commands import intake as intake_cmd
from memstack.commands import recall as recall_cmd
from memstack.commands import related as related_cmd
from memstack.commands import soil as soil_cmd
from memstack.commands import status as status_cmd
from memstack.commands import sync as sync_cmd
from memstack.errors import MemstackError
from memstack.facts import RECALL_PREDICATES, TABLES
from memstack.intake import TIERS
from memstack.names import NAME_RULE
from memstack.pages import MCP_DEFAULT_LIMIT
from memstack.store import Store, locate, open_store

Handler = Callable[[Store, dict[str, Any]], Any]


# --- argument kinds: each is a JSON Schema fragment plus whether it is required and its default ---

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
                "description": f"{description}: integer ms since the epoch or ISO-8601 (e.g. 2026-11-30T12:00:00Z)"},
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


_KINDS = {"string": "a string", "integer": "an integer", "number": "a number", "boolean": "true or false",
          "array": "a list", "object": "a JSON object", "null": "null"}


def _kind(schema: dict[str, Any]) -> str:
    """What a value of this schema is, in words, for a message."""
    kinds = schema["type"] if isinstance(schema["type"], list) else [schema["type"]]
    if kinds == ["array"] and schema.get("items", {}).get("type") == "string":
        return "a list of strings"
    return " or ".join(_KINDS[kind] for kind in kinds)


# --- the registry ---

@dataclass(frozen=True)
class Tool:
    name: str
    description: str  # one line an agent can act on
    arguments: Mapping[str, Arg]
    handler: Handler
    read_only: bool = False
    optional_store: bool = False  # no store at all is a graceful answer (recall), the handler gets None
    reads_facts: bool = False  # the handler gets a readers.FactReader: the files, or the replica with `pg`
    schema: dict[str, Any] = field(init=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "schema", {
            "type": "object",
            "properties": {key: arg.schema for key, arg in self.arguments.items()},
            "required": [key for key, arg in self.arguments.items() if arg.required],
            "additionalProperties": False,
        })

    def check(self, arguments: Mapping[str, Any] | None) -> dict[str, Any]:
        """Every declared argument, given or defaulted; raises MemstackError on a structural mistake."""
        from jsonschema import Draft202012Validator

        # An optional argument given as null means "not given" (agents often send null for "unset").
        given = {k: v for k, v in (arguments or {}).items()
                 if v is not None or k not in self.arguments or self.arguments[k].required}
        unknown = sorted(set(given) - set(self.arguments))
        if unknown:
            raise MemstackError(f"unknown argument {unknown[0]!r}: {self.name} takes"
                                f" {', '.join(sorted(self.arguments))}")
        missing = [key for key, arg in self.arguments.items() if arg.required and key not in given]
        if missing:
            raise MemstackError(f"missing argument {missing[0]!r}: {self.name} needs"
                                f" {', '.join(k for k, a in self.arguments.items() if a.required)}")
        for error in Draft202012Validator(self.schema).iter_errors(given):
            if error.validator == "type":
                key = str(error.path[0])
                raise MemstackError(f"bad {key} {given[key]!r}: must be {_kind(self.arguments[key].schema)}")
        return {key: given[key] if key in given else copy.deepcopy(arg.default) for key, arg in self.arguments.items()}


TOOLS: dict[str, Tool] = {}


def register(tool: Tool) -> Tool:
    if tool.name in TOOLS:
        raise ValueError(f"tool {tool.name!r} is registered twice")
    TOOLS[tool.name] = tool
    return tool


def call(tool_name: str, arguments: Mapping[str, Any] | None, *, store: str | None = None,
         agent: str | None = None, pg: str | None = None) -> Any:
    """Run one tool as the CLI would run its verb; `store`, `agent` and `pg` (a DSN) are the server's options."""
    tool = TOOLS.get(tool_name)
    if tool is None:
        raise MemstackError(f"unknown tool {tool_name!r}: the tools are {', '.join(sorted(TOOLS))}")
    args = tool.check(arguments)
    if "agent" in args and args["agent"] is None:  # not given; "" is given, and refused as the CLI refuses it
        args["agent"] = agent
    if tool.reads_facts:
        from memstack.readers import fact_reader

        reader = fact_reader(store, pg, tool.optional_store)
        try:
            return tool.handler(reader, args)  # type: ignore[arg-type]
        finally:
            reader.close()
    if tool.optional_store:
        root = locate(store)
        return tool.handler(Store(root) if root else None, args)  # type: ignore[arg-type]
    return tool.handler(open_store(store), args)


# --- the tools whose library exists; each is one entry ---

register(Tool(
    "intake_write",
    "Record something you observed or learned in your append-only intake log (the next promotion routes it"
    " into the knowledge base); returns the record and the file it went to.",
    {"agent": AGENT,
     "content": text("what you observed or learned", required=True),
     "title": text("a short title", default=""),
     "source": text("where it came from (a URL, a file, a person)", default=""),
     "tier": Arg({"type": "string", "enum": list(TIERS), "default": "observed",
                  "description": "how sure the source is: " + ", ".join(TIERS)}, False, "observed"),
     "confidence": fraction("your confidence, in [0, 1]", default=0.5),
     "keyword": texts("keywords"),
     "tag": texts("tags (e.g. synthesis)"),
     "subject": text("a fact's subject (with predicate and object)"),
     "predicate": text("a fact's predicate (with subject and object)"),
     "object": text("a fact's object (with subject and predicate)"),
     "relevance_score": fraction("relevance of an external citation, in [0, 1]"),
     "created_at": timestamp("when it was observed (default: now)")},
    lambda store, a: intake_cmd.write_document(store, **a),
))

_COLLECTION = name("the SOIL collection, e.g. session", required=True)
_KEY = name("the record's key within the collection", required=True)

register(Tool(
    "soil_put",
    "Create or replace a session-scoped structured record (store/<collection>/<key>.json) holding any JSON value;"
    " returns the record.",
    {"collection": _COLLECTION, "key": _KEY, "value": json_value("the JSON value to keep", required=True)},
    lambda store, a: soil_cmd.write_document(store, "put", **a),
))

register(Tool(
    "soil_get",
    "Read one session-scoped structured record (value and timestamps); a missing or expired record is an error.",
    {"collection": _COLLECTION, "key": _KEY, "include_expired": flag("also return an expired record")},
    lambda store, a: soil_cmd.get_document(store, **a),
    read_only=True,
))

register(Tool(
    "soil_update",
    "Change an existing session-scoped record: a JSON object is merged key by key into an object value,"
    " anything else replaces the value; returns the record.",
    {"collection": _COLLECTION, "key": _KEY, "value": json_value("the change", required=True)},
    lambda store, a: soil_cmd.write_document(store, "update", **a),
))

register(Tool(
    "handoff_write",
    "Seal your end-of-session handoff: Markdown with a non-empty '## Open threads' section and a"
    " '## Capability table' Markdown table (front matter is added if absent); never overwrites an earlier one.",
    {"agent": AGENT, "text": text("the handoff Markdown (what `handoff write` reads from --file or stdin)",
                                  required=True)},
    lambda store, a: handoff_cmd.write_document(store, a["agent"], a["text"]),
))

register(Tool(
    "boot_show",
    "Start a session here: your boot anchor (the latest handoff's open threads and capabilities, and recent"
    " knowledge), as rebuilt by `memstack boot rebuild`.",
    {"agent": AGENT},
    lambda store, a: boot_cmd.show_document(store, a["agent"]),
    read_only=True,
))

_SUBJECT = text("the fact's subject", required=True)
_PREDICATE = text("the fact's predicate", required=True)
_OBJECT = text("the fact's object (its value)", required=True)
_RECORDED = timestamp("when the store learns it (default: now)")
_CONFIDENCE = fraction("confidence in [0, 1]", default=1.0)

register(Tool(
    "recall",
    f"What was decided or preferred about a subject: the facts valid at now_ts whose predicate is"
    f" {', '.join(RECALL_PREDICATES)}, most recent first; an empty store answers [].",
    {"subject": text("the subject", required=True),
     "now_ts": timestamp("the instant to recall at (default: now)"),
     "limit": integer("at most this many (default: memory.recall_limit, 50)")},
    lambda reader, a: recall_cmd.recall_document(reader, **a),
    read_only=True, optional_store=True, reads_facts=True,
))

register(Tool(
    "capture",
    "Record a decision (subject, predicate, object, valid from valid_from); with contradicts, first close the"
    " open fact of that subject and predicate at valid_from (it is kept). Returns [new, closed...].",
    {"subject": _SUBJECT, "predicate": _PREDICATE, "object": _OBJECT,
     "valid_from": timestamp("when it became true", required=True), "recorded_at": _RECORDED,
     "confidence": _CONFIDENCE, "agent": AGENT, "source": text("where it comes from (provenance)"),
     "contradicts": flag("close the fact it replaces")},
    lambda store, a: capture_cmd.capture_document(store, **a),
))

register(Tool(
    "fact_add",
    "Append a bi-temporal fact, valid from valid_from on (open-ended); returns [fact].",
    {"subject": _SUBJECT, "predicate": _PREDICATE, "object": _OBJECT,
     "valid_from": timestamp("when it became true", required=True), "recorded_at": _RECORDED,
     "confidence": _CONFIDENCE, "agent": AGENT, "source": text("where it comes from (provenance)"),
     "table": Arg({"type": "string", "enum": list(TABLES), "default": "knowledge",
                   "description": "the KB sub-tier: " + ", ".join(TABLES)}, False, "knowledge")},
    lambda store, a: fact_cmd.add_document(store, **a),
))

register(Tool(
    "fact_get_valid_at",
    "The facts valid at ts (valid_from <= ts < valid_to), optionally of one subject, optionally as the store"
    " believed at transaction time as_of.",
    {"ts": timestamp("the instant", required=True), "subject": text("only this subject"),
     "as_of": timestamp("answer as the store believed at this transaction time")},
    lambda reader, a: fact_cmd.get_valid_at_document(reader, **a),
    read_only=True, reads_facts=True,
))

register(Tool(
    "fact_history",
    "Every version of a subject's facts, superseded and current, oldest first.",
    {"subject": text("the subject", required=True)},
    lambda reader, a: fact_cmd.history_document(reader, **a),
    read_only=True, reads_facts=True,
))

register(Tool(
    "fact_invalidate",
    "Close the open fact(s) of a subject and predicate at valid_to (they are kept, never deleted); nothing open"
    " to close is an error. Returns the closed facts.",
    {"subject": _SUBJECT, "predicate": _PREDICATE, "valid_to": timestamp("when it stopped being true",
                                                                         required=True),
     "recorded_at": timestamp("when the closing is recorded (default: now)"),
     "object": text("close only the open fact with this object")},
    lambda store, a: fact_cmd.invalidate_document(store, **a),
))

register(Tool(
    "binder_list",
    "The intake records waiting for a human decision (routed to the Binder, not yet ratified or rejected),"
    " oldest first.",
    {},
    lambda store, a: binder_cmd.list_document(store),
    read_only=True,
))

register(Tool(
    "sync",
    "Share your memory with the other agents: commit what is uncommitted (through the hooks), merge the remote's"
    " memory, rebuild derived files, push; retried when the remote moved. Returns what was committed, merged"
    " and pushed; an error names why it could not (no remote, refused by a hook, a conflict).",
    {},
    lambda store, a: sync_cmd.sync_document(store),
))


# --- issue 17: the seed layers completed (SOIL graduation, Binder files and edges, related, status) ---

register(Tool(
    "soil_graduate",
    "Graduate a stable SOIL record to your intake (content: its value; source: its path; the next promotion"
    " routes it); the SOIL record is retired: expired and marked with the intake id, never deleted.",
    {"collection": _COLLECTION, "key": _KEY, "agent": AGENT,
     "subject": text("a fact's subject (with predicate and object)"),
     "predicate": text("a fact's predicate (with subject and object)"),
     "object": text("a fact's object (with subject and predicate)"),
     "tier": Arg({"type": "string", "enum": list(TIERS), "default": "observed",
                  "description": "how sure the source is: " + ", ".join(TIERS)}, False, "observed"),
     "confidence": fraction("your confidence, in [0, 1]", default=0.5)},
    lambda store, a: soil_cmd.graduate_document(store, **a),
))

_BY = text("who confirms it (default: git user.name, else the login name)")

register(Tool(
    "binder_file",
    "File a human-confirmed document (UTF-8 text) in the Binder: copied to kb/files/<sha256>[.ext] and entered"
    " in kb/binder.jsonl (append-only); returns the entry.",
    {"path": text("the document's path (relative to the server's working directory)", required=True),
     "by": _BY, "note": text("why it is filed")},
    lambda store, a: binder_cmd.file_document(store, **a),
))

register(Tool(
    "binder_edge",
    "Enter a human-confirmed relation between two subjects (from -relation-> to) in kb/binder.jsonl"
    " (append-only); returns the entry.",
    {"from": text("the subject the relation starts at", required=True),
     "to": text("the subject it ends at", required=True),
     "relation": text("how they relate, e.g. depends-on", required=True),
     "by": _BY, "note": text("why")},
    lambda store, a: binder_cmd.edge_document(store, source=a["from"], target=a["to"], relation=a["relation"],
                                              by=a["by"], note=a["note"]),
))

register(Tool(
    "related",
    "A subject's human-confirmed edges and its facts valid now whose object is another known subject, walked"
    " out to depth steps, nearest first; paged (next_cursor).",
    {"subject": text("the subject to start from", required=True),
     "depth": Arg({"type": "integer", "minimum": 1, "default": 1, "description": "steps to walk (1 to 5)"}, False, 1),
     "limit": Arg({"type": "integer", "minimum": 1, "default": MCP_DEFAULT_LIMIT,
                   "description": "at most this many items"}, False, MCP_DEFAULT_LIMIT),
     "cursor": text("continue after a previous page (its next_cursor)")},
    lambda store, a: related_cmd.related_document(store, **a),
    read_only=True,
))

register(Tool(
    "status",
    "Where the store stands: pending intake per agent, Binder items waiting, stale derived files, uncommitted"
    " memory, the last promotion, whether the fact index is in step.",
    {},
    lambda store, a: status_cmd.status_document(store),
    read_only=True,
))
