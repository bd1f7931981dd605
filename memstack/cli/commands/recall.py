"""`memstack recall --subject S [--now-ts T] [--limit N] [--cursor C]`: what an agent decided and prefers,
most recent first."""

import shlex
from typing import Any

from memstack.base.output import emit_page, note
from memstack.base.times import given_or_none, now_ms
from memstack.cli.commands import doc, page_options
from memstack.kb.facts import RECALL_PREDICATES
from memstack.kb.readers import FactReader, add_pg_option, fact_reader, pg_dsn


def register(sub: Any, common: Any) -> None:
    p = sub.add_parser("recall", parents=[common],
                       help=f"facts of a subject valid now whose predicate is {'/'.join(RECALL_PREDICATES)}",
                       **doc(f"What was decided about a subject: its facts valid at --now-ts whose predicate is"
                             f" {', '.join(RECALL_PREDICATES)} (any case), most recent first. With no store at"
                             " all the answer is empty (and stderr says why).",
                             "memstack recall --subject deploys", "memstack recall --subject deploys --json"))
    p.add_argument("--subject", required=True, metavar="S", help="the subject to recall (required)")
    p.add_argument("--now-ts", metavar="TS", help="the instant to recall at (ms, ISO-8601 or now; default now)")
    page_options(p, "facts (default memory.recall_limit, 50)")
    add_pg_option(p)
    p.set_defaults(func=run)


def recall_document(reader: FactReader, *, subject: Any, now_ts: Any = None, limit: Any = None,
                    cursor: str | None = None, max_bytes: int | None = None) -> dict[str, Any]:
    """`recall --json` and the `recall` tool, from the files (no store at all answers nothing) or the replica:
    one page, `{"items": [facts], "next_cursor", "remaining"}`, and a `note` when nothing is recalled but
    the subject holds facts recall leaves out or records waiting in the Binder.

    Two agents that disagree: both sides are shown, each marked `disputed_with` the other."""
    from memstack.kb.disputes import disputed_with

    now = given_or_none(now_ts, "now-ts")
    now = now_ms() if now is None else now
    found = reader.recall_page(subject, now, limit=limit, cursor=cursor, max_bytes=max_bytes)
    others = disputed_with(found.items)
    document = found.document([{**f, "disputed_with": others[f["id"]]} if f["id"] in others else f
                               for f in found.items])
    if not found.items and cursor in (None, ""):
        why = why_empty(reader, subject, now)
        if why:
            document["note"] = why
    return document


def why_empty(reader: FactReader, subject: str, now: int) -> str | None:
    """What the subject holds that recall does not show: facts of other predicates valid now, and intake
    records waiting in the Binder for a human (they become facts only once ratified)."""
    parts = []
    count, predicates = reader.other_predicates(subject, now)
    if count:
        shown = ", ".join(predicates[:5]) + (", …" if len(predicates) > 5 else "")
        parts.append(f"{count} fact{'s' if count != 1 else ''} about {subject!r} hold{'s' if count == 1 else ''}"
                     f" other predicates ({shown}): recall returns {'/'.join(RECALL_PREDICATES)};"
                     f" see `memstack fact get-valid-at --subject {shlex.quote(subject)} --ts now`")
    waiting = reader.binder_waiting(subject)
    if waiting:
        parts.append(f"{waiting} intake record{'s' if waiting != 1 else ''} about {subject!r}"
                     f" wait{'s' if waiting == 1 else ''} in the Binder for ratification by a human"
                     " (`memstack binder list`); a ratified record becomes a fact at the next promotion")
    return "; ".join(parts) or None


def run(args: Any) -> int:
    from memstack.cli.commands.fact import render

    # A named path that is no store is an error; no store at all answers nothing.
    reader = fact_reader(args.store, pg_dsn(args.store, args.pg), optional_store=True)
    if getattr(reader, "root", True) is None:  # the graceful empty answer, and why, on stderr
        note("memstack recall: no memstack store here (pass --store PATH, set MEMSTACK_HOME, or run inside"
             " a store); nothing to recall")
    found = recall_document(reader, subject=args.subject, now_ts=args.now_ts, limit=args.limit, cursor=args.cursor)
    emit_page(args, found, lambda: "\n".join(
        render([f]) + (f"  DISPUTED with {', '.join(f['disputed_with'])} (`memstack binder list`)"
                       if f.get("disputed_with") else "") for f in found["items"])
        or f"nothing recalled about {args.subject!r}")
    if found.get("note") and not args.json:
        note(f"memstack: {found['note']}")
    return 0
