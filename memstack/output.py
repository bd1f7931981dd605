"""What a command prints: one JSON document with --json, readable text otherwise."""

import sys
from collections.abc import Callable, Iterable
from typing import Any

import orjson


def render_json(document: Any) -> str:
    """The one JSON document `--json` prints (and an MCP tool returns): indented, keys sorted."""
    return orjson.dumps(document, option=orjson.OPT_INDENT_2 | orjson.OPT_SORT_KEYS).decode()


def emit(args: Any, document: Any, human: str | Callable[[], str] | None = None) -> None:
    if getattr(args, "json", False) or human is None:
        sys.stdout.write(render_json(document) + "\n")
        return
    text = human() if callable(human) else human
    if text:
        sys.stdout.write(text if text.endswith("\n") else text + "\n")


def note(message: str) -> None:
    """Progress and remarks go to stderr, so stdout stays one document."""
    print(message, file=sys.stderr)


def emit_each(args: Any, items: Iterable[Any], line: Callable[[Any], str], empty: str) -> None:
    """A list written item by item (never held whole): the bytes `emit(args, list(items), ...)` would
    write, `line(item)` for each item as text, `empty` when there is none."""
    out = sys.stdout
    as_json = getattr(args, "json", False)
    count = 0
    for item in items:
        if as_json:
            text = orjson.dumps(item, option=orjson.OPT_INDENT_2 | orjson.OPT_SORT_KEYS).decode()
            out.write(("[\n" if not count else ",\n") + "  " + text.replace("\n", "\n  "))
        else:
            out.write(line(item) + "\n")
        count += 1
    if as_json:
        out.write("\n]\n" if count else "[]\n")
    elif not count and empty:
        out.write(empty + "\n")
