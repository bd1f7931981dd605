"""`memstack soil put|get|update|expire|list`."""

from typing import Any

from memstack import jsonio, soil
from memstack.commands import read_text_input
from memstack.errors import MemstackError
from memstack.output import emit
from memstack.store import Store, open_store
from memstack.times import now_ms, parse_ts


def register(sub: Any, common: Any) -> None:
    top = sub.add_parser("soil", help="L4 SOIL: session-scoped structured records")
    verbs = top.add_subparsers(dest="verb", metavar="VERB", required=True)
    for verb, text in (("put", "create or replace a record"), ("update", "change an existing record")):
        p = verbs.add_parser(verb, parents=[common], help=text)
        p.add_argument("collection", metavar="COLLECTION")
        p.add_argument("key", metavar="KEY")
        source = p.add_mutually_exclusive_group(required=True)
        source.add_argument("--value", metavar="JSON")
        source.add_argument("--file", metavar="F", help="read the JSON value from F ('-' for stdin)")
        p.set_defaults(func=run_write)
    p = verbs.add_parser("get", parents=[common], help="read one record")
    p.add_argument("collection", metavar="COLLECTION")
    p.add_argument("key", metavar="KEY")
    p.add_argument("--include-expired", action="store_true")
    p.set_defaults(func=run_get)
    p = verbs.add_parser("expire", parents=[common], help="mark a record expired (it is kept)")
    p.add_argument("collection", metavar="COLLECTION")
    p.add_argument("key", metavar="KEY")
    p.add_argument("--at", metavar="TS", help="when it expires (default: now)")
    p.set_defaults(func=run_expire)
    p = verbs.add_parser("list", parents=[common], help="list a collection's records")
    p.add_argument("collection", metavar="COLLECTION")
    p.add_argument("--include-expired", action="store_true")
    p.set_defaults(func=run_list)
    register_graduate(verbs, common)


def register_graduate(verbs: Any, common: Any) -> None:
    from memstack.intake import TIERS

    p = verbs.add_parser(
        "graduate", parents=[common], help="turn a stable record into an intake record; the SOIL record is retired",
        description="Write an intake record from a SOIL record (content: its value; source: its path), then retire"
                    " the SOIL record: expired now, marked with the intake id, never deleted. The next promotion"
                    " routes the intake record like any other.",
        epilog="example: memstack soil graduate session lexer --subject parser --predicate decided"
               " --object 'hand-written lexer' --tier verified --confidence 0.9")
    p.add_argument("collection", metavar="COLLECTION", help="the record's collection")
    p.add_argument("key", metavar="KEY", help="the record's key")
    p.add_argument("--subject", metavar="S", help="a fact's subject (with --predicate and --object)")
    p.add_argument("--predicate", metavar="P", help="a fact's predicate (with --subject and --object)")
    p.add_argument("--object", metavar="O", help="a fact's object (with --subject and --predicate)")
    p.add_argument("--tier", metavar="TIER", default="observed", help=f"one of {', '.join(TIERS)} (default: observed)")
    p.add_argument("--confidence", metavar="F", default=0.5, help="a number in [0, 1] (default: 0.5)")
    p.add_argument("--agent", metavar="A", help="whose intake it goes to (default: MEMSTACK_AGENT, then"
                                                " memory.default_agent)")
    p.set_defaults(func=run_graduate)


def _value(args: Any) -> Any:
    if args.value is not None:
        return jsonio.parse_value(args.value, "--value")
    text = read_text_input(args.file, "--file")
    if not text.strip():
        raise MemstackError("bad --file: empty, expected a JSON value")
    return jsonio.parse_value(text, "--file")


def write_document(store: Store, verb: str, collection: str, key: str, value: Any) -> dict[str, Any]:
    """`put` or `update` one record; the document `soil put|update --json` prints and the tools return."""
    action = soil.put if verb == "put" else soil.update
    return action(store.root, collection, key, value, now_ms())


def get_document(store: Store, collection: str, key: str, include_expired: bool = False) -> dict[str, Any]:
    """The document `soil get --json` prints and the `soil_get` tool returns."""
    return soil.get(store.root, collection, key, now_ms(), include_expired)


def run_write(args: Any) -> int:
    store = open_store(args.store)
    record = write_document(store, args.verb, args.collection, args.key, _value(args))
    emit(args, record, f"{args.verb}: {soil.relpath(args.collection, args.key)}")
    return 0


def run_get(args: Any) -> int:
    record = get_document(open_store(args.store), args.collection, args.key, args.include_expired)
    emit(args, record, lambda: jsonio.dumps_pretty(record["value"]).decode())
    return 0


def run_expire(args: Any) -> int:
    store = open_store(args.store)
    at = None if args.at is None else parse_ts(args.at, "--at")
    record = soil.expire(store.root, args.collection, args.key, now_ms(), at)
    emit(args, record, f"expired {soil.relpath(args.collection, args.key)} at {record['expires_at']}")
    return 0


def run_list(args: Any) -> int:
    store = open_store(args.store)
    found = soil.list_records(store.root, args.collection, now_ms(), args.include_expired)
    emit(args, found, lambda: "\n".join(
        f"{r['key']}  updated {r['updated_at']}" + (f"  expires {r['expires_at']}" if r["expires_at"] else "")
        for r in found) or f"no records in {args.collection}")
    return 0


def graduate_document(store: Store, *, collection: str, key: str, agent: str | None = None, subject: Any = None,
                      predicate: Any = None, object: Any = None, tier: Any = "observed",
                      confidence: Any = 0.5) -> dict[str, Any]:
    """`soil graduate --json` and the `soil_graduate` tool: the intake record, its file, the retired SOIL record."""
    from memstack import intake
    from memstack.store import resolve_agent

    now = now_ms()
    who = resolve_agent(store, agent)

    def make(record: dict[str, Any], rel: str) -> dict[str, Any]:
        return intake.make_record(agent=who, content=soil.content_of(record["value"]), created_at=now,
                                  title=f"{collection}/{key}", source=f"soil:{rel}", tier=tier,
                                  confidence=confidence, tags=["soil"], subject=subject, predicate=predicate,
                                  object=object)

    made, path, retired = soil.graduate(store.root, collection, key, now, make)
    return {"intake": {"path": path, "record": made}, "soil": retired}


def run_graduate(args: Any) -> int:
    document = graduate_document(open_store(args.store), collection=args.collection, key=args.key, agent=args.agent,
                                 subject=args.subject, predicate=args.predicate, object=args.object,
                                 tier=args.tier, confidence=args.confidence)
    emit(args, document, f"graduated {soil.relpath(args.collection, args.key)} to intake record"
                         f" {document['intake']['record']['id']} in {document['intake']['path']} (the SOIL record"
                         " is retired, not deleted)")
    return 0
