"""`memstack capture`: record a decision; with --contradicts, also close the one it replaces."""

from typing import Any

from memstack.base.output import emit
from memstack.base.times import given_or_none, now_ms
from memstack.cli.commands import doc
from memstack.cli.commands.fact import render, triple, writer
from memstack.kb.facts import Fact
from memstack.repo.store import Store, open_store, resolve_agent


def register(sub: Any, common: Any) -> None:
    p = sub.add_parser("capture", parents=[common], help="record a decision fact (table knowledge)",
                       **doc("Record a decision as a knowledge fact. With --contradicts it replaces the open"
                             " fact of the same subject and predicate: that one is closed at --valid-from"
                             " (kept, never deleted) and the new one added.",
                             "memstack capture --subject deploys --predicate decided --object friday"
                             " --valid-from 2026-12-01T00:00:00Z --contradicts"))
    triple(p)
    p.add_argument("--valid-from", metavar="TS", help="when it became true (ms, ISO-8601 or now; default now)")
    writer(p)
    p.add_argument("--contradicts", action="store_true",
                   help="also close the open fact of this subject and predicate at --valid-from (it is kept)")
    p.set_defaults(func=run)


def capture_document(store: Store, *, subject: Any, predicate: Any, object: Any, valid_from: Any = None,
                     recorded_at: Any = None, confidence: Any = "1.0", agent: str | None = None,
                     source: Any = None, contradicts: bool = False) -> list[Fact]:
    """`capture --json` and the `capture` tool: the new fact first, then the facts it closed.

    Times not given (or `now`) are now: valid_from when called, recorded_at once the subject's lock is held."""
    from memstack.kb import factstore

    valid_from, recorded_at = given_or_none(valid_from, "valid-from"), given_or_none(recorded_at, "recorded-at")
    new, closed = factstore.capture(store.root, subject=subject, predicate=predicate, object=object,
                                    valid_from=now_ms() if valid_from is None else valid_from,
                                    recorded_at=recorded_at, clock=now_ms,
                                    agent=resolve_agent(store, agent), contradicts=contradicts,
                                    confidence=confidence, source=source)
    return [new, *closed]


def run(args: Any) -> int:
    found = capture_document(open_store(args.store), subject=args.subject, predicate=args.predicate,
                             object=args.object, valid_from=args.valid_from, recorded_at=args.recorded_at,
                             confidence=args.confidence, agent=args.agent, source=args.source,
                             contradicts=args.contradicts)
    emit(args, found, lambda: "\n".join(
        ["captured " + render(found[:1])] + ["closed " + render([f]) for f in found[1:]]))
    return 0
