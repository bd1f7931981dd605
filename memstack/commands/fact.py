"""`memstack fact add|get-valid-at|history|invalidate`: the bi-temporal fact store (L3)."""

from typing import Any

from memstack.facts import TABLES, Fact
from memstack.output import emit
from memstack.readers import FactReader, add_pg_option, fact_reader, pg_dsn
from memstack.store import Store, open_store, resolve_agent
from memstack.times import iso, now_ms

TS = "ms or ISO-8601"


def register(sub: Any, common: Any) -> None:
    top = sub.add_parser("fact", help="L3 bi-temporal facts: add, query, close")
    verbs = top.add_subparsers(dest="verb", metavar="VERB", required=True)

    p = verbs.add_parser("add", parents=[common], help="append a fact, valid from --valid-from on")
    triple(p)
    p.add_argument("--valid-from", required=True, metavar="TS", help=f"when it became true ({TS})")
    writer(p)
    p.add_argument("--table", default="knowledge", metavar="T", help=f"{', '.join(TABLES)} (default knowledge)")
    p.set_defaults(func=run_add)

    p = verbs.add_parser("get-valid-at", parents=[common], help="the facts valid at an instant")
    p.add_argument("--ts", required=True, metavar="TS", help=f"the instant ({TS}); valid_from <= TS < valid_to")
    p.add_argument("--subject", metavar="S", help="only this subject")
    p.add_argument("--as-of", metavar="TS", help="answer as the store believed at this transaction time")
    add_pg_option(p)
    p.set_defaults(func=run_get_valid_at)

    p = verbs.add_parser("history", parents=[common], help="every version of a subject's facts, oldest first")
    p.add_argument("--subject", required=True, metavar="S")
    add_pg_option(p)
    p.set_defaults(func=run_history)

    p = verbs.add_parser("invalidate", parents=[common], help="close the open fact of a subject and predicate")
    p.add_argument("--subject", required=True, metavar="S")
    p.add_argument("--predicate", required=True, metavar="P")
    p.add_argument("--object", metavar="O", help="close only the open fact with this object")
    p.add_argument("--valid-to", required=True, metavar="TS", help=f"when it stopped being true ({TS})")
    p.add_argument("--recorded-at", metavar="TS", help=f"when the closing is recorded ({TS}; default now)")
    p.set_defaults(func=run_invalidate)


def triple(p: Any) -> None:
    p.add_argument("--subject", required=True, metavar="S")
    p.add_argument("--predicate", required=True, metavar="P")
    p.add_argument("--object", required=True, metavar="O")


def writer(p: Any) -> None:
    p.add_argument("--recorded-at", metavar="TS", help=f"when the store learns it ({TS}; default now)")
    p.add_argument("--confidence", default="1.0", metavar="F", help="in [0, 1] (default 1.0)")
    p.add_argument("--agent", metavar="A")
    p.add_argument("--source", metavar="S", help="where it comes from (provenance)")


def render(found: list[Fact], empty: str = "no facts") -> str:
    """One line per fact, times in ISO-8601."""
    return "\n".join(render_line(f) for f in found) or empty


def render_line(f: Fact) -> str:
    """One fact as one line, times in ISO-8601."""
    until = "open" if f["valid_to"] is None else iso(f["valid_to"])
    line = (f"{f['id']}  [{iso(f['valid_from'])}, {until})  {f['subject']} | {f['predicate']} | {f['object']}"
            f"  (confidence {f['confidence']:.2f}, {f['table']}, {f['agent']}, recorded {iso(f['recorded_at'])}")
    if f["expired_at"] is not None:
        line += f", closed {iso(f['expired_at'])}"
    if f["superseded_by"] is not None:
        line += f", superseded by {f['superseded_by']}"
    if f.get("supersedes"):
        line += f", supersedes {', '.join(f['supersedes'])}"
    return line + ")"


def add_document(store: Store, *, subject: Any, predicate: Any, object: Any, valid_from: Any,
                 recorded_at: Any = None, confidence: Any = "1.0", agent: str | None = None, source: Any = None,
                 table: Any = "knowledge") -> list[Fact]:
    """`fact add --json` and the `fact_add` tool."""
    from memstack import factstore

    fact = factstore.add(store.root, subject=subject, predicate=predicate, object=object, valid_from=valid_from,
                         recorded_at=now_ms() if recorded_at is None else recorded_at, confidence=confidence,
                         agent=resolve_agent(store, agent), table=table, source=source)
    return [fact]


def get_valid_at_document(reader: FactReader, *, ts: Any, subject: Any = None, as_of: Any = None) -> list[Fact]:
    """`fact get-valid-at --json` and the `fact_get_valid_at` tool, from the files or the replica."""
    return reader.valid_at(ts, subject, as_of)


def history_document(reader: FactReader, *, subject: Any) -> list[Fact]:
    return reader.history(subject)


def invalidate_document(store: Store, *, subject: Any, predicate: Any, valid_to: Any, recorded_at: Any = None,
                        object: Any = None) -> list[Fact]:
    from memstack import factstore

    return factstore.invalidate(store.root, subject=subject, predicate=predicate, object=object, valid_to=valid_to,
                                recorded_at=recorded_at, clock=now_ms)


def run_add(args: Any) -> int:
    found = add_document(open_store(args.store), subject=args.subject, predicate=args.predicate,
                         object=args.object, valid_from=args.valid_from, recorded_at=args.recorded_at,
                         confidence=args.confidence, agent=args.agent, source=args.source, table=args.table)
    emit(args, found, lambda: "added " + render(found))
    return 0


def run_get_valid_at(args: Any) -> int:
    if args.pg is None and args.subject is None:  # every subject: streamed, never held whole
        from memstack import factindex, factstore
        from memstack.output import emit_each

        ts, _, as_of = factstore.query_args(args.ts, None, args.as_of)
        emit_each(args, factindex.each_valid_at(open_store(args.store).root, ts, as_of), render_line,
                  "no facts valid then")
        return 0
    found = get_valid_at_document(fact_reader(args.store, pg_dsn(args.store, args.pg)), ts=args.ts,
                                  subject=args.subject, as_of=args.as_of)
    emit(args, found, lambda: render(found, "no facts valid then"))
    return 0


def run_history(args: Any) -> int:
    found = history_document(fact_reader(args.store, pg_dsn(args.store, args.pg)), subject=args.subject)
    emit(args, found, lambda: render(found, f"no facts about {args.subject!r}"))
    return 0


def run_invalidate(args: Any) -> int:
    closed = invalidate_document(open_store(args.store), subject=args.subject, predicate=args.predicate,
                                 object=args.object, valid_to=args.valid_to, recorded_at=args.recorded_at)
    emit(args, closed, lambda: "closed " + render(closed).replace("\n", "\nclosed "))
    return 0
