"""The MCP tools: a registry of one entry per tool (name, description, argument schema, handler, and the
three fields no tool may lack: `title`, `output` (the JSON Schema of its document) and `hints` (the four MCP
annotations); docs/agents.md).

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
built from the library's own constants (NAME_RULE, TIERS). The library's messages
name the CLI's options and commands; `speak` puts them in the tools' words.
"""

import copy
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from memstack.api import binder as binder_api
from memstack.api import boot as boot_api
from memstack.api import capture as capture_api
from memstack.api import fact as fact_api
from memstack.api import handoff as handoff_api
from memstack.api import intake as intake_api
from memstack.api import promote as promote_api
from memstack.api import readers
from memstack.api import recall as recall_api
from memstack.api import related as related_api
from memstack.api import search as search_api
from memstack.api import soil as soil_api
from memstack.api import status as status_api
from memstack.api import sync as sync_api
from memstack.base.errors import MemstackError
from memstack.base.names import NAME_RULE
from memstack.base.pages import MAX_LIMIT, MCP_DEFAULT_LIMIT, MCP_MAX_BYTES
from memstack.intake.log import TIERS
from memstack.kb.facts import RECALL_PREDICATES, TABLES
from memstack.repo.store import Store, locate, open_store
from memstack.search.records import LAYERS

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


_KINDS = {"string": "a string", "integer": "an integer", "number": "a number", "boolean": "true or false",
          "array": "a list", "object": "a JSON object", "null": "null"}


def _kind(schema: dict[str, Any]) -> str:
    """What a value of this schema is, in words, for a message."""
    kinds = schema["type"] if isinstance(schema["type"], list) else [schema["type"]]
    if kinds == ["array"] and schema.get("items", {}).get("type") == "string":
        return "a list of strings"
    return " or ".join(_KINDS[kind] for kind in kinds)


# --- what a tool returns: the JSON Schema of its document, built from schemas/ (one definition each) ---

_SHAPE = ("type", "required", "properties", "items", "enum", "const", "anyOf", "oneOf")


def _shape(schema: Any) -> Any:
    """A schema's structure only: types, required keys, enums. The record was checked in full when written;
    every byte here is read by the agent in tools/list."""
    if not isinstance(schema, dict):
        return schema
    kept: dict[str, Any] = {}
    for key, value in schema.items():
        if key == "properties":
            kept[key] = {name: _shape(sub) for name, sub in value.items()}
        elif key in ("items",):
            kept[key] = _shape(value)
        elif key in ("anyOf", "oneOf"):
            kept[key] = [_shape(sub) for sub in value]
        elif key in _SHAPE:
            kept[key] = copy.deepcopy(value)
    return kept


def record(kind: str) -> dict[str, Any]:
    """The schema of a record as a document carries it: the structure of schemas/<kind>.schema.json, open to
    added fields (a document may show more than the file holds, e.g. ISO times beside ms)."""
    from memstack.base import schemas

    return {"description": f"a {kind} record (schemas/{kind}.schema.json)", **_shape(schemas.schema(kind))}


def listing(item: dict[str, Any], description: str) -> dict[str, Any]:
    return {"type": "array", "items": item, "description": description}


def document(description: str, required: Mapping[str, Any], optional: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """An object document: `required` keys always present, `optional` ones sometimes."""
    return {"type": "object", "description": description, "required": list(required),
            "properties": {**required, **(optional or {})}}


STRING: dict[str, Any] = {"type": "string"}
STRINGS: dict[str, Any] = {"type": "array", "items": {"type": "string"}}
CHANGED = document("the derived files rewritten (store-relative paths; empty: already fresh)", {"changed": STRINGS})


def paged_output(item: dict[str, Any], what: str) -> dict[str, Any]:
    return document(f"one page of {what}", {
        "items": listing(item, what),
        "next_cursor": {"type": ["string", "null"], "description": "pass as cursor for the next page; null: no more"},
        "remaining": {"type": "integer", "minimum": 0, "description": "how many items follow this page"}})




# --- the registry ---

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
        reader = readers.fact_reader(store, pg, tool.optional_store)
        try:
            return tool.handler(reader, args)  # type: ignore[arg-type]
        finally:
            reader.close()
    if tool.optional_store:
        root = locate(store)
        return tool.handler(Store(root) if root else None, args)  # type: ignore[arg-type]
    return tool.handler(open_store(store), args)



# --- the library's messages in MCP's words ---

_FLAG = re.compile(r"--([a-z][a-z0-9-]*)")
_COMMAND = re.compile(r"`(?:memstack )?([a-z][a-z-]*)(?: ([a-z][a-z-]*))?([^`]*)`")
_METAVAR = re.compile(r"\b[A-Z][A-Z_]*\b")


def _as_tool(match: re.Match[str]) -> str:
    first, second, rest = match.group(1), match.group(2), match.group(3)
    for words, tail in (((first, second), rest), ((first,), f" {second}{rest}" if second else rest)):
        if None not in words and "_".join(words).replace("-", "_") in TOOLS:
            args = re.sub(r"--([a-z][a-z0-9-]*) ?", lambda m: m.group(1).replace("-", "_") + "=", tail)
            return f"`{'_'.join(words).replace('-', '_')}{args}`"
    return match.group(0)


def speak(message: str, tool: Tool | None = None) -> str:
    """A library message (written for the command line) in the words of an MCP client, translated here
    once rather than in every message: a command in backticks becomes its tool (`memstack boot rebuild`
    -> `boot_rebuild`), an option its argument (--now-ts -> now_ts, created-at -> created_at), a
    positional's metavar its argument (ID -> id), and --store the server's own option."""
    message = _COMMAND.sub(_as_tool, message)
    message = message.replace("pass --store PATH", "start `memstack mcp` with --store PATH")
    message = _FLAG.sub(lambda m: m.group(0) if m.group(1) == "store" else m.group(1).replace("-", "_"), message)
    if tool is not None:
        for key in tool.arguments:
            if "_" in key:
                message = re.sub(rf"\b{key.replace('_', '-')}\b", key, message)
        message = _METAVAR.sub(lambda m: m.group(0).lower() if m.group(0).lower() in tool.arguments else m.group(0),
                               message)
    return message

# --- the tools; each is one entry ---

INTAKE = record("intake")
FACT = record("fact")
FACTS = listing(FACT, "facts (times in ms since the epoch)")
PAGED_FACTS = paged_output(FACT, "facts (times in ms since the epoch)")
PAGED_FACTS_NOTE = {**PAGED_FACTS, "properties": {**PAGED_FACTS["properties"], "note": {
    "type": "string", "description": "why nothing was recalled (other predicates, records in the Binder)"}}}
SOIL = record("soil")
DECISION = record("binder")
HANDOFF_SEALED = document("the sealed handoff", {
    "path": STRING, "agent": STRING, "date": STRING, "session": STRING, "open_threads": STRINGS})

register(Tool(
    "intake_write",
    "Record something you observed or learned in your append-only intake log; the next promotion routes it"
    " (tier verified or ratified with confidence >= 0.8 becomes knowledge, a citation with relevance_score"
    " >= 0.5 jeles_atoms, the rest waits in the Binder for a human). Returns the record and the file it went to.",
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
    lambda store, a: intake_api.write_document(store, **a),
    title="Write to intake",
    output=document("the record written", {"path": STRING, "record": INTAKE}),
    hints=APPENDS,
))

_COLLECTION = name("the SOIL collection, e.g. session", required=True)
_KEY = name("the record's key within the collection", required=True)

register(Tool(
    "soil_put",
    "Create or replace a session-scoped structured record (store/<collection>/<key>.json) holding any JSON value;"
    " returns the record.",
    {"collection": _COLLECTION, "key": _KEY, "value": json_value("the JSON value to keep", required=True)},
    lambda store, a: soil_api.write_document(store, "put", **a),
    title="Put a SOIL record", output=SOIL, hints=REPLACES,
))

register(Tool(
    "soil_get",
    "Read one session-scoped structured record (value and timestamps); a missing or expired record is an error.",
    {"collection": _COLLECTION, "key": _KEY, "include_expired": flag("also return an expired record")},
    lambda store, a: soil_api.get_document(store, **a),
    title="Get a SOIL record", output=SOIL, hints=READS,
))

register(Tool(
    "soil_update",
    "Change an existing session-scoped record: a JSON object is merged key by key into an object value,"
    " anything else replaces the value; returns the record.",
    {"collection": _COLLECTION, "key": _KEY, "value": json_value("the change", required=True)},
    lambda store, a: soil_api.write_document(store, "update", **a),
    title="Update a SOIL record", output=SOIL, hints=REPLACES,
))

register(Tool(
    "handoff_write",
    "Seal your end-of-session handoff: Markdown with a non-empty '## Open threads' section and a"
    " '## Capability table' Markdown table (front matter is added if absent); never overwrites an earlier one."
    " Then call boot_rebuild so your next session boots from it.",
    {"agent": AGENT, "text": text("the handoff Markdown (what `handoff write` reads from --file or stdin)",
                                  required=True)},
    lambda store, a: handoff_api.write_document(store, a["agent"], a["text"]),
    title="Seal a handoff", output=HANDOFF_SEALED, hints=APPENDS,
))

register(Tool(
    "boot_show",
    "Start a session here: your boot anchor (the latest handoff's open threads and capabilities, and recent"
    " knowledge). It is derived: after a new handoff or promotion call boot_rebuild first; no anchor yet is an"
    " error saying so.",
    {"agent": AGENT},
    lambda store, a: boot_api.show_document(store, a["agent"]),
    title="Show the boot anchor", output=record("anchor"), hints=READS,
))

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


_SUBJECT = text("the fact's subject", required=True)
_PREDICATE = text("the fact's predicate", required=True)
_OBJECT = text("the fact's object (its value)", required=True)
_RECORDED = timestamp("when the store learns it (default: now)")
_CONFIDENCE = fraction("confidence in [0, 1]", default=1.0)

register(Tool(
    "recall",
    f"Before planning, ask what was decided or preferred about a subject: the facts valid at now_ts whose"
    f" predicate is {', '.join(RECALL_PREDICATES)}, most recent first; a page at a time ({{items, next_cursor, remaining}}); an empty answer carries a note when the subject holds other facts or records waiting in the Binder. Treat them as"
    f" settled unless you mean to supersede one (capture with contradicts).",
    {"subject": text("the subject", required=True),
     "now_ts": timestamp("the instant to recall at (default: now)"),
     "limit": PAGE_LIMIT, "cursor": PAGE_CURSOR},
    lambda reader, a: recall_api.recall_document(
        reader, **page_arguments({**a, "limit": min(reader.recall_limit(), MCP_DEFAULT_LIMIT) if a["limit"] is None
                                  else a["limit"]})),
    title="Recall decisions", output=PAGED_FACTS_NOTE, hints=READS, optional_store=True, reads_facts=True,
))

register(Tool(
    "capture",
    "Record a decision (subject, predicate such as decided/chose/pattern/prefers, object, valid from"
    " valid_from); with contradicts, first close the open fact of that subject and predicate at valid_from (it"
    " is kept, as_of still sees it). Returns [new, closed...].",
    {"subject": _SUBJECT, "predicate": _PREDICATE, "object": _OBJECT,
     "valid_from": timestamp("when it became true (default: now)"), "recorded_at": _RECORDED,
     "confidence": _CONFIDENCE, "agent": AGENT, "source": text("where it comes from (provenance)"),
     "contradicts": flag("close the fact it replaces")},
    lambda store, a: capture_api.capture_document(store, **a),
    title="Capture a decision", output=FACTS, hints=CLOSES,
))

register(Tool(
    "fact_add",
    "Append a bi-temporal fact, valid from valid_from on (open-ended), without closing anything; returns [fact].",
    {"subject": _SUBJECT, "predicate": _PREDICATE, "object": _OBJECT,
     "valid_from": timestamp("when it became true (default: now)"), "recorded_at": _RECORDED,
     "confidence": _CONFIDENCE, "agent": AGENT, "source": text("where it comes from (provenance)"),
     "table": Arg({"type": "string", "enum": list(TABLES), "default": "knowledge",
                   "description": "the KB sub-tier: " + ", ".join(TABLES)}, False, "knowledge")},
    lambda store, a: fact_api.add_document(store, **a),
    title="Add a fact", output=FACTS, hints=APPENDS,
))

register(Tool(
    "fact_get_valid_at",
    "The facts valid at ts (valid_from <= ts < valid_to), optionally of one subject, optionally as the store"
    " believed at transaction time as_of; every predicate, not only recall's; a page at a time ({items, next_cursor, remaining}).",
    {"ts": timestamp("the instant", required=True), "subject": text("only this subject"),
     "as_of": timestamp("answer as the store believed at this transaction time"), "limit": PAGE_LIMIT,
     "cursor": PAGE_CURSOR},
    lambda reader, a: fact_api.get_valid_at_document(reader, **page_arguments(a)),
    title="Facts valid at a time", output=PAGED_FACTS, hints=READS, reads_facts=True,
))

register(Tool(
    "fact_history",
    "Every version of a subject's facts, superseded and current, oldest first; a page at a time"
    " ({items, next_cursor, remaining}).",
    {"subject": text("the subject", required=True), "limit": PAGE_LIMIT, "cursor": PAGE_CURSOR},
    lambda reader, a: fact_api.history_document(reader, **page_arguments(a)),
    title="A subject's fact history", output=PAGED_FACTS, hints=READS, reads_facts=True,
))

register(Tool(
    "fact_invalidate",
    "Close the open fact(s) of a subject and predicate at valid_to (they are kept, never deleted); nothing open"
    " to close is an error. Returns the closed facts.",
    {"subject": _SUBJECT, "predicate": _PREDICATE, "valid_to": timestamp("when it stopped being true (default: now)"),
     "recorded_at": timestamp("when the closing is recorded (default: now)"),
     "object": text("close only the open fact with this object")},
    lambda store, a: fact_api.invalidate_document(store, **a),
    title="Invalidate a fact", output=FACTS, hints=CLOSES,
))

DISPUTE = document("two agents' facts that closed one predecessor differently", {
    "kind": {"const": "dispute"}, "id": STRING, "subject": STRING, "predicate": STRING,
    "predecessor": {"type": ["object", "null"]}, "kept_closing": {"type": ["string", "null"]},
    "sides": FACTS, "created_at": STRING})
PAGED_WAITING = paged_output({"anyOf": [INTAKE, DISPUTE]}, "intake records waiting for a human, then disagreements")

register(Tool(
    "binder_list",
    "The intake records waiting for a human decision (routed to the Binder, not yet ratified or rejected),"
    " oldest first, then the disagreements between agents (kind dispute). A page at a time ({items, next_cursor, remaining}). Decide with binder_ratify or"
    " binder_reject when a human has said which.",
    {"limit": PAGE_LIMIT, "cursor": PAGE_CURSOR},
    lambda store, a: binder_api.list_document(store, **page_arguments(a)),
    title="The Binder queue", output=PAGED_WAITING, hints=READS,
))

register(Tool(
    "sync",
    "Share your memory with the other agents: commit what is uncommitted (through the hooks), merge the remote's"
    " memory, rebuild derived files, push; retried when the remote moved. Returns what was committed, merged"
    " and pushed; an error names why it could not (no remote, refused by a hook, a conflict).",
    {},
    lambda store, a: sync_api.sync_document(store),
    title="Sync with the remote",
    output=document("what the sync did", {
        "ok": {"type": "boolean"}, "remote": STRING, "branch": STRING,
        "committed": {"type": ["object", "null"]}, "also_committed": {"type": "array"},
        "pulls": {"type": "array"}, "rebuilt": {"type": "array"}, "pushed": {"type": ["string", "null"]},
        "attempts": {"type": "integer"}}),
    hints=Hints(read_only=False, destructive=False, idempotent=False, open_world=True),
))

register(Tool(
    "boot_rebuild",
    "Rebuild the boot files (every agent's session_anchor_<agent>.json and willow.md, or only agent's anchor"
    " and willow.md) from the latest handoffs and the knowledge base: call it after handoff_write or promote,"
    " before boot_show. Returns the files that changed.",
    {"agent": Arg({"type": "string", "pattern": NAME_RULE,
                   "description": "only this agent's anchor (willow.md is always rebuilt); default: every agent"})},
    lambda store, a: boot_api.rebuild_document(store, a["agent"]),
    title="Rebuild the boot context", output=CHANGED, hints=DERIVES,
))

register(Tool(
    "promote",
    "Run the norn-pass: route every pending intake record (knowledge, jeles_atoms, opus_atoms, or the Binder for"
    " a human), append the facts (superseding a contradicted valid fact), rebuild the views, and make one git"
    " commit. dry_run shows the routing and writes nothing. Returns what moved.",
    {"now_ts": timestamp("the promotion's time, written in the ledger (default: now)"),
     "dry_run": flag("show the routing, write nothing"),
     "no_commit": flag("write the files, leave committing to git")},
    lambda store, a: promote_api.promote_document(store, **a),
    title="Promote intake",
    output=document("what the promotion routed (with dry_run: what it would route)", {
        "dry_run": {"type": "boolean"}, "routed": {"type": "object", "additionalProperties": {"type": "integer"}},
        "ratified": {"type": "integer"}}, {
        "records": {"type": "array"}, "superseded": {"type": "integer"}, "facts_added": {"type": "integer"},
        "changed": STRINGS, "commit": {"type": ["string", "null"]}, "message": STRING}),
    hints=Hints(read_only=False, destructive=True, idempotent=True, open_world=False),
))

register(Tool(
    "intake_list",
    "List intake records, oldest first, a page at a time (50 unless limit says otherwise; next_cursor"
    " continues): yours or every agent's, optionally only those not yet promoted (pending).",
    {"agent": Arg({"type": "string", "pattern": NAME_RULE, "description": "only this agent's (default: every agent)"}),
     "pending": flag("only records not yet promoted"), "limit": PAGE_LIMIT, "cursor": PAGE_CURSOR},
    lambda store, a: intake_api.list_document(store, **page_arguments(a)),
    title="List intake", output=paged_output(INTAKE, "intake records"), hints=READS,
))

register(Tool(
    "soil_list",
    "List a SOIL collection's live records by key, a page at a time (50 unless limit says otherwise;"
    " next_cursor continues); include_expired adds the expired ones.",
    {"collection": _COLLECTION, "include_expired": flag("also list expired records"),
     "limit": PAGE_LIMIT, "cursor": PAGE_CURSOR},
    lambda store, a: soil_api.list_document(store, **page_arguments(a)),
    title="List SOIL records", output=paged_output(SOIL, "SOIL records"), hints=READS,
))

register(Tool(
    "soil_expire",
    "Mark a session-scoped record expired at `at` (default now); it is kept (soil_get with include_expired"
    " still reads it). Returns the record.",
    {"collection": _COLLECTION, "key": _KEY, "at": timestamp("when it expires (default: now)")},
    lambda store, a: soil_api.expire_document(store, **a),
    title="Expire a SOIL record", output=SOIL, hints=REPLACES,
))

register(Tool(
    "handoff_show",
    "Read your latest sealed handoff in full (front matter, open threads, capability table, text); none yet"
    " is an error saying so.",
    {"agent": AGENT},
    lambda store, a: handoff_api.show_document(store, a["agent"]),
    title="Show the latest handoff",
    output=document("the latest handoff", {
        "path": STRING, "front_matter": {"type": "object"}, "open_threads": STRINGS,
        "capabilities": {"type": "array", "items": {"type": "object"}}, "text": STRING}),
    hints=READS,
))

_DECIDE_ARGS = {
    "id": text("the waiting intake record's id, or one side's fact id of a dispute (from binder_list)",
               required=True),
    "by": text("who decides: the human's name (default: git user.name, else the login name)"),
    "note": text("why"),
}
_DECIDED = {**DECISION, "properties": {**DECISION["properties"], "closed": STRINGS}}

register(Tool(
    "binder_ratify",
    "Record a human's ratification of a Binder record (the next promote makes it knowledge at tier ratified)"
    " or of one side of a dispute (the other sides are closed). Only on a human's word: an agent does not"
    " ratify its own records. Appends to kb/binder.jsonl; returns the decision.",
    _DECIDE_ARGS,
    lambda store, a: binder_api.decide_document(store, "ratify", **a),
    title="Ratify (human decision)", output=_DECIDED, hints=APPENDS,
))

register(Tool(
    "binder_reject",
    "Record a human's rejection of a Binder record (it stays in the audit trail and is never routed again) or"
    " of one side of a dispute. Only on a human's word. Appends to kb/binder.jsonl; returns the decision.",
    _DECIDE_ARGS,
    lambda store, a: binder_api.decide_document(store, "reject", **a),
    title="Reject (human decision)", output=_DECIDED, hints=APPENDS,
))

# --- search (issue 14) ---


register(Tool(
    "search",
    "Find memories by words (ranked full-text search, BM25, stemmed: 'deploys' finds 'deployment') across"
    " facts, intake, handoffs and SOIL records. Each hit says its layer, where it lives (path:line, id), a"
    " snippet with the matched words in **bold**, its score and, for a fact, its validity window. Returns"
    f" {{hits, matched, next_cursor, remaining}}; at most limit hits (default {MCP_DEFAULT_LIMIT}), pass"
    " next_cursor as cursor for more.",
    {"query": text("the words to look for (free text; every word must match, else any; word* a prefix)",
                   required=True),
     "layer": Arg({"type": "array", "items": {"type": "string", "enum": list(LAYERS)},
                   "description": "only these layers: " + ", ".join(LAYERS)}, False, []),
     "agent": name("only records written by this agent"),
     "tier": Arg({"type": "string", "enum": list(TIERS), "description": "only records of this tier: "
                  + ", ".join(TIERS)}),
     "table": Arg({"type": "string", "enum": list(TABLES), "description": "only facts of this KB sub-tier: "
                   + ", ".join(TABLES)}),
     "valid_at": timestamp("only facts valid at this instant (or 'now')"),
     "as_of": timestamp("as the store knew it at this transaction time (or 'now')"),
     "limit": Arg({"type": "integer", "minimum": 1, "maximum": MAX_LIMIT, "default": MCP_DEFAULT_LIMIT,
                   "description": f"at most this many hits (default {MCP_DEFAULT_LIMIT})"}, False,
                  MCP_DEFAULT_LIMIT),
     "cursor": text("the next_cursor of the previous page, to continue")},
    lambda store, a: search_api.search_document(store, **a),
    title="Search memory",
    output=document("ranked hits, best first", {
        "query": STRING,
        "matched": {"type": "string", "enum": ["all words", "any word"], "description": "any word: no record held them all"},
        "hits": listing(document("one hit", {
            "layer": {"type": "string", "enum": list(LAYERS)}, "path": STRING,
            "line": {"type": ["integer", "null"]}, "where": STRING, "title": {"type": ["string", "null"]},
            "snippet": STRING, "score": {"type": "number"}, "agent": {"type": ["string", "null"]}}, {
            "id": STRING, "section": STRING, "tier": STRING, "table": STRING, "valid_from": {"type": "integer"},
            "valid_to": {"type": ["integer", "null"]}, "valid_from_iso": STRING,
            "valid_to_iso": {"type": ["string", "null"]}}), "the hits of this page"),
        "next_cursor": {"type": ["string", "null"], "description": "pass as cursor for the next page; null: no more"},
        "remaining": {"type": "integer", "minimum": 0, "description": "how many hits follow this page"}}),
    hints=READS,
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
    lambda store, a: soil_api.graduate_document(store, **a),
    title="Graduate a SOIL record to intake",
    output=document("the intake record written and the retired SOIL record", {
        "intake": document("the record written", {"path": STRING, "record": INTAKE}), "soil": SOIL}),
    hints=CLOSES,
))

_BY = text("who confirms it (default: git user.name, else the login name)")

register(Tool(
    "binder_file",
    "File a human-confirmed document (UTF-8 text) in the Binder: copied to kb/files/<sha256>[.ext] and entered"
    " in kb/binder.jsonl (append-only); returns the entry.",
    {"path": text("the document's path (relative to the server's working directory)", required=True),
     "by": _BY, "note": text("why it is filed")},
    lambda store, a: binder_api.file_document(store, **a),
    title="File a confirmed document", output=record("binder"), hints=APPENDS,
))

register(Tool(
    "binder_edge",
    "Enter a human-confirmed relation between two subjects (from -relation-> to) in kb/binder.jsonl"
    " (append-only); returns the entry.",
    {"from": text("the subject the relation starts at", required=True),
     "to": text("the subject it ends at", required=True),
     "relation": text("how they relate, e.g. depends-on", required=True),
     "by": _BY, "note": text("why")},
    lambda store, a: binder_api.edge_document(store, source=a["from"], target=a["to"], relation=a["relation"],
                                              by=a["by"], note=a["note"]),
    title="Enter a confirmed relation", output=record("binder"), hints=APPENDS,
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
    lambda store, a: related_api.related_document(store, **a),
    title="Related subjects",
    output={**paged_output(document("an edge or a fact reaching another subject", {
        "kind": {"type": "string", "enum": ["edge", "fact"]}, "depth": {"type": "integer"}, "from": STRING,
        "relation": STRING, "to": STRING, "id": {"type": ["string", "null"]}}), "edges and facts, nearest first")},
    hints=READS,
))

register(Tool(
    "status",
    "Where the store stands: pending intake per agent, Binder items waiting, stale derived files, uncommitted"
    " memory, the last promotion, whether the fact index is in step.",
    {},
    lambda store, a: status_api.status_document(store),
    title="Store status",
    output=document("where the store stands", {
        "store": STRING, "pending_intake": {"type": "object"}, "pending_total": {"type": "integer"},
        "binder_waiting": {"type": ["object", "null"]}, "stale": {}, "uncommitted": {"type": ["array", "null"]},
        "last_promotion": {"type": ["object", "null"]}, "index": {"type": ["object", "null"]}}),
    hints=READS,
))
