"""The one JSON reader and writer: orjson, sorted keys, so file bytes are stable."""

from typing import Any

import orjson

from memstack.errors import MemstackError


def dumps_line(obj: Any) -> bytes:
    """A compact, key-sorted JSON line ending in a newline (the JSONL record format)."""
    return orjson.dumps(obj, option=orjson.OPT_SORT_KEYS | orjson.OPT_APPEND_NEWLINE)


def dumps_pretty(obj: Any) -> bytes:
    """Indented, key-sorted JSON ending in a newline (derived views, SOIL records)."""
    return orjson.dumps(obj, option=orjson.OPT_SORT_KEYS | orjson.OPT_INDENT_2 | orjson.OPT_APPEND_NEWLINE)


def loads(data: bytes | str, where: str = "input") -> Any:
    try:
        return orjson.loads(data)
    except orjson.JSONDecodeError as exc:
        raise MemstackError(f"{where}: invalid JSON ({exc})") from None


def parse_value(text: str, field: str) -> Any:
    """A JSON value given on the command line; a number that is not finite is refused."""
    try:
        return orjson.loads(text)
    except orjson.JSONDecodeError as exc:
        raise MemstackError(f"bad {field}: not valid JSON ({exc})") from None
