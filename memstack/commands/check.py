"""`memstack check` — PLACEHOLDER until the enforcement work lands (issue 4)."""

from typing import Any


def register(sub: Any, common: Any) -> None:
    p = sub.add_parser("check", parents=[common], help="check the invariants")
    p.add_argument("--staged", action="store_true")
    p.add_argument("--range", dest="range_")
    p.set_defaults(func=run)


def run(args: Any) -> int:
    return 0
