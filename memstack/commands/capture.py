"""`memstack capture`: record a decision; with --contradicts, close the one it replaces first."""

from typing import Any

from memstack.commands.fact import recorded, render, triple, writer
from memstack.output import emit
from memstack.store import open_store, resolve_agent


def register(sub: Any, common: Any) -> None:
    p = sub.add_parser("capture", parents=[common], help="record a decision fact (table knowledge)")
    triple(p)
    p.add_argument("--valid-from", required=True, metavar="TS", help="when it became true (ms or ISO-8601)")
    writer(p)
    p.add_argument("--contradicts", action="store_true",
                   help="first close the open fact of this subject and predicate at --valid-from (it is kept)")
    p.set_defaults(func=run)


def run(args: Any) -> int:
    from memstack import factstore

    store = open_store(args.store)
    new, closed = factstore.capture(store.root, subject=args.subject, predicate=args.predicate, object=args.object,
                                    valid_from=args.valid_from, recorded_at=recorded(args),
                                    agent=resolve_agent(store, args.agent), contradicts=args.contradicts,
                                    confidence=args.confidence, source=args.source)
    # The JSON answer: the new fact first, then the facts it closed.
    emit(args, [new, *closed], lambda: "\n".join(
        ["captured " + render([new])] + ["closed " + render([f]) for f in closed]))
    return 0
