"""`memstack recall --subject S --now-ts T [--limit N]`: what an agent decided and prefers, most recent first."""

from typing import Any

from memstack.commands import doc
from memstack.facts import RECALL_PREDICATES, Fact
from memstack.output import emit, note
from memstack.readers import FactReader, add_pg_option, fact_reader, pg_dsn
from memstack.times import now_ms


def register(sub: Any, common: Any) -> None:
    p = sub.add_parser("recall", parents=[common],
                       help=f"facts of a subject valid now whose predicate is {'/'.join(RECALL_PREDICATES)}",
                       **doc(f"What was decided about a subject: its facts valid at --now-ts whose predicate is"
                             f" {', '.join(RECALL_PREDICATES)} (any case), most recent first. With no store at"
                             " all the answer is empty (and stderr says why).",
                             "memstack recall --subject deploys", "memstack recall --subject deploys --json"))
    p.add_argument("--subject", required=True, metavar="S", help="the subject to recall (required)")
    p.add_argument("--now-ts", metavar="TS", help="the instant to recall at (ms or ISO-8601; default now)")
    p.add_argument("--limit", type=int, metavar="N", help="at most N facts (default memory.recall_limit, 50)")
    add_pg_option(p)
    p.set_defaults(func=run)


def recall_document(reader: FactReader, *, subject: Any, now_ts: Any = None, limit: Any = None) -> list[Fact]:
    """`recall --json` and the `recall` tool, from the files (no store at all answers nothing) or the replica.

    Two agents that disagree: both sides are shown, each marked `disputed_with` the other."""
    from memstack.disputes import disputed_with

    found = reader.recall(subject, now_ms() if now_ts is None else now_ts, limit)
    others = disputed_with(found)
    return [{**f, "disputed_with": others[f["id"]]} if f["id"] in others else f for f in found]


def run(args: Any) -> int:
    from memstack.commands.fact import render

    # A named path that is no store is an error; no store at all answers nothing.
    reader = fact_reader(args.store, pg_dsn(args.store, args.pg), optional_store=True)
    if getattr(reader, "root", True) is None:  # the graceful empty answer, and why, on stderr
        note("memstack recall: no memstack store here (pass --store PATH, set MEMSTACK_HOME, or run inside"
             " a store); nothing to recall")
    found = recall_document(reader, subject=args.subject, now_ts=args.now_ts, limit=args.limit)
    emit(args, found, lambda: "\n".join(
        render([f]) + (f"  DISPUTED with {', '.join(f['disputed_with'])} (`memstack binder list`)"
                       if f.get("disputed_with") else "") for f in found) or f"nothing recalled about {args.subject!r}")
    return 0
