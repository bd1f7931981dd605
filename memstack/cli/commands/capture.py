"""`memstack capture`: record a decision; with --contradicts, also close the one it replaces."""

from pathlib import Path
from typing import Any

from memstack.base.output import emit, note
from memstack.cli.commands import anchor_options, doc
from memstack.cli.commands.fact import render, triple, writer
from memstack.repo.store import open_store


def register(sub: Any, common: Any) -> None:
    p = sub.add_parser("capture", parents=[common], help="record a decision fact (table knowledge)",
                       **doc("Record a decision as a knowledge fact. With --contradicts it replaces the open"
                             " fact of the same subject and predicate: that one is closed at --valid-from"
                             " (kept, never deleted) and the new one added; with nothing open it says so and"
                             " records the decision. A decision already open (same subject, predicate and"
                             " object) is not recorded again: `already recorded` with its id, exit 0.",
                             "memstack capture --subject deploys --predicate decided --object friday"
                             " --valid-from 2026-12-01T00:00:00Z --contradicts"))
    triple(p)
    p.add_argument("--valid-from", metavar="TS", help="when it became true (ms, ISO-8601 or now; default now)")
    writer(p)
    p.add_argument("--contradicts", action="store_true",
                   help="also close the open fact of this subject and predicate at --valid-from (it is kept)")
    anchor_options(p)
    p.set_defaults(func=run)


def run(args: Any) -> int:
    from memstack.api.capture import capture  # lazy: --help stays quick

    found, already = capture(open_store(args.store), subject=args.subject, predicate=args.predicate,
                             object=args.object, valid_from=args.valid_from, recorded_at=args.recorded_at,
                             confidence=args.confidence, agent=args.agent, source=args.source,
                             contradicts=args.contradicts, anchor=args.anchor, repo=args.repo, here=Path.cwd())
    if already:
        emit(args, found, lambda: f"already recorded: {render(found)} (nothing written)")
        return 0
    emit(args, found, lambda: "\n".join(
        ["captured " + render(found[:1])] + ["closed " + render([f]) for f in found[1:]]))
    if args.contradicts and len(found) == 1:
        note(f"nothing open to contradict for {args.subject}/{args.predicate}: recorded as a new decision")
    return 0
