"""`capture`: record a decision; with contradicts, also close the fact it replaces."""

from collections.abc import Iterable
from pathlib import Path
from typing import Any

from memstack.anchors.take import take_all
from memstack.base.times import given_or_none, now_ms
from memstack.kb import factstore
from memstack.kb.facts import Fact
from memstack.repo.store import Store, resolve_agent


def capture_document(store: Store, *, subject: Any, predicate: Any, object: Any, valid_from: Any = None,
                     recorded_at: Any = None, confidence: Any = "1.0", agent: str | None = None,
                     source: Any = None, contradicts: bool = False, anchor: Iterable[str] = (),
                     repo: str | None = None) -> list[Fact]:
    """`capture --json` and the `capture` tool: the new fact first, then the facts it closed; a decision
    already open (same subject, predicate and object) is not recorded again: its fact alone, nothing written."""
    found, _ = capture(store, subject=subject, predicate=predicate, object=object, valid_from=valid_from,
                       recorded_at=recorded_at, confidence=confidence, agent=agent, source=source,
                       contradicts=contradicts, anchor=anchor, repo=repo)
    return found


def capture(store: Store, *, subject: Any, predicate: Any, object: Any, valid_from: Any = None,
            recorded_at: Any = None, confidence: Any = "1.0", agent: str | None = None,
            source: Any = None, contradicts: bool = False, anchor: Iterable[str] = (), repo: str | None = None,
            here: Path | None = None) -> tuple[list[Fact], bool]:
    """`capture_document`'s facts, and whether the decision was already recorded (then nothing was written).

    Times not given (or `now`) are now, once the subject's lock is held (a rival capture's closing is before)."""

    valid_from, recorded_at = given_or_none(valid_from, "valid-from"), given_or_none(recorded_at, "recorded-at")
    anchors = take_all(store, anchor, repo=repo, here=here)
    new, closed, already = factstore.capture_once(
        store.root, subject=subject, predicate=predicate, object=object,
        valid_from=valid_from, recorded_at=recorded_at, clock=now_ms,
        agent=resolve_agent(store, agent), contradicts=contradicts, confidence=confidence, source=source,
        anchors=anchors)
    return [new, *closed], already
