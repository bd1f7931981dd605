"""The fact verbs: add, get-valid-at, history, invalidate."""

from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from memstack.anchors.take import take_all
from memstack.anchors.used import CodeStatus, with_code_status
from memstack.base.shown import Shown
from memstack.base.times import given_or_none, given_ts, now_ms
from memstack.kb import factstore
from memstack.kb.facts import Fact
from memstack.kb.readers import FactReader
from memstack.repo.store import Store, resolve_agent


def add_document(store: Store, *, subject: Any, predicate: Any, object: Any, valid_from: Any = None,
                 recorded_at: Any = None, confidence: Any = "1.0", agent: str | None = None, source: Any = None,
                 table: Any = "knowledge", anchor: Iterable[str] = (), repo: str | None = None,
                 here: Path | None = None) -> list[Fact]:
    """`fact add --json` and the `fact_add` tool; times not given (or `now`) are now; `anchor`: code anchors
    (memstack/anchors/take.py)."""

    valid_from, recorded_at = given_or_none(valid_from, "valid-from"), given_or_none(recorded_at, "recorded-at")
    anchors = take_all(store, anchor, repo=repo, here=here)
    now = now_ms()
    fact = factstore.add(store.root, subject=subject, predicate=predicate, object=object,
                         valid_from=now if valid_from is None else valid_from,
                         recorded_at=now if recorded_at is None else recorded_at, confidence=confidence,
                         agent=resolve_agent(store, agent), table=table, source=source, anchors=anchors)
    return [fact]


def get_valid_at_document(reader: FactReader, *, ts: Any, subject: Any = None, as_of: Any = None,
                          limit: Any = None, cursor: str | None = None, max_bytes: int | None = None) -> dict[str, Any]:
    """`fact get-valid-at --json` and the `fact_get_valid_at` tool, from the files or the replica: one page,
    `{"items": [facts], "next_cursor", "remaining"}`; a fact with code anchors carries `code_status`
    (memstack/anchors/used.py), as in `history_document` and `each_valid_at`."""
    found = reader.valid_at_page(given_or_none(ts, "ts"), subject, given_or_none(as_of, "as-of"), limit=limit,
                                 cursor=cursor, max_bytes=max_bytes)
    return found.document(with_code_status(reader.code_store(), found.items))


def each_valid_at(store: Store, *, ts: Any, as_of: Any = None) -> Iterator[Fact]:
    """`fact get-valid-at` of every subject, the whole answer streamed from the fact index (never held whole);
    the same times as `get_valid_at_document`, `now` included."""
    from memstack.kb.index import queries  # lazy: the fact index (sqlite3)

    instant, _, known = factstore.query_args(given_ts(ts, "ts"), None, given_or_none(as_of, "as-of"))
    shown = Shown.in_store(store.root)
    return _with_status(store.root, shown.records(queries.each_valid_at(store.root, instant, known,
                                                                        shown.forgotten)))


def _with_status(root: Path, found: Iterator[Fact]) -> Iterator[Fact]:
    with CodeStatus(root) as status:
        yield from status.each(found)


def history_document(reader: FactReader, *, subject: Any, limit: Any = None, cursor: str | None = None,
                     max_bytes: int | None = None) -> dict[str, Any]:
    found = reader.history_page(subject, limit=limit, cursor=cursor, max_bytes=max_bytes)
    return found.document(with_code_status(reader.code_store(), found.items))


def invalidate_document(store: Store, *, subject: Any, predicate: Any, valid_to: Any = None,
                        recorded_at: Any = None, object: Any = None) -> list[Fact]:
    """`fact invalidate --json` and the `fact_invalidate` tool; valid_to not given (or `now`) is now."""

    valid_to, recorded_at = given_or_none(valid_to, "valid-to"), given_or_none(recorded_at, "recorded-at")
    return factstore.invalidate(store.root, subject=subject, predicate=predicate, object=object,
                                valid_to=now_ms() if valid_to is None else valid_to, recorded_at=recorded_at,
                                clock=now_ms)
