"""I7 on text, and the line helpers every rule uses: lines, line numbers, JSON of one line."""

from collections.abc import Iterator
from typing import Any

import orjson

from memstack.base.patterns import lazy
from memstack.integrity.violations import Violation

MAX_PER_FILE = 50  # violations listed per file; the rest are counted in one more line


def cap(found: list[Violation], path: str) -> list[Violation]:
    if len(found) <= MAX_PER_FILE:
        return found
    rest = len(found) - MAX_PER_FILE
    return found[:MAX_PER_FILE] + [Violation(path, 0, found[MAX_PER_FILE].rule,
                                             f"and {rest} more violations in this file", "fix the ones above first")]


def lines(data: bytes) -> list[bytes]:
    """The lines of a file, without their newlines (a last line without one counts as a line)."""
    if not data:
        return []
    parts = data.split(b"\n")
    if parts[-1] == b"":
        parts.pop()
    return parts


def line_of(data: bytes, offset: int) -> int:
    return data.count(b"\n", 0, offset) + 1


def final_newline(path: str, data: bytes) -> list[Violation]:
    """The file ends in a newline (an empty file passes: an empty log)."""
    if not data or data.endswith(b"\n"):
        return []
    return [Violation(path, line_of(data, len(data)), "I7", "the last line has no final newline",
                      "end the file with a newline")]


CR_WHAT = "holds a carriage return (CR): memory files end their lines with LF alone"
CR_FIX = ("remove the CR (a CRLF line ending: the store's .gitattributes makes git store memory files with LF;"
          " restore it if it is gone)")


def carriage_return(path: str, data: bytes, number: int | None = None) -> list[Violation]:
    """No CR byte: line endings are part of a record's bytes, and memory files use LF alone (a CRLF
    line committed where .gitattributes no longer converts it could never be cleaned: I1 seals it).
    `number`: the line's number when `data` is one line, else it is found."""
    at = data.find(b"\r")
    if at < 0:
        return []
    return [Violation(path, number if number is not None else line_of(data, at), "I7", CR_WHAT, CR_FIX)]


def text(path: str, data: bytes, lf_only: bool = True) -> list[Violation]:
    """UTF-8, not empty, ending in a newline, with no CR unless not `lf_only` (memstack.yaml, which is not
    memory) (JSONL logs are checked line by line instead)."""
    try:
        data.decode("utf-8")
    except UnicodeDecodeError as exc:
        return [Violation(path, line_of(data, exc.start), "I7",
                          f"is not UTF-8 (byte 0x{data[exc.start]:02x})", "save the file as UTF-8")]
    if not data:
        return [Violation(path, 0, "I7", "is empty", "write its content, or delete it")]
    return (carriage_return(path, data) if lf_only else []) + final_newline(path, data)


def parse(raw: bytes) -> tuple[Any, str]:
    try:
        return orjson.loads(raw), ""
    except orjson.JSONDecodeError as exc:
        return None, f"is not valid JSON ({exc})"


class Numbered:
    """The lines of `data` from byte `start` on, without their newlines, each with its line number
    (`first` for the first), as `lines` splits them: iterable any number of times, never listed, so
    the lines a commit appends to a log (a first promotion's ledger: a line per intake record of the
    store) cost one line at a time, not a copy of each."""

    def __init__(self, data: bytes, start: int = 0, first: int = 1) -> None:
        self.data, self.start, self.first = data, start, first

    def __iter__(self) -> Iterator[tuple[int, bytes]]:
        data, pos, number, end = self.data, self.start, self.first, len(self.data)
        while pos < end:
            at = data.find(b"\n", pos)
            if at < 0:
                yield number, data[pos:]
                return
            yield number, data[pos:at]
            number, pos = number + 1, at + 1


def appended_lines(new: bytes, start: int) -> Numbered:
    """The lines of `new` from byte `start` on, with their 1-based line numbers."""
    return Numbered(new, start, line_of(new, start))


COMMITTED_ID = lazy(rb'"id":"([^"\\]*)"')


def fact_of(raw: bytes) -> dict[str, Any] | None:
    record, problem = parse(raw)
    return record if not problem and isinstance(record, dict) and isinstance(record.get("id"), str) else None
