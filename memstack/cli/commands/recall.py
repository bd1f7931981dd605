"""`memstack recall --subject S [--now-ts T] [--limit N] [--cursor C]`: what an agent decided and prefers,
most recent first."""

from pathlib import Path
from typing import Any

from memstack.base.disputed import marked
from memstack.base.output import emit_page, note
from memstack.cli.commands import doc, page_options, pg_option
from memstack.cli.commands.fact import render
from memstack.kb.facts import RECALL_PREDICATES


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
    pg_option(p)
    p.set_defaults(func=run)


def run(args: Any) -> int:
    from memstack.api.readers import (  # lazy: --help stays quick
        fact_reader,
        pg_dsn,
    )
    from memstack.api.recall import recall_document  # lazy: --help stays quick

    # A named path that is no store is an error; no store at all answers nothing.
    reader = fact_reader(args.store, pg_dsn(args.store, args.pg), optional_store=True)
    if getattr(reader, "root", True) is None:  # the graceful empty answer, and why, on stderr
        from memstack.repo.checkout import advice  # lazy: only when there is no store

        told = advice(Path.cwd())  # a clone with nothing checked out: what to run
        note("memstack recall: no memstack store here (pass --store PATH, set MEMSTACK_HOME, or run inside"
             " a store); nothing to recall" if told is None else
             f"memstack recall: no memstack store here: {told[0]} is {told[1]}; nothing to recall")
    found = recall_document(reader, subject=args.subject, now_ts=args.now_ts, limit=args.limit, cursor=args.cursor)
    emit_page(args, found, lambda: "\n".join(
        render([f]) + marked(f) for f in found["items"])
        or f"nothing recalled about {args.subject!r}")
    if found.get("note") and not args.json:
        note(f"memstack: {found['note']}")
    return 0
