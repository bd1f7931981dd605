"""The tools of the Binder, where humans decide: the queue, ratify and reject, filed documents, confirmed
edges, and the subjects they relate; each one entry (`registry.Tool`), listed in `tools.py`."""

from memstack.api import binder as binder_api
from memstack.api import related as related_api
from memstack.kb.edges import MAX_DEPTH
from memstack.mcp.arguments import PAGE_CURSOR, PAGE_LIMIT, Arg, page_arguments, text
from memstack.mcp.documents import (
    FACTS,
    INTAKE,
    STRING,
    STRINGS,
    document,
    listing,
    paged_output,
    record,
)
from memstack.mcp.registry import APPENDS, READS, Tool

DECISION = record("binder")
DISPUTE = document("two agents' facts that closed one predecessor differently, or facts promoted in different clones"
                   " open at once (predecessor null, id the oldest side's)", {
    "kind": {"const": "dispute"}, "id": STRING, "subject": STRING, "predicate": STRING,
    "predecessor": {"type": ["object", "null"]}, "kept_closing": {"type": ["string", "null"]},
    "sides": FACTS, "created_at": STRING})
DECIDED_APART = document("one intake record people decided differently in different clones, not yet settled: promote"
                         " acts on neither decision; binder_ratify or binder_reject with its id settles it", {
    "kind": {"const": "dispute"}, "id": STRING, "subject": STRING, "predicate": STRING,
    "decisions": listing(DECISION, "the decisions in force, oldest first"),
    "record": {"type": ["object", "null"]}, "fact": {"type": ["string", "null"]}, "created_at": STRING})
PAGED_WAITING = paged_output({"anyOf": [INTAKE, DISPUTE, DECIDED_APART]},
                             "intake records waiting for a human, then disagreements")
_DECIDE_ARGS = {
    "id": text("the waiting intake record's id, or one side's fact id of a dispute (from binder_list)",
               required=True),
    "by": text("leave out: over MCP the decision is recorded as made by this server's agent (its --agent), with"
               " via mcp; a by naming anyone else is refused"),
    "note": text("why"),
}
_DECIDED = {**DECISION, "properties": {**DECISION["properties"], "closed": STRINGS}}
_BY = text("leave out: over MCP the entry is recorded as made by this server's agent (its --agent), with via mcp;"
           " a by naming anyone else is refused")

BINDER_LIST = Tool(
    "binder_list",
    "The intake records waiting for a human decision (routed to the Binder, not yet ratified or rejected),"
    " oldest first, then the disagreements between agents and the records people decided differently (kind"
    " dispute). A page at a time"
    " ({items, next_cursor, remaining}). Decide with binder_ratify or"
    " binder_reject when a human has said which.",
    {"limit": PAGE_LIMIT, "cursor": PAGE_CURSOR},
    lambda store, a: binder_api.list_document(store, **page_arguments(a)),
    title="The Binder queue", output=PAGED_WAITING, hints=READS,
)

BINDER_RATIFY = Tool(
    "binder_ratify",
    "Ratify a Binder record (the next promote makes it knowledge at tier ratified) or one side of a dispute"
    " (the other sides are closed), recorded as made by this server's agent (by: the agent, via: mcp), never"
    " in a person's name. Only on a human's word: an agent does not ratify its own records. Refused when"
    " memstack.yaml's binder.people does not list the agent, and under binder.require_signed (only a"
    " person's signed commit lands a decision), nothing written. Appends to kb/binder.jsonl; returns the"
    " decision.",
    _DECIDE_ARGS,
    lambda store, a: binder_api.decide_document(store, "ratify", a["id"], a["by"], a["note"], mcp=True,
                                                agent=a["server_agent"]),
    title="Ratify (recorded as the agent's)", output=_DECIDED, hints=APPENDS, as_agent=True,
)

BINDER_REJECT = Tool(
    "binder_reject",
    "Reject a Binder record (it stays in the audit trail and is never routed again) or one side of a dispute,"
    " recorded as made by this server's agent (by: the agent, via: mcp). Only on a human's word; refused as"
    " binder_ratify is. Appends to kb/binder.jsonl; returns the decision.",
    _DECIDE_ARGS,
    lambda store, a: binder_api.decide_document(store, "reject", a["id"], a["by"], a["note"], mcp=True,
                                                agent=a["server_agent"]),
    title="Reject (recorded as the agent's)", output=_DECIDED, hints=APPENDS, as_agent=True,
)

BINDER_FILE = Tool(
    "binder_file",
    "File a human-confirmed document (UTF-8 text) in the Binder: copied to kb/files/<sha256>[.ext] and entered"
    " in kb/binder.jsonl (append-only); returns the entry. The document is a regular file inside the"
    " repository that holds the store (no symbolic link), at most limits.file_bytes, with no credential.",
    {"path": text("the document's path, inside the store's repository (relative to the server's working"
                  " directory)", required=True),
     "by": _BY, "note": text("why it is filed")},
    lambda store, a: binder_api.file_document(store, path=a["path"], by=a["by"], note=a["note"], mcp=True,
                                              agent=a["server_agent"]),
    title="File a confirmed document", output=record("binder"), hints=APPENDS, as_agent=True,
)

BINDER_EDGE = Tool(
    "binder_edge",
    "Enter a human-confirmed relation between two subjects (from -relation-> to) in kb/binder.jsonl"
    " (append-only); returns the entry.",
    {"from": text("the subject the relation starts at", required=True),
     "to": text("the subject it ends at", required=True),
     "relation": text("how they relate, e.g. depends-on", required=True),
     "by": _BY, "note": text("why")},
    lambda store, a: binder_api.edge_document(store, source=a["from"], target=a["to"], relation=a["relation"],
                                              by=a["by"], note=a["note"], mcp=True, agent=a["server_agent"]),
    title="Enter a confirmed relation", output=record("binder"), hints=APPENDS, as_agent=True,
)

RELATED = Tool(
    "related",
    "A subject's human-confirmed edges and its facts valid now whose object is another known subject, walked"
    " out to depth steps, nearest first; paged (next_cursor).",
    {"subject": text("the subject to start from", required=True),
     "depth": Arg({"type": "integer", "minimum": 1, "maximum": MAX_DEPTH, "default": 1,
                   "description": f"steps to walk (1 to {MAX_DEPTH})"}, False, 1),
     "limit": PAGE_LIMIT, "cursor": PAGE_CURSOR},
    lambda store, a: related_api.related_document(store, **page_arguments(a)),
    title="Related subjects",
    output={**paged_output(document("an edge or a fact reaching another subject", {
        "kind": {"type": "string", "enum": ["edge", "fact"]}, "depth": {"type": "integer"}, "from": STRING,
        "relation": STRING, "to": STRING, "id": {"type": ["string", "null"]}}), "edges and facts, nearest first")},
    hints=READS,
)
