"""`memstack identity check`: identity files against forbidden patterns (I6)."""

from typing import Any

from memstack.base.output import emit
from memstack.cli.commands import doc
from memstack.integrity import identity
from memstack.repo.store import open_store


def register(sub: Any, common: Any) -> None:
    top = sub.add_parser("identity", help="agent identity files",
                         **doc("Identity files (identity/<agent>.md): who an agent is, written by a human and"
                               " checked against identity.forbidden_patterns of memstack.yaml (invariant I6).",
                               "memstack identity check"))
    verbs = top.add_subparsers(dest="verb", metavar="VERB", required=True)
    p = verbs.add_parser("check", parents=[common], help="check identity files against forbidden patterns",
                         **doc("Check identity files against identity.forbidden_patterns (regular expressions"
                               " in memstack.yaml); exit 1 naming each match.",
                               "memstack identity check --agent claude"))
    p.add_argument("--agent", metavar="A", help="only this agent's identity (default: all)")
    p.set_defaults(func=run_check)


def run_check(args: Any) -> int:
    store = open_store(args.store)
    found = identity.check(store.root, store.config.get("identity", "forbidden_patterns"), args.agent)
    emit(args, {"violations": [v.to_dict() for v in found]},
         "\n".join(map(str, found)) or "identity files are clean")
    return 1 if found else 0
