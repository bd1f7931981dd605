"""A view file's list read where asked, never held whole: the bytes of a view (held, a work-tree file
read by position, or a commit's blob spilled to a temporary file), the lines of its list found by a
binary search that parses O(log n) of them, and a patched view as runs of the base's bytes and new
lines (`Spliced`, read when it is written or hashed). What kb/viewpatch.py patches views with."""

import os
import weakref
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from memstack.base.spill import Spill
from memstack.repo.sources import GitSource

WINDOW = 1 << 12  # bytes a search in a view file reads at first (a line is ~200 bytes), doubled while not found


PIECE = 1 << 20  # bytes a patched view gives at a time


class Text:
    """A base view's bytes, read where asked: held (`data`), or in a file read by position (`fd`), so a
    view of a million records (189 MB) is never held whole. The file is the work tree's (a promotion
    replaces it with a rename: the open file still reads the old bytes) or a blob spilled to a
    temporary file; it is closed when the last patched view that reads it is let go."""

    def __init__(self, data: bytes = b"", fd: int | None = None, spilled: Spill | None = None) -> None:
        if spilled is not None:  # the spill owns its file, and goes when this is let go
            fd = spilled.fileno()
        elif fd is not None:
            weakref.finalize(self, os.close, fd)
        self.data, self.fd, self.spilled = data, fd, spilled
        self.length = len(data) if fd is None else os.fstat(fd).st_size

    def get(self, start: int, end: int) -> bytes:
        end = min(end, self.length)
        if self.fd is None:
            return self.data[start:end]
        return os.pread(self.fd, end - start, start) if end > start else b""

    def find(self, needle: bytes, start: int, end: int) -> int:
        if self.fd is None:
            return self.data.find(needle, start, end)
        window = WINDOW
        while start < end:
            stop = min(end, start + window)
            at = self.get(start, stop).find(needle)
            if at >= 0:
                return start + at
            if stop >= end:
                break
            start, window = stop - len(needle) + 1, min(window * 2, PIECE)
        return -1

    def rfind(self, needle: bytes, start: int, end: int) -> int:
        if self.fd is None:
            return self.data.rfind(needle, start, end)
        window = WINDOW
        while start < end:
            first = max(start, end - window)
            at = self.get(first, end).rfind(needle)
            if at >= 0:
                return first + at
            if first <= start:
                break
            end, window = first + len(needle) - 1, min(window * 2, PIECE)
        return -1

    def pieces(self, start: int = 0, end: int | None = None) -> Iterator[bytes]:
        end = self.length if end is None else end
        for at in range(start, end, PIECE):
            yield self.get(at, min(at + PIECE, end))

    def size(self) -> int:
        return self.length


def file_text(path: Path) -> Text | None:
    try:
        return Text(fd=os.open(path, os.O_RDONLY))
    except (FileNotFoundError, IsADirectoryError, NotADirectoryError):
        return None


def blob_text(source: GitSource, relpath: str) -> Text | None:
    """A file of a commit, spilled to a temporary file (None: none there, or empty: not a view)."""
    spilled = Spill("memstack-view-")
    for piece in source.stream(relpath):
        spilled.write(piece)
    if not spilled.size():
        spilled.close()
        return None
    return Text(spilled=spilled)


class Lines:
    """The lines of a view's list where they stand in the view's bytes (joined by ",\n", which no line
    holds: JSON keeps a newline in a string as `\n`), each known by the byte it starts at. A line is
    found by a binary search over the bytes that parses O(log n) lines; the lines are never listed."""

    def __init__(self, text: Text, start: int, end: int, count: int) -> None:
        self.text, self.start, self.end, self.count = text, start, end, count
        self.stop = end + 2  # where a line after the last would start

    def __len__(self) -> int:
        return self.count

    def line(self, pos: int) -> bytes:
        at = self.text.find(b",\n", pos, self.end)
        return self.text.get(pos, self.end if at < 0 else at)

    def after(self, pos: int) -> int:
        at = self.text.find(b",\n", pos, self.end)
        return self.stop if at < 0 else at + 2

    def __iter__(self) -> Iterator[tuple[int, bytes]]:
        """Every line and where it starts, the bytes read a piece at a time."""
        if not self.count:
            return
        pos, carry = self.start, b""
        for piece in self.text.pieces(self.start, self.end):
            chunk = carry + piece
            *whole, carry = chunk.split(b",\n")
            for line in whole:
                yield pos, line
                pos += len(line) + 2
        yield pos, carry

    def lower_bound(self, key: Any, parse: Callable[[bytes], Any]) -> int:
        """Where the first line whose key is not below `key` starts (`stop` when there is none)."""
        if not self.count:
            return self.stop
        lo, hi = self.start, self.stop  # lines starting before lo are below key; from hi on, not below
        while lo < hi:
            mid = (lo + hi) // 2
            pos = self.start if mid <= self.start else self.after(mid - 2)  # the first line at or after mid
            if pos >= hi:
                hi = mid
            elif parse(self.line(pos)) < key:
                lo = pos + 1
            else:
                hi = pos
        return self.start if lo <= self.start else min(self.after(lo - 2), self.stop)


Part = bytes | tuple[int, int]  # a new line, or a run of the base's lines: (first byte, end)


class Spliced:
    """A patched view: its head, then runs of the base view's lines and new lines joined by ",\n", then
    its tail. Its bytes are read from the base's when they are written or hashed (files.Pieces)."""

    def __init__(self, text: Text, head: bytes, parts: list[Part], tail: bytes) -> None:
        self.text, self.head, self.parts, self.tail = text, head, parts, tail

    def size(self) -> int:
        joins = 2 * max(len(self.parts) - 1, 0)
        return len(self.head) + joins + len(self.tail) + sum(
            len(p) if isinstance(p, bytes) else p[1] - p[0] for p in self.parts)

    def pieces(self) -> Iterator[bytes]:
        yield self.head
        for n, part in enumerate(self.parts):
            if n:
                yield b",\n"
            if isinstance(part, bytes):
                yield part
            else:
                yield from self.text.pieces(*part)
        yield self.tail


def lines_of(text: Text | None, head: bytes) -> Lines | None:
    """The lines of a view's list, when `text` is in the shape views.py writes."""
    if text is None or text.get(0, len(head)) != head:
        return None
    first = len(head)
    if text.length - first == 3 and text.get(first, text.length) == b"]}\n":
        return Lines(text, first, first, 0)
    if text.get(text.length - 4, text.length) != b"\n]}\n":
        return None
    return Lines(text, first, text.length - 4, count_of(text))


def count_of(text: Text) -> int:
    start = text.get(0, 64)
    return int(start[len(b'{"count": '):start.index(b",")])


def head_of(text: Text | None, name: str, key: str) -> bytes:
    """The head a view of `name` in `text` must begin with (its count as `text` has it)."""
    start = text.get(0, 64) if text is not None else b""
    count = start[start.find(b" ") + 1:start.find(b",")]
    return b'{"count": %s, "view": "%s", "%s": [\n' % (count, name.encode(), key.encode())


def find(lines: Lines, key: Any, parse: Callable[[bytes], Any]) -> int | None:
    pos = lines.lower_bound(key, parse)
    return pos if pos < lines.stop and parse(lines.line(pos)) == key else None


def apply(lines: Lines, remove: set[int], add: list[tuple[Any, bytes]],
           parse: Callable[[bytes], Any]) -> tuple[list[Part], int]:
    """The list's parts (runs of unchanged lines and new lines, to be joined by ",\n") without the lines
    starting at the positions `remove`, with the (key, line) pairs of `add` in key order; and how many
    lines it holds."""
    at: dict[int, list[bytes]] = {}  # the position of a line -> the new lines that go before it
    for key, line in sorted(add, key=lambda item: item[0]):
        at.setdefault(lines.lower_bound(key, parse), []).append(line)
    parts: list[Part] = []
    first = lines.start if len(lines) else lines.stop
    for cut in sorted(set(at) | remove | {lines.stop}):  # the cut at the end puts what goes after every line
        if first < cut:  # the untouched lines before the cut, in one run
            parts.append((first, cut - 2))
        parts.extend(at.get(cut, ()))
        first = lines.after(cut) if cut in remove else cut
    return parts, len(lines) - len(remove) + len(add)
