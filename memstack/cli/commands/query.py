"""`memstack query memory.fact|memory.recall|memory.capture`: the ferrox seed's spellings (docs/ferrox.md).

The same flags as `ferrox-tools query memory.<verb>`, so a ferrox workflow switches by
changing the program name. One implementation, two spellings: each form calls the
document function of memstack's own verb (`fact add`, `recall`, `capture`, …) and
prints what the seed prints: JSON always (indented; compact with `--raw`), a fact
object for `add`, `invalidate` (the last fact closed, or null) and `capture`, a list
for the others, history oldest `recorded_at` first, recall newest `recorded_at` first.
"""

import sys
from typing import Any

from memstack.base import jsonio
from memstack.base.errors import MemstackError
from memstack.base.output import render_json
from memstack.cli.commands import doc
from memstack.kb.facts import RECALL_PREDICATES


def seed() -> Any:
    from memstack.api import ferrox as spellings  # lazy: --help stays quick

    return spellings


def show(document: Any, raw: bool) -> None:
    """JSON always: indented as `--json` prints it, or compact on one line (`--raw`)."""
    sys.stdout.write(jsonio.dumps_line(document).decode() if raw else render_json(document) + "\n")


OPS = ("add", "get-valid-at", "history", "invalidate")
TS = "ms, ISO-8601 or `now`"


def register(sub: Any, common: Any) -> None:
    top = sub.add_parser("query", help="the ferrox seed's spellings: memory.fact, memory.recall, memory.capture",
                         **doc("The ferrox seed's `query memory.<verb>` forms, same flags, JSON output"
                               " (docs/ferrox.md).", "memstack query memory.recall --subject auth --now-ts now"))
    verbs = top.add_subparsers(dest="verb", metavar="memory.VERB", required=True)

    p = verbs.add_parser("memory.fact", parents=[common], help="--op add|get-valid-at|history|invalidate",
                         **doc("The four bi-temporal operations of the ferrox seed.",
                               "memstack query memory.fact --op add --subject auth --predicate decided --object jwt"
                               " --valid-from 100 --recorded-at 100",
                               "memstack query memory.fact --op get-valid-at --ts now --subject auth"))
    p.add_argument("--op", required=True, choices=OPS, help="the operation")
    p.add_argument("--subject", metavar="S", help="the subject (add, history, invalidate; a filter for get-valid-at)")
    p.add_argument("--predicate", metavar="P", help="the predicate (add, invalidate)")
    p.add_argument("--object", metavar="O", help="the object (add; invalidate: close only the open fact with it)")
    p.add_argument("--valid-from", metavar="TS", help=f"add: when it became true ({TS})")
    p.add_argument("--recorded-at", metavar="TS",
                   help=f"add: when the store learns it; invalidate: when the closing is recorded (default now) ({TS})")
    p.add_argument("--confidence", metavar="F", help="add: in [0, 1] (default 1)")
    p.add_argument("--ts", metavar="TS", help=f"get-valid-at: the instant ({TS}); valid_from <= TS < valid_to")
    p.add_argument("--valid-to", metavar="TS", help=f"invalidate: when it stopped being true ({TS})")
    _memstack_options(p)
    p.set_defaults(func=run_fact)

    p = verbs.add_parser("memory.recall", parents=[common],
                         help=f"valid-now facts whose predicate is {'/'.join(RECALL_PREDICATES)}, newest first",
                         **doc("Prior decisions of a subject valid at --now-ts, newest first.",
                               "memstack query memory.recall --subject auth --now-ts 300"))
    p.add_argument("--subject", required=True, metavar="S", help="the subject (exact match)")
    p.add_argument("--now-ts", required=True, metavar="TS", help=f"the instant to recall at ({TS})")
    p.add_argument("--limit", type=int, metavar="N", help="at most N facts (default memory.recall_limit, 50)")
    p.add_argument("--raw", action="store_true", help="compact JSON on one line")
    p.set_defaults(func=run_recall)

    p = verbs.add_parser("memory.capture", parents=[common], help="record a decision; --contradicts closes the prior",
                         **doc("Record a decision fact; --contradicts first closes the prior one"
                               " (kept, never deleted).",
                               "memstack query memory.capture --subject auth --predicate decided --object jose"
                               " --valid-from 200 --recorded-at 200 --contradicts"))
    p.add_argument("--subject", required=True, metavar="S", help="the subject")
    p.add_argument("--predicate", required=True, metavar="P", help="the predicate (recall reads decided, chose, …)")
    p.add_argument("--object", required=True, metavar="O", help="the decision")
    p.add_argument("--valid-from", required=True, metavar="TS", help=f"when it became true ({TS})")
    p.add_argument("--recorded-at", required=True, metavar="TS", help=f"when the store learns it ({TS})")
    p.add_argument("--confidence", metavar="F", help="in [0, 1] (default 1)")
    p.add_argument("--contradicts", action="store_true",
                   help="first close the open fact of this subject and predicate at --valid-from (it is kept)")
    _memstack_options(p)
    p.set_defaults(func=run_capture)


def _memstack_options(p: Any) -> None:
    """What memstack needs beyond the seed's flags (the seed has one writer and no files per agent)."""
    p.add_argument("--agent", metavar="A", help="the writing agent (default MEMSTACK_AGENT, then memory.default_agent)")
    p.add_argument("--raw", action="store_true", help="compact JSON on one line")


# Which flags each --op takes (the others are refused, so a flag meant for another op is not silently ignored).
NEEDS = {"add": ("subject", "predicate", "object", "valid_from", "recorded_at"), "get-valid-at": ("ts",),
         "history": ("subject",), "invalidate": ("subject", "predicate", "valid_to")}
MAY = {"add": ("confidence", "agent"), "get-valid-at": ("subject",), "history": (),
       "invalidate": ("object", "recorded_at")}
FLAGS = ("subject", "predicate", "object", "valid_from", "recorded_at", "confidence", "ts", "valid_to", "agent")


def _flag(name: str) -> str:
    return "--" + name.replace("_", "-")


def check_op_flags(args: Any) -> None:
    """Exit 2 naming the first missing flag, or a flag this --op does not take."""
    for name in NEEDS[args.op]:
        if getattr(args, name) is None:
            raise MemstackError.marked("bad usage: memory.fact {arg:--op} {op} needs {arg:{flag}}", op=args.op,
                                       flag=_flag(name))
    for name in FLAGS:
        if getattr(args, name) is not None and name not in NEEDS[args.op] + MAY[args.op]:
            raise MemstackError.marked("bad usage: memory.fact {arg:--op} {op} takes no {arg:{flag}}", op=args.op,
                                       flag=_flag(name))


def run_fact(args: Any) -> int:
    check_op_flags(args)
    forms = seed()
    if args.op == "add":
        document: Any = forms.add(args.store, subject=args.subject, predicate=args.predicate, object=args.object,
                                  valid_from=args.valid_from, recorded_at=args.recorded_at,
                                  confidence=args.confidence, agent=args.agent)
    elif args.op == "get-valid-at":
        document = forms.get_valid_at(args.store, ts=args.ts, subject=args.subject)
    elif args.op == "history":
        document = forms.history(args.store, subject=args.subject)
    else:
        document = forms.invalidate(args.store, subject=args.subject, predicate=args.predicate,
                                    valid_to=args.valid_to, object=args.object, recorded_at=args.recorded_at)
    show(document, args.raw)
    return 0


def run_recall(args: Any) -> int:
    forms = seed()
    show(forms.recall(args.store, subject=args.subject, now_ts=args.now_ts, limit=args.limit), args.raw)
    return 0


def run_capture(args: Any) -> int:
    forms = seed()
    document = forms.capture(args.store, subject=args.subject, predicate=args.predicate, object=args.object,
                             valid_from=args.valid_from, recorded_at=args.recorded_at, confidence=args.confidence,
                             agent=args.agent, contradicts=args.contradicts)
    show(document, args.raw)
    return 0
