"""`memstack soil put|get|update|expire|list`."""

from pathlib import Path
from typing import Any

from memstack.base import jsonio
from memstack.base.errors import bad
from memstack.base.limits import read_input
from memstack.base.output import emit, emit_page
from memstack.cli.commands import doc, page_options
from memstack.intake.log import WRITABLE_TIERS
from memstack.repo.store import open_store
from memstack.soil import records as soil

COLLECTION = "the collection, a name like session ([a-z0-9][a-z0-9._-]*)"
KEY = "the record's key in the collection, a name like current"
EXPIRED = "show expired records too (they are kept on disk)"


def register(sub: Any, common: Any) -> None:
    top = sub.add_parser("soil", help="L4 SOIL: session-scoped structured records",
                         **doc("L4 SOIL (Willow's structured store): session-scoped JSON records, one file per"
                               " record at store/<collection>/<key>.json. Unlike the logs they may change;"
                               " expiring one keeps it on disk.",
                               "memstack soil put session current --value '{\"task\": \"fix the parser\"}'",
                               "memstack soil get session current"))
    verbs = top.add_subparsers(dest="verb", metavar="VERB", required=True)
    for verb, text in (("put", "create or replace a record"), ("update", "change an existing record")):
        p = verbs.add_parser(verb, parents=[common], help=text,
                             **doc(f"SOIL: {text}." + (" An object value is merged key by key into the record's;"
                                                       " any other value replaces it." if verb == "update"
                                                       else ""),
                                   f"memstack soil {verb} session current --value '{{\"step\": 2}}'",
                                   f"memstack soil {verb} config tools --file tools.json"))
        p.add_argument("collection", metavar="COLLECTION", help=COLLECTION)
        p.add_argument("key", metavar="KEY", help=KEY)
        source = p.add_mutually_exclusive_group(required=True)
        source.add_argument("--value", metavar="JSON", help="the record's value, any JSON value")
        source.add_argument("--file", metavar="F", help="read the JSON value from F ('-' for stdin)")
        p.set_defaults(func=run_write)
    p = verbs.add_parser("get", parents=[common], help="read one record",
                         **doc("SOIL: print one record's value (--json: the whole record).",
                               "memstack soil get session current --json"))
    p.add_argument("collection", metavar="COLLECTION", help=COLLECTION)
    p.add_argument("key", metavar="KEY", help=KEY)
    p.add_argument("--include-expired", action="store_true", help=EXPIRED)
    p.set_defaults(func=run_get)
    p = verbs.add_parser("expire", parents=[common], help="mark a record expired (it is kept)",
                         **doc("SOIL: mark a record expired; it stays on disk and leaves get and list.",
                               "memstack soil expire session current --at 2026-12-31T00:00:00Z"))
    p.add_argument("collection", metavar="COLLECTION", help=COLLECTION)
    p.add_argument("key", metavar="KEY", help=KEY)
    p.add_argument("--at", metavar="TS", help="when it expires (ms, ISO-8601 or now; default: now)")
    p.set_defaults(func=run_expire)
    p = verbs.add_parser("list", parents=[common], help="list a collection's records",
                         **doc("SOIL: list a collection's records (key, last update, expiry).",
                               "memstack soil list session"))
    p.add_argument("collection", metavar="COLLECTION", help=COLLECTION)
    p.add_argument("--include-expired", action="store_true", help=EXPIRED)
    page_options(p, "records")
    p.set_defaults(func=run_list)
    register_graduate(verbs, common)


def register_graduate(verbs: Any, common: Any) -> None:

    p = verbs.add_parser(
        "graduate", parents=[common], help="turn a stable record into an intake record; the SOIL record is retired",
        **doc("Write an intake record from a SOIL record (content: its value; source: its path), then retire"
                    " the SOIL record: expired now, marked with the intake id, never deleted. The next promotion"
                    " routes the intake record like any other.",
            "memstack soil graduate session lexer --subject parser --predicate decided"
               " --object 'hand-written lexer' --tier verified --confidence 0.9"))
    p.add_argument("collection", metavar="COLLECTION", help="the record's collection")
    p.add_argument("key", metavar="KEY", help="the record's key")
    p.add_argument("--subject", metavar="S", help="a fact's subject (with --predicate and --object)")
    p.add_argument("--predicate", metavar="P", help="a fact's predicate (with --subject and --object)")
    p.add_argument("--object", metavar="O", help="a fact's object (with --subject and --predicate)")
    p.add_argument("--tier", metavar="TIER", default="observed",
                   help=f"one of {', '.join(WRITABLE_TIERS)} (default: observed; ratified: only a person's Binder"
                        " ratification)")
    p.add_argument("--confidence", metavar="F", default=0.5, help="a number in [0, 1] (default: 0.5)")
    p.add_argument("--agent", metavar="A", help="whose intake it goes to (default: MEMSTACK_AGENT, then"
                                                " memory.default_agent)")
    p.set_defaults(func=run_graduate)


def _value(args: Any, store: Path) -> Any:
    if args.value is not None:
        return jsonio.parse_value(args.value, "--value")
    text = read_input(store, args.file, "--file")
    if not text.strip():
        raise bad("--file", None, "empty, expected a JSON value")
    return jsonio.parse_value(text, "--file")


def run_write(args: Any) -> int:
    from memstack.api.soil import write_document  # lazy: --help stays quick

    store = open_store(args.store)
    record = write_document(store, args.verb, args.collection, args.key, _value(args, store.root))
    emit(args, record, f"{args.verb}: {soil.relpath(args.collection, args.key)}")
    return 0


def run_get(args: Any) -> int:
    from memstack.api.soil import get_document  # lazy: --help stays quick

    record = get_document(open_store(args.store), args.collection, args.key, args.include_expired)
    emit(args, record, lambda: jsonio.dumps_pretty(record["value"]).decode())
    return 0


def run_expire(args: Any) -> int:
    from memstack.api.soil import expire_document  # lazy: --help stays quick

    record = expire_document(open_store(args.store), args.collection, args.key, args.at)
    emit(args, record, f"expired {soil.relpath(args.collection, args.key)} at {record['expires_at']}")
    return 0


def run_list(args: Any) -> int:
    from memstack.api.soil import list_document  # lazy: --help stays quick

    document = list_document(open_store(args.store), args.collection, include_expired=args.include_expired,
                             limit=args.limit, cursor=args.cursor)
    found = document["items"]
    emit_page(args, document, lambda: "\n".join(
        f"{r['key']}  updated {r['updated_at']}" + (f"  expires {r['expires_at']}" if r["expires_at"] else "")
        for r in found) or f"no records in {args.collection}")
    return 0


def run_graduate(args: Any) -> int:
    from memstack.api.soil import graduate_document  # lazy: --help stays quick

    document = graduate_document(open_store(args.store), collection=args.collection, key=args.key, agent=args.agent,
                                 subject=args.subject, predicate=args.predicate, object=args.object,
                                 tier=args.tier, confidence=args.confidence)
    emit(args, document, f"graduated {soil.relpath(args.collection, args.key)} to intake record"
                         f" {document['intake']['record']['id']} in {document['intake']['path']} (the SOIL record"
                         " is retired, not deleted)")
    return 0
