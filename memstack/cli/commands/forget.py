"""`memstack forget ID... --reason TEXT`: forget records on purpose (docs/forgetting.md)."""

from typing import Any

from memstack.base.output import emit, note
from memstack.cli.commands import AGENT, doc
from memstack.repo.store import open_store


def register(sub: Any, common: Any) -> None:
    p = sub.add_parser(
        "forget", parents=[common], help="forget records on purpose: every read shows [forgotten: reason]",
        **doc("Append a tombstone for each record named (an intake or fact id, a SOIL record's collection/key, a"
              " handoff's path) to kb/forgotten/<agent>/YYYY-MM.jsonl. From the commit that adds it on, every"
              " read verb, search, the views, export, the MCP tools and the PostgreSQL replica show the record"
              " as [forgotten: reason] (its id, agent and times kept) and never its content. Promotion skips a"
              " forgotten intake record; a forgotten fact, and the facts promoted from a forgotten record, are"
              " closed. The tombstone holds none of the content; the content stays in git's history.",
              "memstack forget 0190f3a1b2c3d4e5f6a7b8c9d0e1f2a3 --reason 'pasted a customer email'",
              "memstack forget notes/deploy handoffs/ada/session_handoff-2026-12-01_ada.md --reason 'erasure"
              " request' --by 'Ada Lovelace'"))
    p.add_argument("id", metavar="ID", nargs="+", help="a record to forget (repeatable)")
    p.add_argument("--reason", required=True, metavar="TEXT", help="why (shown in the record's place)")
    p.add_argument("--by", metavar="NAME", help="who forgets it (default: git user.name, else the login name)")
    p.add_argument("--agent", metavar="A", help=AGENT + "; its tombstone file holds the lines")
    p.set_defaults(func=run)


def run(args: Any) -> int:
    from memstack.api.forget import forget_document  # lazy: --help stays quick

    document = forget_document(open_store(args.store), id=args.id, reason=args.reason, by=args.by, agent=args.agent)
    closed = f"; closed {len(document['closed'])} fact(s), rebuilt {len(document['rebuilt'])} derived file(s)" \
        if document["closed"] else ""
    emit(args, document, f"forgot {len(document['tombstones'])} record(s) (in {document['path']}{closed});"
                         " commit it for review")
    for kept in document["intake_kept"]:
        note(f"memstack forget: fact {kept['fact']} was promoted from intake record {kept['intake']}, which holds the"
             " same content and stays readable (intake list, search, the replica; excise keeps it): forget it too"
             f" with `memstack forget {kept['intake']} --reason TEXT`")
    return 0
