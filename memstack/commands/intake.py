"""`memstack intake write` and `memstack intake list`."""

from collections.abc import Iterable
from typing import Any

from memstack import intake
from memstack.output import emit
from memstack.store import Store, open_store, resolve_agent
from memstack.times import now_ms


def register(sub: Any, common: Any) -> None:
    top = sub.add_parser("intake", help="L2 intake: the append-only log")
    verbs = top.add_subparsers(dest="verb", metavar="VERB", required=True)
    p = verbs.add_parser("write", parents=[common], help="append one record to the agent's intake")
    p.add_argument("--agent", metavar="A")
    p.add_argument("--content", required=True, metavar="TEXT")
    p.add_argument("--title", default="")
    p.add_argument("--source", default="")
    p.add_argument("--tier", default="observed", metavar="TIER", help="observed, fetched, verified or ratified")
    p.add_argument("--confidence", default="0.5", metavar="F", help="in [0, 1] (default 0.5)")
    p.add_argument("--keyword", action="append", default=[], metavar="K")
    p.add_argument("--tag", action="append", default=[], metavar="T")
    p.add_argument("--subject", metavar="S")
    p.add_argument("--predicate", metavar="P")
    p.add_argument("--object", metavar="O")
    p.add_argument("--relevance-score", metavar="F")
    p.add_argument("--created-at", metavar="TS", help="ms or ISO-8601 (default: now)")
    p.set_defaults(func=run_write)
    p = verbs.add_parser("list", parents=[common], help="list intake records, oldest first")
    p.add_argument("--agent", metavar="A")
    p.add_argument("--pending", action="store_true", help="only records not yet promoted")
    p.set_defaults(func=run_list)


def write_document(store: Store, *, agent: str | None, content: Any, title: Any = "", source: Any = "",
                   tier: Any = "observed", confidence: Any = 0.5, keyword: Iterable[str] = (),
                   tag: Iterable[str] = (), subject: Any = None, predicate: Any = None, object: Any = None,
                   relevance_score: Any = None, created_at: Any = None) -> dict[str, Any]:
    """Append one record; the document `intake write --json` prints and the `intake_write` tool returns."""
    record = intake.make_record(
        agent=resolve_agent(store, agent), content=content, title=title, source=source, tier=tier,
        confidence=confidence, keywords=keyword, tags=tag, subject=subject, predicate=predicate, object=object,
        relevance_score=relevance_score, created_at=now_ms() if created_at is None else created_at)
    return {"path": intake.write(store.root, record), "record": record}


def run_write(args: Any) -> int:
    document = write_document(
        open_store(args.store), agent=args.agent, content=args.content, title=args.title, source=args.source,
        tier=args.tier, confidence=args.confidence, keyword=args.keyword, tag=args.tag, subject=args.subject,
        predicate=args.predicate, object=args.object, relevance_score=args.relevance_score,
        created_at=args.created_at)
    emit(args, document, f"wrote {document['record']['id']} to {document['path']}")
    return 0


def run_list(args: Any) -> int:
    store = open_store(args.store)
    from memstack.output import emit_each

    emit_each(args, intake.each_record(store.root, args.agent, args.pending), lambda r: (
        f"{r['created_at']}  {r['agent']}  {r['tier']:<8} {r['confidence']:.2f}  {r['id']}  "
        f"{(r['title'] or r['content']).splitlines()[0][:60]}"), "no intake records")
    return 0
