"""The tools over the whole store: promote, sync, search, status, blame, anchors, anchors_check; each one entry
(`registry.Tool`), listed in `tools.py`."""

from memstack.anchors.follow import STATUSES
from memstack.api import anchors as anchors_api
from memstack.api import blame as blame_api
from memstack.api import forget as forget_api
from memstack.api import promote as promote_api
from memstack.api import search as search_api
from memstack.api import status as status_api
from memstack.api import sync as sync_api
from memstack.base.pages import MAX_LIMIT, MCP_DEFAULT_LIMIT, MCP_MAX_BYTES
from memstack.intake.log import TIERS
from memstack.kb.facts import TABLES
from memstack.mcp.arguments import AGENT, PAGE_CURSOR, PAGE_LIMIT, Arg, flag, name, text, timestamp
from memstack.mcp.documents import STRING, STRINGS, document, listing, paged_output
from memstack.mcp.registry import CLOSES, READS, Hints, Tool
from memstack.search.records import LAYERS

PROMOTE = Tool(
    "promote",
    "Run the norn-pass: route every pending intake record (knowledge, jeles_atoms, opus_atoms, or the Binder for"
    " a human), append the facts (superseding a contradicted valid fact), rebuild the views, and make one git"
    " commit. dry_run shows the routing (of the first limit records; remaining counts the rest) and writes"
    " nothing. Returns what moved.",
    {"now_ts": timestamp("when the promotion runs (default: now): refused beyond the clock skew, otherwise"
                         " unused; each ledger line's promoted_at is its record's own time"),
     "dry_run": flag("show the routing, write nothing"),
     "no_commit": flag("write the files, leave committing to git"),
     "limit": Arg({"type": "integer", "minimum": 1, "maximum": MAX_LIMIT,
                   "description": f"with dry_run, list at most this many records (default"
                                  f" {promote_api.DRY_RUN_SHOWN}); remaining counts the rest"})},
    lambda store, a: promote_api.promote_document(store, **a),
    title="Promote intake",
    output=document("what the promotion routed (with dry_run: what it would route)", {
        "dry_run": {"type": "boolean"}, "routed": {"type": "object", "additionalProperties": {"type": "integer"}},
        "ratified": {"type": "integer"}}, {
        "records": {"type": "array"}, "remaining": {"type": "integer", "minimum": 0},
        "superseded": {"type": "integer"}, "facts_added": {"type": "integer"},
        "changed": STRINGS, "commit": {"type": ["string", "null"]}, "message": STRING,
        "held": {**STRINGS, "description": "the records skipped: each holds a credential that reached memory past"
                                           " the checks (rotate it, then forget the record)"}}),
    hints=Hints(read_only=False, destructive=True, idempotent=True, open_world=False),
)

SYNC = Tool(
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
)

SEARCH = Tool(
    "search",
    "Find memories by words (ranked full-text search, BM25, stemmed: 'deploys' finds 'deployment') across"
    " facts, intake, handoffs and SOIL records. Each hit says its layer, where it lives (path:line, id), a"
    " snippet with the matched words in **bold**, its score and, for a fact, its validity window. Returns"
    f" {{hits, matched, next_cursor, remaining}}; at most limit hits (default {MCP_DEFAULT_LIMIT}) and"
    f" {MCP_MAX_BYTES // 1024} KiB, pass next_cursor as cursor for more.",
    {"query": text("the words to look for (free text; records holding every word first, then any word; word* a prefix)",
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
    lambda store, a: search_api.search_document(store, **a, max_bytes=MCP_MAX_BYTES),
    title="Search memory",
    output=document("ranked hits, best first", {
        "query": STRING,
        "matched": {"type": "string", "enum": ["all words", "all words, then any word", "any word"],
                    "description": "all words, then any word: fewer than 50 records held them all, those"
                                   " holding any word follow; any word: no record held them all"},
        "hits": listing(document("one hit", {
            "layer": {"type": "string", "enum": list(LAYERS)}, "path": STRING,
            "line": {"type": ["integer", "null"]}, "where": STRING, "title": {"type": ["string", "null"]},
            "snippet": STRING, "score": {"type": "number"}, "agent": {"type": ["string", "null"]}}, {
            "id": STRING, "section": STRING, "tier": STRING, "table": STRING, "source": STRING,
            "subject": {}, "predicate": {}, "object": {}, "valid_from": {"type": "integer"},
            "valid_to": {"type": ["integer", "null"]}, "valid_from_iso": STRING,
            "valid_to_iso": {"type": ["string", "null"]}}), "the hits of this page"),
        "next_cursor": {"type": ["string", "null"], "description": "pass as cursor for the next page; null: no more"},
        "remaining": {"type": "integer", "minimum": 0, "description": "how many hits follow this page"}}, {
        "index": document("only while the index is still being built: the hits come from what it holds", {
            "built": {"type": "boolean"}, "records_indexed": {"type": "integer"},
            "bytes_indexed": {"type": "integer"}, "bytes_behind": {"type": "integer"}})}),
    hints=READS,
)

STATUS = Tool(
    "status",
    "Where the store stands: pending intake per agent, Binder items waiting, stale derived files, uncommitted"
    " memory, the last promotion, whether the fact index is in step, how many anchored records are fresh, moved,"
    " drifted or orphaned.",
    {},
    lambda store, a: status_api.status_document(store),
    title="Store status",
    output=document("where the store stands", {
        "store": STRING, "pending_intake": {"type": "object"}, "pending_total": {"type": "integer"},
        "binder_waiting": {"type": ["object", "null"]}, "stale": {}, "uncommitted": {"type": ["array", "null"]},
        "last_promotion": {"type": ["object", "null"]}, "index": {"type": ["object", "null"]},
        "anchors": {"type": ["object", "null"], "description": "records with code anchors per status (null: no"
                    " code repository)"}}),
    hints=READS,
)

_PLACE = {"type": ["object", "null"], "description": "where the lines are now: path, start, end (null: gone)"}
_ANCHORED = document("a record and its anchors", {
    "kind": {"type": "string", "enum": ["fact", "intake"]}, "id": STRING, "status": {"enum": list(STATUSES)},
    "anchors": listing(document("an anchor followed", {
        "path": STRING, "start": {"type": ["integer", "null"]}, "end": {"type": ["integer", "null"]},
        "commit": {"type": ["string", "null"]}, "status": {"enum": list(STATUSES)}, "now": _PLACE}, {
        "reason": STRING, "old_lines": {"type": ["array", "null"]}, "new_lines": {"type": "array"},
        "truncated": {"type": "boolean"}}), "its anchors")}, {
    "subject": STRING, "predicate": STRING, "object": STRING, "title": STRING,
    "agent": {"type": ["string", "null"]}, "reverified": {"type": "object"}})

ANCHORS = Tool(
    "anchors",
    "Whether memory about the code still holds: each open fact and pending intake record with code anchors, each"
    " anchor fresh (lines unchanged, perhaps shifted: now says where), moved (file renamed or lines moved to"
    " another file), drifted (lines changed: old_lines, new_lines) or orphaned (file or lines gone), against the"
    " work tree or rev; a record's status is its worst anchor's. Re-check a drifted or orphaned fact before"
    " relying on it.",
    {"subject": text("only records of this subject"),
     "status": Arg({"type": "string", "enum": list(STATUSES), "description": "only records of this status"}),
     "rev": text("against this revision of the code repository (default: the work tree)"),
     "limit": PAGE_LIMIT, "cursor": PAGE_CURSOR},
    lambda store, a: anchors_api.anchors_document(
        store, **{**a, "limit": MCP_DEFAULT_LIMIT if a["limit"] is None else a["limit"]}, max_bytes=MCP_MAX_BYTES),
    title="Code anchors",
    output=paged_output(_ANCHORED, "anchored records"),
    hints=READS,
)

ANCHORS_CHECK = Tool(
    "anchors_check",
    "The memory a code change makes stale, for reviewing it: of the records the store holds at B (open facts"
    " and pending intake records with code anchors), those with an anchor into a file the change A..B touched"
    " (from the merge base of A and B to B, as a pull request shows it) that is moved, drifted or orphaned at"
    " B, per changed file (files, a page at a time); stale counts the records. Re-check each before relying on"
    " it, and capture what holds now (capture with contradicts) where it no longer does.",
    {"range": text("the code change as git names it, A..B (e.g. origin/main..HEAD)", required=True),
     "limit": PAGE_LIMIT, "cursor": PAGE_CURSOR},
    lambda store, a: anchors_api.check_document(
        store, **{**a, "limit": MCP_DEFAULT_LIMIT if a["limit"] is None else a["limit"]}, max_bytes=MCP_MAX_BYTES),
    title="Memory a code change makes stale",
    output=document("the records the change makes stale, per changed file", {
        "range": STRING, "base": STRING, "tip": STRING,
        "changed_files": {"type": "integer", "description": "code files the change touched (not the store's own)"},
        "anchored_files": {"type": "integer", "description": "of them, files some anchor points into"},
        "stale": {"type": "integer", "description": "records made stale (every page)"},
        "files": listing(document("a changed file and the records it makes stale", {
            "path": STRING, "change": STRING, "records": listing(_ANCHORED, "records made stale: their anchors"
                                                                 " into this file")}, {
            "to": STRING}), "changed files with stale records"),
        "next_cursor": {"type": ["string", "null"], "description": "pass as cursor for the next page; null: no more"},
        "remaining": {"type": "integer", "minimum": 0, "description": "how many files follow this page"}}),
    hints=READS,
)

_COMMIT = {"type": ["object", "null"], "description": "a commit: commit, author, email, date, message, parents"}
_PLACED = document("a record, where it is, and the commit that added it", {
    "path": STRING, "line": {"type": "integer"}, "record": {"type": "object"}}, {
    "added": _COMMIT, "merge": {**_COMMIT, "description": "the merge that brought it into the current branch"}})

BLAME = Tool(
    "blame",
    "Where a belief came from, for a fact id or an intake id: the fact's line and the commit that added it"
    " (author, date, message), the intake record it was promoted from and its commit, the merge that brought"
    " each into the current branch, the promotion ledger's lines, the Binder decisions and who made them,"
    " the facts it closed (closed) and the fact that closed it (closed_by), and its code anchors.",
    {"id": text("a fact id or an intake record's id", required=True)},
    lambda store, a: blame_api.blame_document(store, id=a["id"]),
    title="Where a memory came from",
    output=document("the chain behind a fact or intake record", {
        "id": STRING, "kind": {"type": "string", "enum": ["fact", "intake"]},
        "fact": {"anyOf": [_PLACED, {"type": "null"}]}, "intake": {"anyOf": [_PLACED, {"type": "null"}]},
        "promotions": listing({"type": "object"}, "the promotion ledger's lines for the intake record"),
        "decisions": listing(_PLACED, "the Binder's decisions on the record or the fact"),
        "closed": listing({"type": "object"}, "the facts it closed"),
        "closed_by": {"anyOf": [_PLACED, {"type": "null"}]},
        "anchors": listing({"type": "object"}, "its code anchors")}),
    hints=READS,
)

FORGET = Tool(
    "forget",
    "Forget records on purpose (a leaked credential, a person's data, a poisoned record), on a human's word:"
    " appends a tombstone per record to kb/forgotten/<agent>/YYYY-MM.jsonl, recorded as made by this server's"
    " agent (via mcp). From then on every read (these tools, search, the views, export, the replica) shows the"
    " record as [forgotten: reason], its id, agent and times kept, never its content; promotion skips it; a"
    " forgotten fact and the facts promoted from a forgotten record are closed. Returns the tombstones, the"
    " fact ids closed and, in intake_kept, each forgotten fact whose intake record (the same words) is not"
    " forgotten and stays readable: forget that record too. Commit it (sync) so the others forget it too.",
    {"id": Arg({"type": "array", "items": {"type": "string"}, "minItems": 1,
                "description": "the records to forget: intake or fact ids, a SOIL record's collection/key, a"
                               " handoff's path handoffs/<agent>/<file>.md"}, True),
     "reason": text("why they are forgotten (shown in their place; no content of theirs)", required=True),
     "by": text("leave out: over MCP a tombstone is recorded as made by this server's agent; a by naming anyone"
                " else is refused"),
     "agent": AGENT},
    lambda store, a: forget_api.forget_document(store, id=a["id"], reason=a["reason"], by=a["by"],
                                                agent=a["agent"], mcp=True),
    title="Forget records",
    output=document("the tombstones appended", {
        "path": STRING, "tombstones": {"type": "array"}, "closed": STRINGS, "rebuilt": STRINGS,
        "intake_kept": listing({"type": "object", "required": ["fact", "intake"],
                                "properties": {"fact": STRING, "intake": STRING}},
                               "forgotten facts promoted from an intake record that is not forgotten (still shown)")}),
    hints=CLOSES,
)
