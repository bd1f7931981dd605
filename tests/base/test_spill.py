"""base/spill.py: the one way memstack spills to disk (a view's lines, a promotion's facts, a sort)."""

import random

import pytest

from memstack.base import spill


def test_a_spill_gives_back_each_line_in_any_order(monkeypatch: pytest.MonkeyPatch) -> None:
    """Lines shorter and longer than the read window, asked for out of order, and lines written after a
    read, all come back whole."""
    rng = random.Random(7)
    monkeypatch.setattr(spill, "WINDOW", 64)
    spool = spill.Spill()
    lines = [b"x" * rng.randrange(0, 300) + b"\n" for _ in range(300)]
    where = [spool.write(line) for line in lines]
    order = list(range(len(lines)))
    rng.shuffle(order)
    assert [spool.line(where[i]) for i in order] == [lines[i] for i in order]
    assert [spool.line(at) for at in where] == lines
    late = spool.write(b'{"late":1}\n')
    assert spool.line(late) == b'{"late":1}\n' and spool.line(where[5]) == lines[5]
    assert b"".join(spool.pieces(100)) == b"".join(lines) + b'{"late":1}\n'
    assert spool.size() == sum(map(len, lines)) + 11


@pytest.mark.parametrize("run", [1, 2, 7, 1000])
def test_sorted_runs_sorts_like_sorted_whatever_the_run(monkeypatch: pytest.MonkeyPatch, run: int) -> None:
    """Items spilled in runs and merged come out as sorted() gives them, ties in the order given."""
    monkeypatch.setattr(spill, "RUN", run)
    rng = random.Random(run)
    items = [(rng.randrange(20), n, "x" * rng.randrange(5)) for n in range(200)]
    assert list(spill.sorted_runs(items, key=lambda item: item[0])) == sorted(items, key=lambda item: item[0])
    assert list(spill.sorted_runs([], key=lambda item: item)) == []


def test_a_spill_closed_or_dropped_releases_its_file() -> None:
    spool = spill.Spill()
    spool.write(b"a\n")
    handle = spool.file
    spool.close()
    assert handle.closed
    other = spill.Spill()
    handle = other.file
    del other
    assert handle.closed
