"""The one JSON reader and writer: orjson, sorted keys, so file bytes are stable."""

import io
from collections.abc import Iterable, Iterator
from typing import Any

import orjson

from memstack.base.errors import MemstackError, bad


def dumps_line(obj: Any) -> bytes:
    """A compact, key-sorted JSON line ending in a newline (the JSONL record format)."""
    return compact(orjson.dumps(obj, option=orjson.OPT_SORT_KEYS | orjson.OPT_APPEND_NEWLINE))


def compact(data: bytes) -> bytes:
    """A copy of `data` that holds only its bytes: what orjson.dumps returns keeps its whole write
    buffer (~8 KiB whatever the length), so 100,000 kept lines would hold ~800 MiB instead of ~30."""
    return bytes(memoryview(data))


def dumps_pretty(obj: Any) -> bytes:
    """Indented, key-sorted JSON ending in a newline (derived views, SOIL records)."""
    return orjson.dumps(obj, option=orjson.OPT_SORT_KEYS | orjson.OPT_INDENT_2 | orjson.OPT_APPEND_NEWLINE)


def dumps_kept(obj: Any) -> bytes:
    """Indented JSON ending in a newline, keys in the order they come: a file a person also edits
    (`.claude/settings.json`), whose keys keep the order that person gave them."""
    return orjson.dumps(obj, option=orjson.OPT_INDENT_2 | orjson.OPT_APPEND_NEWLINE)


def loads(data: bytes | str, where: str = "input") -> Any:
    try:
        return orjson.loads(data)
    except orjson.JSONDecodeError as exc:
        raise MemstackError(f"{where}: invalid JSON ({exc})") from None


def records_holding(data: bytes, key: bytes, where: str) -> list[dict[str, Any]]:
    """The JSON objects on the lines of JSONL `data` that hold the bytes `key`; only those lines are parsed
    (`memstack anchors` and willow.md's To re-verify find the few anchored records of a large fact file)."""
    if key not in data:
        return []
    found = [loads(line, where) for line in data.splitlines() if key in line]
    return [record for record in found if type(record) is dict]


def parse_value(text: str, field: str) -> Any:
    """A JSON value given on the command line; a number that is not finite is refused."""
    try:
        return orjson.loads(text)
    except orjson.JSONDecodeError as exc:
        raise bad(field, None, "not valid JSON ({exc})", exc=exc) from None


def parse_jsonl(data: bytes, relpath: str) -> list[dict[str, Any]]:
    """Every record of JSONL bytes; an empty or bad line is an error naming `relpath:line`."""
    return list(iter_jsonl(data, relpath))


def iter_jsonl(data: bytes, relpath: str, first: int = 1) -> Iterator[dict[str, Any]]:
    """The records of JSONL bytes one at a time (a caller keeps only what it needs, and no list of the
    lines is made), as parse_jsonl checks them. `first`: the number of the first line (a file read in parts)."""
    for number, raw in enumerate(io.BytesIO(data), start=first):
        try:
            record = orjson.loads(raw)  # orjson takes the newline (and \r) as whitespace
        except orjson.JSONDecodeError as exc:
            if not raw.strip():
                raise MemstackError(f"{relpath}:{number}: I5 empty line — remove it") from None
            raise MemstackError(f"{relpath}:{number}: I5 line is not valid JSON ({exc}) — repair the line"
                                " (a merge conflict left in it?)") from None
        if not isinstance(record, dict):
            raise MemstackError(f"{relpath}:{number}: I5 a line must be a JSON object — repair the line")
        yield record


def line_runs(pieces: Iterable[bytes], first: int = 1) -> Iterator[tuple[int, bytes]]:
    """The bytes given a piece at a time (a blob streamed from git, a file, a spill), as runs of whole
    lines, each with the number of its first line (`first`: the first's); a last line without its
    newline comes last, alone. The pieces are read to their end, also when the caller stops early or
    fails: a git stream must be, before git is asked anything else."""
    pieces = iter(pieces)
    number, carry = first, b""
    try:
        for piece in pieces:
            chunk = carry + piece
            cut = chunk.rfind(b"\n") + 1
            if cut:
                yield number, chunk[:cut]
                number += chunk.count(b"\n", 0, cut)
            carry = chunk[cut:]
        if carry:
            yield number, carry
    finally:
        for _ in pieces:
            pass


def iter_jsonl_pieces(pieces: Iterable[bytes], relpath: str) -> Iterator[dict[str, Any]]:
    """The records of JSONL bytes given a piece at a time (a blob streamed from git), as iter_jsonl."""
    for number, run in line_runs(pieces):
        yield from iter_jsonl(run, relpath, number)
