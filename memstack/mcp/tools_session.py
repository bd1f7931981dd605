"""The tools of what an agent keeps during and across its sessions: intake, SOIL records, handoffs,
the boot anchor; each one entry (`registry.Tool`), listed in `tools.py`."""

from memstack.api import boot as boot_api
from memstack.api import handoff as handoff_api
from memstack.api import intake as intake_api
from memstack.api import soil as soil_api
from memstack.base.names import NAME_RULE
from memstack.intake.log import WRITABLE_TIERS
from memstack.mcp.arguments import (
                                    AGENT,
                                    ANCHORS,
                                    PAGE_CURSOR,
                                    PAGE_LIMIT,
                                    Arg,
                                    flag,
                                    fraction,
                                    json_value,
                                    name,
                                    page_arguments,
                                    text,
                                    texts,
                                    timestamp,
)
from memstack.mcp.documents import (
                                    CHANGED,
                                    INTAKE,
                                    STRING,
                                    STRINGS,
                                    document,
                                    paged_output,
                                    record,
)
from memstack.mcp.registry import APPENDS, CLOSES, DERIVES, READS, REPLACES, Tool

SOIL = record("soil")
HANDOFF_SEALED = document("the sealed handoff", {
    "path": STRING, "agent": STRING, "date": STRING, "session": STRING, "open_threads": STRINGS})
_COLLECTION = name("the SOIL collection, e.g. session", required=True)
_KEY = name("the record's key within the collection", required=True)

INTAKE_WRITE = Tool(
    "intake_write",
    "Record something you observed or learned in your append-only intake log; the next promotion routes it"
    " (tier verified or ratified with confidence >= 0.8 becomes knowledge, a citation with relevance_score"
    " >= 0.5 jeles_atoms, the rest waits in the Binder for a human). Returns the record and the file it went to.",
    {"agent": AGENT,
     "content": text("what you observed or learned", required=True),
     "title": text("a short title", default=""),
     "source": text("where it came from (a URL, a file, a person)", default=""),
     "tier": Arg({"type": "string", "enum": list(WRITABLE_TIERS), "default": "observed",
                  "description": "how sure the source is: " + ", ".join(WRITABLE_TIERS)
                  + " (ratified: only a person's Binder ratification)"}, False, "observed"),
     "confidence": fraction("your confidence, in [0, 1]", default=0.5),
     "keyword": texts("keywords"),
     "tag": texts("tags (e.g. synthesis)"),
     "subject": text("a fact's subject (with predicate and object)"),
     "predicate": text("a fact's predicate (with subject and object)"),
     "object": text("a fact's object (with subject and predicate)"),
     "relevance_score": fraction("relevance of an external citation, in [0, 1]"),
     "created_at": timestamp("when it was observed (default: now)"),
     "anchor": ANCHORS},
    lambda store, a: intake_api.write_document(store, **a),
    title="Write to intake",
    output=document("the record written", {"path": STRING, "record": INTAKE}),
    hints=APPENDS,
)

INTAKE_LIST = Tool(
    "intake_list",
    "List intake records, oldest first, a page at a time (50 unless limit says otherwise; next_cursor"
    " continues): yours or every agent's, optionally only those not yet promoted (pending).",
    {"agent": Arg({"type": "string", "pattern": NAME_RULE, "description": "only this agent's (default: every agent)"}),
     "pending": flag("only records not yet promoted"), "limit": PAGE_LIMIT, "cursor": PAGE_CURSOR},
    lambda store, a: intake_api.list_document(store, **page_arguments(a)),
    title="List intake", output=paged_output(INTAKE, "intake records"), hints=READS,
)

SOIL_PUT = Tool(
    "soil_put",
    "Create or replace a session-scoped structured record (store/<collection>/<key>.json) holding any JSON value;"
    " returns the record.",
    {"collection": _COLLECTION, "key": _KEY, "value": json_value("the JSON value to keep", required=True)},
    lambda store, a: soil_api.write_document(store, "put", **a),
    title="Put a SOIL record", output=SOIL, hints=REPLACES,
)

SOIL_GET = Tool(
    "soil_get",
    "Read one session-scoped structured record (value and timestamps); a missing or expired record is an error.",
    {"collection": _COLLECTION, "key": _KEY, "include_expired": flag("also return an expired record")},
    lambda store, a: soil_api.get_document(store, **a),
    title="Get a SOIL record", output=SOIL, hints=READS,
)

SOIL_UPDATE = Tool(
    "soil_update",
    "Change an existing session-scoped record: a JSON object is merged key by key into an object value,"
    " anything else replaces the value; returns the record.",
    {"collection": _COLLECTION, "key": _KEY, "value": json_value("the change", required=True)},
    lambda store, a: soil_api.write_document(store, "update", **a),
    title="Update a SOIL record", output=SOIL, hints=REPLACES,
)

SOIL_LIST = Tool(
    "soil_list",
    "List a SOIL collection's live records by key, a page at a time (50 unless limit says otherwise;"
    " next_cursor continues); include_expired adds the expired ones.",
    {"collection": _COLLECTION, "include_expired": flag("also list expired records"),
     "limit": PAGE_LIMIT, "cursor": PAGE_CURSOR},
    lambda store, a: soil_api.list_document(store, **page_arguments(a)),
    title="List SOIL records", output=paged_output(SOIL, "SOIL records"), hints=READS,
)

SOIL_EXPIRE = Tool(
    "soil_expire",
    "Mark a session-scoped record expired at `at` (default now); it is kept (soil_get with include_expired"
    " still reads it). Returns the record.",
    {"collection": _COLLECTION, "key": _KEY, "at": timestamp("when it expires (default: now)")},
    lambda store, a: soil_api.expire_document(store, **a),
    title="Expire a SOIL record", output=SOIL, hints=REPLACES,
)

SOIL_GRADUATE = Tool(
    "soil_graduate",
    "Graduate a stable SOIL record to your intake (content: its value; source: its path; the next promotion"
    " routes it); the SOIL record is retired: expired and marked with the intake id, never deleted.",
    {"collection": _COLLECTION, "key": _KEY, "agent": AGENT,
     "subject": text("a fact's subject (with predicate and object)"),
     "predicate": text("a fact's predicate (with subject and object)"),
     "object": text("a fact's object (with subject and predicate)"),
     "tier": Arg({"type": "string", "enum": list(WRITABLE_TIERS), "default": "observed",
                  "description": "how sure the source is: " + ", ".join(WRITABLE_TIERS)
                  + " (ratified: only a person's Binder ratification)"}, False, "observed"),
     "confidence": fraction("your confidence, in [0, 1]", default=0.5)},
    lambda store, a: soil_api.graduate_document(store, **a),
    title="Graduate a SOIL record to intake",
    output=document("the intake record written and the retired SOIL record", {
        "intake": document("the record written", {"path": STRING, "record": INTAKE}), "soil": SOIL}),
    hints=CLOSES,
)

HANDOFF_WRITE = Tool(
    "handoff_write",
    "Seal your end-of-session handoff: Markdown with a non-empty '## Open threads' section and a"
    " '## Capability table' Markdown table (front matter is added if absent); never overwrites an earlier one."
    " Then call boot_rebuild so your next session boots from it.",
    {"agent": AGENT, "text": text("the handoff Markdown (what `handoff write` reads from --file or stdin)",
                                  required=True)},
    lambda store, a: handoff_api.write_document(store, a["agent"], a["text"]),
    title="Seal a handoff", output=HANDOFF_SEALED, hints=APPENDS,
)

HANDOFF_SHOW = Tool(
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
)

BOOT_SHOW = Tool(
    "boot_show",
    "Start a session here: your boot anchor (the latest handoff's open threads and capabilities, and recent"
    " knowledge; to_reverify: your facts whose code anchors drifted or are gone, to re-check against the code"
    " before relying on them). It is derived: after a new handoff or promotion call boot_rebuild first; no"
    " anchor yet is an error saying so.",
    {"agent": AGENT},
    lambda store, a: boot_api.show_document(store, a["agent"]),
    title="Show the boot anchor", output=record("anchor"), hints=READS,
)

BOOT_REBUILD = Tool(
    "boot_rebuild",
    "Rebuild the boot files (every agent's session_anchor_<agent>.json and willow.md, or only agent's anchor"
    " and willow.md) from the latest handoffs and the knowledge base: call it after handoff_write or promote,"
    " before boot_show. Returns the files that changed.",
    {"agent": Arg({"type": "string", "pattern": NAME_RULE,
                   "description": "only this agent's anchor (willow.md is always rebuilt); default: every agent"})},
    lambda store, a: boot_api.rebuild_document(store, a["agent"]),
    title="Rebuild the boot context", output=CHANGED, hints=DERIVES,
)
