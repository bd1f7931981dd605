"""`memstack intake write` and `memstack intake list`."""

from pathlib import Path
from typing import Any

from memstack.base.output import emit, emit_each, emit_page, shown
from memstack.cli.commands import AGENT, anchor_options, doc, page_options
from memstack.intake import log as intake
from memstack.repo.store import agent_filter, open_store


def register(sub: Any, common: Any) -> None:
    top = sub.add_parser("intake", help="L2 intake: the append-only log",
                         **doc("L2 intake: what an agent notices, one JSON line per record in"
                               " intake/<agent>/YYYY-MM-DD.jsonl, never rewritten (the audit trail)."
                               " `memstack promote` (the norn-pass) later routes each record into the KB.",
                               "memstack intake write --content 'The build needs Python 3.11'",
                               "memstack intake list --pending"))
    verbs = top.add_subparsers(dest="verb", metavar="VERB", required=True)
    p = verbs.add_parser("write", parents=[common], help="append one record to the agent's intake",
                         **doc("Append one record to the agent's intake day file. The next `memstack promote`"
                               " routes it: a verified or ratified record with confidence >= 0.80 becomes"
                               " knowledge, a cited one (a URL source, tier fetched) a jeles atom, a synthesis"
                               " an opus atom, anything else waits in the Binder for a human.",
                               "memstack intake write --content 'We deploy on Mondays' --subject deploys"
                               " --predicate decided --object monday --tier verified --confidence 0.9",
                               "memstack intake write --content 'CI is slow' --tag ci --tag build"))
    p.add_argument("--agent", metavar="A", help=AGENT)
    p.add_argument("--content", required=True, metavar="TEXT", help="what was learned (required)")
    p.add_argument("--title", default="", help="a short title (a fact without --subject takes it as subject)")
    p.add_argument("--source", default="", help="where it comes from: a URL, a file, a person")
    p.add_argument("--tier", default="observed", metavar="TIER",
                   help="observed, fetched or verified (ratified: only a person's Binder ratification)")
    p.add_argument("--confidence", default="0.5", metavar="F", help="in [0, 1] (default 0.5)")
    p.add_argument("--keyword", action="append", default=[], metavar="K", help="a keyword (repeatable)")
    p.add_argument("--tag", action="append", default=[], metavar="T",
                   help="a tag (repeatable); `synthesis` from an opus agent routes to opus_atoms")
    p.add_argument("--subject", metavar="S", help="the fact's subject (with --predicate and --object)")
    p.add_argument("--predicate", metavar="P", help="the fact's predicate, e.g. decided, prefers")
    p.add_argument("--object", metavar="O", help="the fact's object (the value)")
    p.add_argument("--relevance-score", metavar="F",
                   help="in [0, 1]: how relevant a citation is (>= 0.5 routes it to jeles_atoms)")
    p.add_argument("--created-at", metavar="TS", help="ms, ISO-8601 or now (default: now)")
    anchor_options(p)
    p.set_defaults(func=run_write)
    p = verbs.add_parser("list", parents=[common], help="list intake records, oldest first",
                         **doc("List intake records, oldest first, with time, agent, tier, confidence and id.",
                               "memstack intake list --agent claude --pending"))
    p.add_argument("--agent", metavar="A", help="only this agent's records (default: every agent)")
    p.add_argument("--pending", action="store_true", help="only records not yet promoted")
    page_options(p, "records")
    p.set_defaults(func=run_list)


def run_write(args: Any) -> int:
    from memstack.api.intake import write_document  # lazy: --help stays quick

    document = write_document(
        open_store(args.store), agent=args.agent, content=args.content, title=args.title, source=args.source,
        tier=args.tier, confidence=args.confidence, keyword=args.keyword, tag=args.tag, subject=args.subject,
        predicate=args.predicate, object=args.object, relevance_score=args.relevance_score,
        created_at=args.created_at, anchor=args.anchor, repo=args.repo, here=Path.cwd())
    emit(args, document, f"wrote {document['record']['id']} to {document['path']}")
    return 0


def run_list(args: Any) -> int:
    from memstack.api.intake import list_document  # lazy: --help stays quick

    store = open_store(args.store)

    def line(r: dict[str, Any]) -> str:
        return shown(f"{r['created_at']}  {r['agent']}  {r['tier']:<8} {r['confidence']:.2f}  {r['id']}  "
                     f"{(r['title'] or r['content']).split(chr(10))[0][:60]}")  # its first line, \r escaped

    if args.limit is None and args.cursor is None:  # the whole log: streamed, never held whole
        emit_each(args, intake.each_record(store.root, agent_filter(store, args.agent), args.pending), line,
                  "no intake records")
        return 0
    document = list_document(store, agent=args.agent, pending=args.pending, limit=args.limit, cursor=args.cursor)
    emit_page(args, document, lambda: "\n".join(line(r) for r in document["items"]) or "no intake records")
    return 0
