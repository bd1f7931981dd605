"""How large and how deep what a user hands memstack may be: memstack.yaml's `limits:` block.

A record is a line of a file that a person reviews in a pull request, and a query is a few words:

- `text_bytes` (default 64 KiB): one text a record holds: an intake record's content (and title, source,
  subject, predicate, object), a fact's subject, predicate and object, a Binder note.
- `value_bytes` (default 64 KiB): a SOIL value, as compact JSON.
- `query_bytes` (default 4 KiB): a search query.
- `json_depth` (default 64): how deeply a JSON value (a SOIL value) may nest.
- `handoff_bytes` (default 64 KiB): a sealed handoff, which every session's boot context carries (willow.md,
  the anchor, the SessionStart hook's context).
- `file_bytes` (default 10 MiB): a document `binder file` copies into the store, and the most any file or
  stdin a verb reads (`--file`, `nest FILE`, `test FILE`, a handoff) may hold (`read_input`: never read past it).

What is larger is refused (exit 2, a tool error over MCP) before any other work: not scanned, not
searched, not parsed further. Depth is measured without recursion, so no nesting can exhaust the stack.
memstack.yaml is read only when a value passes the smallest limit the schema allows (`FLOORS`): below it
nothing can be refused, so the common case costs nothing.
"""

import math
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson

from memstack.base import config
from memstack.base.errors import MemstackError, bad, os_problem

DEFAULTS = config.DEFAULTS["limits"]
# the schema's minimums
FLOORS = {"text_bytes": 1_024, "value_bytes": 1_024, "query_bytes": 64, "json_depth": 8, "file_bytes": 1_024,
          "handoff_bytes": 1_024}
_WHAT = {"text_bytes": "a record's text", "value_bytes": "a SOIL value", "query_bytes": "a search query",
         "file_bytes": "a filed document", "handoff_bytes": "a handoff"}


def limit(store: Path | None, name: str) -> int:
    """The limit `name` of the store's memstack.yaml (its default without a store, or when it says nothing)."""
    if store is None:
        return DEFAULTS[name]
    try:
        document = config.read(store).document
    except MemstackError:
        return DEFAULTS[name]  # a broken memstack.yaml is reported where it is read for its own sake
    return limit_of(document, name)


def limit_of(document: Any, name: str) -> int:
    """The limit `name` of a parsed memstack.yaml (its default when it says nothing or is broken)."""
    section = document.get("limits") if isinstance(document, dict) else None
    value = section.get(name) if isinstance(section, dict) else None
    return value if type(value) is int and value >= FLOORS[name] else DEFAULTS[name]


def read_input(store: Path | None, file: str | Path | None, field: str) -> str:
    """The UTF-8 text of `file` (None or the text "-": stdin), given as `field`, its line ends as LF alone (as Python's
    text files read them). At most `file_bytes` are read: a file or a stream that holds more (a device, an
    endless pipe) is refused, never read whole; so is a folder or text that is not UTF-8 (exit 2)."""
    most = limit(store, "file_bytes")
    path = None if file is None or file == "-" else file  # a Path named "-" is a file
    field, shown = ("stdin", None) if path is None else (field, repr(str(path)))
    try:
        if path is None:
            data = sys.stdin.buffer.read(most + 1) if sys.stdin is not None else b""
        else:
            with open(path, "rb") as handle:
                data = handle.read(most + 1)
    except FileNotFoundError:
        raise bad(field, shown, "no such file") from None
    except IsADirectoryError:
        raise bad(field, shown, "is a folder, not a file") from None
    except (OSError, ValueError) as exc:  # ValueError: stdin closed
        raise bad(field, shown, "{why}", why=os_problem(exc) if isinstance(exc, OSError) else "closed") from None
    if len(data) > most:
        raise bad(field, shown, "more than the {most:,} bytes memstack reads from a file or stdin (limits.file_bytes"
                  " in memstack.yaml)", most=most)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise bad(field, shown, "not UTF-8 text (byte 0x{byte:02x} at offset {at:,})", byte=data[exc.start],
                  at=exc.start) from None
    return text.replace("\r\n", "\n").replace("\r", "\n") if "\r" in text else text


def check_text(store: Path | None, field: str, value: Any, name: str = "text_bytes") -> None:
    """Refuse text `value` (given as `field`) longer in UTF-8 than the limit `name`."""
    if not isinstance(value, str) or len(value) <= FLOORS[name] // 4:  # 4 bytes a character at most
        return
    size = len(value.encode("utf-8", "surrogatepass"))
    if size > FLOORS[name] and size > (most := limit(store, name)):
        raise bad(field, None, "{size:,} bytes, more than the {most:,} {what} may hold (limits.{name} in"
                  " memstack.yaml)", size=size, most=most, what=_WHAT[name], name=name)


def _nodes(value: Any) -> Iterator[tuple[Any, int]]:
    """Every value inside a JSON value, itself included, with how deep it sits (0: itself), without recursion."""
    stack = [(value, 0)]
    while stack:
        item, level = stack.pop()
        yield item, level
        if isinstance(item, (list, tuple)):
            stack.extend((child, level + 1) for child in item)
        elif isinstance(item, dict):
            stack.extend((child, level + 1) for child in item.values())


def depth(value: Any) -> int:
    """How deeply a JSON value nests (a scalar 0, `[]` 1, `[[]]` 2), without recursion."""
    return max((level + 1 for item, level in _nodes(value) if isinstance(item, (list, tuple, dict))), default=0)


def finite(value: Any) -> bool:
    """Whether every number in a JSON value is finite (JSON has no Infinity or NaN; Python's parser takes them,
    and `1e400`, and orjson writes them as null)."""
    return not any(isinstance(item, float) and not math.isfinite(item) for item, _ in _nodes(value))


def check_value(store: Path | None, field: str, value: Any) -> None:
    """Refuse a JSON value larger (its compact JSON) than `value_bytes` or nested deeper than `json_depth`.

    The size comes first (orjson writes 10 MB in milliseconds, and refuses past 254 levels itself), so the
    depth walk only ever visits a value of bounded size, or one too deep for orjson."""
    try:
        size: int | None = len(orjson.dumps(value))
    except orjson.JSONEncodeError:  # nested past orjson's own limit: the depth says so below
        size = None
    if size is not None and size > FLOORS["value_bytes"] and size > (most := limit(store, "value_bytes")):
        raise bad(field, None, "{size:,} bytes of JSON, more than the {most:,} {what} may hold (limits.value_bytes"
                  " in memstack.yaml)", size=size, most=most, what=_WHAT["value_bytes"])
    found = depth(value)
    if found > FLOORS["json_depth"] and found > (most := limit(store, "json_depth")):
        raise bad(field, None, "nested {found} deep, deeper than the {most} a JSON value may nest"
                  " (limits.json_depth in memstack.yaml)", found=found, most=most)
