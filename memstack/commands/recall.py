"""`memstack recall --subject S --now-ts T [--limit N]`: what an agent decided and prefers, most recent first."""

from pathlib import Path
from typing import Any

from memstack.facts import RECALL_PREDICATES, Fact
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


def recall_document(root: Path | None, *, subject: Any, now_ts: Any = None, limit: Any = None) -> list[Fact]:
    """`recall --json` and the `recall` tool; no store at all (root None) answers nothing."""
    from memstack import factstore

    now = now_ms() if now_ts is None else now_ts
    if root is None:
        factstore.recall_args(subject, now, 1 if limit is None else limit)  # bad input is still bad
        return []
    if limit is None:
        limit = Store(root).config.get("memory", "recall_limit")
    found = factstore.recall(root, subject, now, limit)
    from memstack.disputes import disputed_with  # two agents disagree: both sides shown, each marked

    others = disputed_with(found)
    return [{**f, "disputed_with": others[f["id"]]} if f["id"] in others else f for f in found]


def run(args: Any) -> int:
    from memstack.commands.fact import render

    # A named path that is no store is an error; no store at all answers nothing.
    found = recall_document(locate(args.store), subject=args.subject, now_ts=args.now_ts, limit=args.limit)
    emit(args, found, lambda: "\n".join(
        render([f]) + (f"  DISPUTED with {', '.join(f['disputed_with'])} (`memstack binder list`)"
                       if f.get("disputed_with") else "") for f in found) or f"nothing recalled about {args.subject!r}")
    return 0
