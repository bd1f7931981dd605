"""Invariants of the fact store over any sequence of adds, captures and invalidations (hypothesis).

Each example runs its operations against a fresh store folder, some of them
"quietly" (the change reaches the files without the index being told, as a
`git pull` brings it) and with the index sometimes deleted, then checks:
nothing is ever removed and closings touch only the closing fields; a closed
fact meets its successor exactly; a value kept through contradicting captures
never has two versions valid at once; the index answers exactly what a scan of
the files answers, at every instant; and `as_of` a past transaction time gives
what the store answered back then.
"""

import tempfile
from contextlib import ExitStack
from pathlib import Path
from typing import Any
from unittest import mock

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memstack.base.errors import MemstackError
from memstack.kb import factfiles, facts, factstore
from memstack.kb.index import build, catchup, queries, schema

DAY = 86_400_000
BASE = 1_767_225_600_000  # 2026-01-01: transaction times run from here, 4 days a step (a file a month)
SUBJECTS = ("acme", "beta")
PREDICATES = ("decided", "Prefers", "likes", "status")  # `status` is kept single-valued: contradicts only
PROBES = range(-500, 13_001, 500)  # every valid-time boundary (multiples of 1000) and the points between

valid_times = st.integers(0, 12).map(lambda k: k * 1000)
quiet = st.booleans()
operations = st.one_of(
    st.tuples(st.just("add"), st.sampled_from(SUBJECTS), st.sampled_from(PREDICATES), st.sampled_from("xyz"),
              valid_times, quiet),
    st.tuples(st.just("capture"), st.sampled_from(SUBJECTS), st.sampled_from(PREDICATES), st.sampled_from("xyz"),
              valid_times, st.booleans()),
    st.tuples(st.just("invalidate"), st.sampled_from(SUBJECTS), st.sampled_from(PREDICATES), valid_times, quiet),
    st.tuples(st.just("drop-index")),
)


def by_id(root: Path) -> dict[str, dict[str, Any]]:
    return {f["id"]: f for f in factfiles.scan(root)}


def raw(root: Path) -> dict[str, bytes]:
    return {rel: (root / rel).read_bytes() for rel, _ in factfiles.list_files(root)}


def apply(root: Path, step: int, op: tuple[Any, ...]) -> None:
    recorded = BASE + step * 4 * DAY + 1
    agent = ("alice", "bob")[step // 3 % 2]  # runs of one writer: files grow, and new ones start
    kind = op[0]
    if kind == "drop-index":
        schema.DB.drop(root)
        return
    with ExitStack() as stack:
        if op[-1] is True and kind != "capture":  # the change arrives behind the index's back
            stack.enter_context(mock.patch.object(catchup, "note_append", lambda *a, **k: None))
            stack.enter_context(mock.patch.object(catchup, "note_rewrite", lambda *a, **k: None))
        if kind == "add" and op[2] != "status":
            factstore.add(root, subject=op[1], predicate=op[2], object=op[3], valid_from=op[4],
                          recorded_at=recorded, agent=agent)
        elif kind in ("add", "capture"):
            factstore.capture(root, subject=op[1], predicate=op[2], object=op[3], valid_from=op[4],
                              recorded_at=recorded, agent=agent, contradicts=op[5] or op[2] == "status")
        else:
            factstore.invalidate(root, subject=op[1], predicate=op[2], valid_to=op[3], recorded_at=recorded)


def answers(root: Path) -> dict[int, list[dict[str, Any]]]:
    return {ts: factstore.get_valid_at(root, ts) for ts in PROBES}


@settings(max_examples=50, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(operations, max_size=14))
def test_fact_store_invariants(ops: list[tuple[Any, ...]]) -> None:
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        then: list[tuple[int, dict[int, list[dict[str, Any]]]]] = [(BASE - 1, answers(root))]
        for step, op in enumerate(ops):
            before, before_raw = by_id(root), raw(root)
            try:
                apply(root, step, op)
            except MemstackError as exc:
                assert exc.code == 2
                assert raw(root) == before_raw, f"{op} was refused but wrote"
            after = by_id(root)
            # Nothing is ever removed; a closed fact never changes; an open one changes only by closing.
            assert before.keys() <= after.keys()
            for fact_id, old in before.items():
                new = after[fact_id]
                assert new == old or facts.closing_problem(old, new) is None, (old, new)
            then.append((BASE + step * 4 * DAY + 1, answers(root)))

        everything = by_id(root)
        for fact in everything.values():
            assert fact["valid_to"] is None or fact["valid_to"] > fact["valid_from"]
            if fact["superseded_by"] is not None:  # a fact and its successor meet: no gap, no overlap
                assert everything[fact["superseded_by"]]["valid_from"] == fact["valid_to"]
        for subject in SUBJECTS:  # a value kept through contradicting captures: one version at a time
            windows = sorted((f["valid_from"], f["valid_to"]) for f in everything.values()
                             if (f["subject"], f["predicate"]) == (subject, "status"))
            for (_, end), (start, _) in zip(windows, windows[1:], strict=False):
                assert end is not None and end <= start, windows

        # The index answers exactly what the files say, at every instant.
        for ts in PROBES:
            truth = factstore.scan_valid_at(root, ts)
            assert factstore.get_valid_at(root, ts) == truth
            assert sorted(f["id"] for f in truth) == sorted(  # brute force, spelled out
                i for i, f in everything.items()
                if f["valid_from"] <= ts and (f["valid_to"] is None or ts < f["valid_to"]))
            for subject in SUBJECTS:
                assert factstore.get_valid_at(root, ts, subject) == [f for f in truth if f["subject"] == subject]
                assert factstore.recall(root, subject, ts, 3) == factstore.scan_recall(root, subject, ts, 3)
        for subject in SUBJECTS:
            assert factstore.history(root, subject) == factstore.scan_history(root, subject)

        # As of a past transaction time, the store answers what it answered then (and what the files say).
        for recorded, answered in then:
            for ts, found in answered.items():
                assert factstore.get_valid_at(root, ts, as_of=recorded) == found, (recorded, ts)
                assert facts.valid_at(everything.values(), ts, as_of=recorded) == found, (recorded, ts)


@settings(max_examples=50, deadline=None)
@given(st.lists(st.tuples(st.integers(-3, 3), st.one_of(st.none(), st.integers(-3, 3)), st.integers(0, 3),
                          st.one_of(st.none(), st.integers(0, 3))), max_size=6), st.integers(-4, 4),
       st.integers(-1, 4))
def test_the_reference_window_logic_is_the_definition(windows: list[tuple[int, int | None, int, int | None]],
                                                      ts: int, as_of: int) -> None:
    """facts.valid_at is exactly: valid_from <= ts < valid_to, as believed at as_of."""
    made = []
    for number, (start, end, recorded, expired) in enumerate(windows):
        fact = facts.make(subject="s", predicate="p", object="o", valid_from=start, recorded_at=recorded,
                          agent="alice", id=f"fact-{number:04d}")
        if end is not None and expired is not None:
            fact = {**fact, "valid_to": end, "expired_at": expired}
        made.append(fact)
    expected_now = [f for f in made if f["valid_from"] <= ts and (f["valid_to"] is None or ts < f["valid_to"])]
    assert facts.valid_at(made, ts) == sorted(expected_now, key=facts.listing_key)
    expected_then = []
    for f in made:
        if f["recorded_at"] > as_of:
            continue
        end = f["valid_to"] if f["expired_at"] is not None and f["expired_at"] <= as_of else None
        if f["valid_from"] <= ts and (end is None or ts < end):
            expected_then.append(f["id"])
    assert [f["id"] for f in facts.valid_at(made, ts, as_of=as_of)] == sorted(
        expected_then, key=lambda i: facts.listing_key(next(f for f in made if f["id"] == i)))


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(operations, max_size=14))
def test_while_the_index_catches_up_the_files_answer_the_same(ops: list[tuple[Any, ...]]) -> None:
    """A fresh clone: no index yet and too much to index in one query, so queries read the files."""
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        for step, op in enumerate(ops):
            try:
                apply(root, step, op)
            except MemstackError:
                pass
        transaction_times = [BASE + step * 4 * DAY + 1 for step in range(len(ops))]
        expected = {(ts, subject, as_of): factstore.scan_valid_at(root, ts, subject, as_of)
                    for ts in PROBES for subject in SUBJECTS for as_of in (None, *transaction_times[::3])}
        schema.DB.drop(root)
        builds: list[Path] = []
        with mock.patch.object(build, "BUILD_BUDGET", 0), \
                mock.patch.object(build, "start_build", builds.append):
            for (ts, subject, as_of), answer in expected.items():
                assert factstore.get_valid_at(root, ts, subject, as_of) == answer
            for subject in SUBJECTS:
                assert factstore.history(root, subject) == factstore.scan_history(root, subject)
                assert factstore.recall(root, subject, 6000, 2) == factstore.scan_recall(root, subject, 6000, 2)
                for predicate in PREDICATES:
                    assert factstore.open_facts(root, subject, predicate) == [
                        f for f in factstore.scan_history(root, subject)
                        if f["predicate"] == predicate and facts.is_open(f)]
            everything = list(factfiles.scan(root))
            ids = [f["id"] for f in everything[:3]] + ["missing-00000000"]
            assert {i: f for i, (_, f) in queries.locate(root, ids).items()} == {
                f["id"]: f for f in everything[:3]}
        assert set(builds) == ({root} if everything else set())  # and each asked for a background build
