"""Spilling to disk: what is too large to hold goes to a temporary file, one way everywhere.

- `Spill`: bytes appended to an anonymous temporary file (gone when the spill is closed or let go),
  read back by position, never mapped: a piece at a time (`pieces`, so a spill is a `files.Pieces`),
  any range (`pread`), or a line by the offset `write` returned (`line`, through a window: lines asked
  for nearly in the order they were written cost about one read a window). What uses it: a view's
  list of lines, the facts a bulk promotion makes, the bytes a log appends past what is held, a
  commit's view blob read by position.
- `sorted_runs`: an external sort. Items are sorted in memory RUN at a time, each full run pickled to
  one spill, and the runs merged, so sorting any number of items holds one run.

A review's records go to a temporary SQLite database instead (review/workspace.py): it is queried in
several orders and counted, not read back once.
"""

import heapq
import io
import os
import tempfile
import weakref
from collections.abc import Callable, Iterable, Iterator
from typing import Any, TypeVar

T = TypeVar("T")

PIECE = 1 << 20  # bytes `pieces` gives at a time
WINDOW = 1 << 20  # bytes `line` reads at a time
RUN = 20_000  # items `sorted_runs` sorts in memory at a time (a view's lines: ~15 MiB)


class Spill:
    """An append-only temporary file, read back by position."""

    def __init__(self, prefix: str = "memstack-spill-") -> None:
        self.file = tempfile.TemporaryFile(prefix=prefix)
        self._finalizer = weakref.finalize(self, self.file.close)
        self.length = 0
        self._dirty = False
        self._start, self._window = 0, b""  # `line`'s window: the file's bytes from `_start`

    def write(self, data: bytes) -> int:
        """Append `data`; returns where it starts."""
        at = self.length
        self.file.write(data)
        self.length += len(data)
        self._dirty = True
        return at

    def fileno(self) -> int:
        self._flush()
        return self.file.fileno()

    def size(self) -> int:
        return self.length

    def pread(self, at: int, count: int) -> bytes:
        self._flush()
        return os.pread(self.file.fileno(), count, at)

    def pieces(self, piece: int = PIECE) -> Iterator[bytes]:
        for at in range(0, self.length, piece):
            yield self.pread(at, min(piece, self.length - at))

    def line(self, at: int) -> bytes:
        """The line (with its newline) that starts at `at`."""
        self._flush()
        offset = at - self._start
        end = self._window.find(b"\n", offset) if 0 <= offset < len(self._window) else -1
        if end < 0:  # outside the window, or running past it: a new window from `at`
            self._start, offset, self._window = at, 0, self.pread(at, WINDOW)
            end = self._window.find(b"\n")
            while end < 0 and self._start + len(self._window) < self.length:  # a line longer than a window
                self._window += self.pread(self._start + len(self._window), WINDOW)
                end = self._window.find(b"\n")
        return self._window[offset:end + 1]

    def close(self) -> None:
        self._finalizer()

    def _flush(self) -> None:
        if self._dirty:
            self.file.flush()
            self._dirty, self._window = False, b""


def sorted_runs(items: Iterable[T], key: Callable[[T], Any]) -> Iterator[T]:
    """`items` (picklable) sorted by `key`: in runs of RUN sorted in memory, spilled and merged (nothing
    is spilled when they fit in one run)."""
    run: list[T] = []
    spill: Spill | None = None
    runs: list[tuple[int, int]] = []  # (offset, items) of each sorted run in the spill

    def flush() -> None:
        nonlocal spill
        import pickle  # deferred: ~2 ms, and only a sort larger than a run spills

        run.sort(key=key)
        spill = spill or Spill("memstack-runs-")
        start = spill.length
        for item in run:
            spill.write(pickle.dumps(item, protocol=pickle.HIGHEST_PROTOCOL))
        runs.append((start, len(run)))
        run.clear()

    for item in items:
        run.append(item)
        if len(run) >= RUN:
            flush()
    if spill is None:  # everything fits in one run
        run.sort(key=key)
        yield from run
        return
    if run:
        flush()
    yield from heapq.merge(*(_read_run(spill, offset, count) for offset, count in runs), key=key)


class _Reader(io.RawIOBase):
    """A spill read from `at` on, with a position of its own (the runs of a merge are read in turns)."""

    def __init__(self, spill: Spill, at: int) -> None:
        super().__init__()
        self.spill, self.at = spill, at

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        data = self.spill.pread(self.at, len(buffer))
        buffer[:len(data)] = data
        self.at += len(data)
        return len(data)


def _read_run(spill: Spill, offset: int, count: int) -> Iterator[Any]:
    import pickle  # deferred with the spill's writing (flush in sorted_runs)

    handle = io.BufferedReader(_Reader(spill, offset), 1 << 16)
    for _ in range(count):
        yield pickle.load(handle)
