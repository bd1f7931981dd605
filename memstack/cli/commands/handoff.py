"""`memstack handoff write` and `memstack handoff show`."""

import argparse
from typing import Any

from memstack.base.limits import read_input
from memstack.base.output import emit
from memstack.cli.commands import AGENT, doc
from memstack.repo.store import open_store, resolve_agent


def register(sub: Any, common: Any) -> None:
    top = sub.add_parser("handoff", help="L5 sealed session handoffs",
                         **doc("L5 handoffs: what a session leaves the next one, as Markdown with at least a"
                               " non-empty `## Open threads` section and a `## Capability table`. Sealed when"
                               " written: never edited afterwards, a new one is written instead.",
                               "memstack handoff write --file handoff.md", "memstack handoff show"))
    verbs = top.add_subparsers(dest="verb", metavar="VERB", required=True)
    p = verbs.add_parser("write", parents=[common], help="seal a handoff (Markdown from --file or stdin)",
                         **doc("Seal a handoff at handoffs/<agent>/session_handoff-YYYY-MM-DD_<agent>.md"
                               " (a second one that day gets -2, -3, ...). Front matter (agent, date,"
                               " session) is added when missing; an incomplete handoff is refused.",
                               "memstack handoff write --file handoff.md", "memstack handoff write < handoff.md"))
    p.add_argument("--agent", metavar="A", help=AGENT)
    p.add_argument("--file", metavar="F", help="the handoff Markdown ('-' or none: stdin)")
    p.add_argument("stdin", nargs="?", choices=["-"], help=argparse.SUPPRESS)
    p.set_defaults(func=run_write)
    p = verbs.add_parser("show", parents=[common], help="print the agent's latest handoff",
                         **doc("Print the agent's latest sealed handoff.", "memstack handoff show --agent claude"))
    p.add_argument("--agent", metavar="A", help=AGENT)
    p.set_defaults(func=run_show)


def run_write(args: Any) -> int:
    from memstack.api.handoff import write_document  # lazy: --help stays quick

    store = open_store(args.store)
    resolve_agent(store, args.agent)  # a bad agent is refused before stdin is read
    sealed = write_document(store, args.agent, read_input(store.root, args.file, "--file"))
    emit(args, sealed, f"sealed {sealed['path']}")
    return 0


def run_show(args: Any) -> int:
    from memstack.api.handoff import show_document  # lazy: --help stays quick

    document = show_document(open_store(args.store), args.agent)
    emit(args, document, document["text"])
    return 0
