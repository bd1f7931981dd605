"""The tools of the knowledge base's bi-temporal facts: recall, capture, add, read at a time, history,
invalidate; each one entry (`registry.Tool`), listed in `tools.py`."""

from memstack.api import capture as capture_api
from memstack.api import fact as fact_api
from memstack.api import recall as recall_api
from memstack.base.pages import MCP_DEFAULT_LIMIT
from memstack.kb.facts import RECALL_PREDICATES, TABLES
from memstack.mcp.arguments import (
    AGENT,
    ANCHORS,
    PAGE_CURSOR,
    PAGE_LIMIT,
    Arg,
    flag,
    fraction,
    page_arguments,
    text,
    timestamp,
)
from memstack.mcp.documents import FACT, FACTS, paged_output
from memstack.mcp.registry import APPENDS, CLOSES, READS, Tool

PAGED_FACTS = paged_output(FACT, "facts (times in ms since the epoch)")
PAGED_FACTS_NOTE = {**PAGED_FACTS, "properties": {**PAGED_FACTS["properties"], "note": {
    "type": "string", "description": "why nothing was recalled (other predicates, records in the Binder)"}}}
_SUBJECT = text("the fact's subject", required=True)
_PREDICATE = text("the fact's predicate", required=True)
_OBJECT = text("the fact's object (its value)", required=True)
_RECORDED = timestamp("when the store learns it (default: now)")
_CONFIDENCE = fraction("confidence in [0, 1]", default=1.0)

RECALL = Tool(
    "recall",
    f"Before planning, ask what was decided or preferred about a subject: the facts valid at now_ts whose"
    f" predicate is {', '.join(RECALL_PREDICATES)}, most recent first; a page at a time"
    f" ({{items, next_cursor, remaining}}); an empty answer carries a note when the subject holds other facts"
    f" or records waiting in the Binder. Treat them as"
    f" settled unless you mean to supersede one (capture with contradicts).",
    {"subject": text("the subject", required=True),
     "now_ts": timestamp("the instant to recall at (default: now)"),
     "limit": PAGE_LIMIT, "cursor": PAGE_CURSOR},
    lambda reader, a: recall_api.recall_document(
        reader, **page_arguments({**a, "limit": min(reader.recall_limit(), MCP_DEFAULT_LIMIT) if a["limit"] is None
                                  else a["limit"]})),
    title="Recall decisions", output=PAGED_FACTS_NOTE, hints=READS, optional_store=True, reads_facts=True,
)

CAPTURE = Tool(
    "capture",
    "Record a decision (subject, predicate such as decided/chose/pattern/prefers, object, valid from"
    " valid_from); with contradicts, first close the open fact of that subject and predicate at valid_from (it"
    " is kept, as_of still sees it). Returns [new, closed...].",
    {"subject": _SUBJECT, "predicate": _PREDICATE, "object": _OBJECT,
     "valid_from": timestamp("when it became true (default: now)"), "recorded_at": _RECORDED,
     "confidence": _CONFIDENCE, "agent": AGENT, "source": text("where it comes from (provenance)"),
     "contradicts": flag("close the fact it replaces"), "anchor": ANCHORS},
    lambda store, a: capture_api.capture_document(store, **a),
    title="Capture a decision", output=FACTS, hints=CLOSES,
)

FACT_ADD = Tool(
    "fact_add",
    "Append a bi-temporal fact, valid from valid_from on (open-ended), without closing anything; returns [fact].",
    {"subject": _SUBJECT, "predicate": _PREDICATE, "object": _OBJECT,
     "valid_from": timestamp("when it became true (default: now)"), "recorded_at": _RECORDED,
     "confidence": _CONFIDENCE, "agent": AGENT, "source": text("where it comes from (provenance)"),
     "table": Arg({"type": "string", "enum": list(TABLES), "default": "knowledge",
                   "description": "the KB sub-tier: " + ", ".join(TABLES)}, False, "knowledge"),
     "anchor": ANCHORS},
    lambda store, a: fact_api.add_document(store, **a),
    title="Add a fact", output=FACTS, hints=APPENDS,
)

FACT_GET_VALID_AT = Tool(
    "fact_get_valid_at",
    "The facts valid at ts (valid_from <= ts < valid_to), optionally of one subject, optionally as the store"
    " believed at transaction time as_of; every predicate, not only recall's; a page at a time"
    " ({items, next_cursor, remaining}).",
    {"ts": timestamp("the instant", required=True), "subject": text("only this subject"),
     "as_of": timestamp("answer as the store believed at this transaction time"), "limit": PAGE_LIMIT,
     "cursor": PAGE_CURSOR},
    lambda reader, a: fact_api.get_valid_at_document(reader, **page_arguments(a)),
    title="Facts valid at a time", output=PAGED_FACTS, hints=READS, reads_facts=True,
)

FACT_HISTORY = Tool(
    "fact_history",
    "Every version of a subject's facts, superseded and current, oldest first; a page at a time"
    " ({items, next_cursor, remaining}).",
    {"subject": text("the subject", required=True), "limit": PAGE_LIMIT, "cursor": PAGE_CURSOR},
    lambda reader, a: fact_api.history_document(reader, **page_arguments(a)),
    title="A subject's fact history", output=PAGED_FACTS, hints=READS, reads_facts=True,
)

FACT_INVALIDATE = Tool(
    "fact_invalidate",
    "Close the open fact(s) of a subject and predicate at valid_to (they are kept, never deleted); nothing open"
    " to close is an error. Returns the closed facts.",
    {"subject": _SUBJECT, "predicate": _PREDICATE, "valid_to": timestamp("when it stopped being true (default: now)"),
     "recorded_at": timestamp("when the closing is recorded (default: now)"),
     "object": text("close only the open fact with this object")},
    lambda store, a: fact_api.invalidate_document(store, **a),
    title="Invalidate a fact", output=FACTS, hints=CLOSES,
)
