"""`memstack recall --subject S --now-ts T [--limit N]`: what an agent decided and prefers, most recent first."""

from typing import Any

from memstack.facts import RECALL_PREDICATES
from memstack.output import emit
from memstack.store import Store, locate
from memstack.times import now_ms


def register(sub: Any, common: Any) -> None:
    p = sub.add_parser("recall", parents=[common],
                       help=f"facts of a subject valid now whose predicate is {'/'.join(RECALL_PREDICATES)}")
    p.add_argument("--subject", required=True, metavar="S")
    p.add_argument("--now-ts", metavar="TS", help="the instant to recall at (ms or ISO-8601; default now)")
    p.add_argument("--limit", type=int, metavar="N", help="at most N facts (default memory.recall_limit, 50)")
    p.set_defaults(func=run)


def run(args: Any) -> int:
    from memstack import factstore
    from memstack.commands.fact import render

    now = now_ms() if args.now_ts is None else args.now_ts
    root = locate(args.store)  # a named path that is no store is an error; no store at all answers nothing
    if root is None:
        factstore.recall_args(args.subject, now, 1 if args.limit is None else args.limit)  # bad input is still bad
        found = []
    else:
        limit = args.limit if args.limit is not None else Store(root).config.get("memory", "recall_limit")
        found = factstore.recall(root, args.subject, now, limit)
    emit(args, found, lambda: render(found, f"nothing recalled about {args.subject!r}"))
    return 0
