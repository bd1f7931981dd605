"""What a command prints: one JSON document with --json, readable text otherwise."""

import sys
from collections.abc import Callable, Iterable, Iterator
from typing import Any

import orjson

from memstack.base.names import CONTROL
from memstack.base.patterns import lazy

# Control characters but newline and tab: what a terminal takes as commands (escape sequences, a bell, a
# carriage return rewriting the line), which a record holding one must not give the reader's terminal.
_COMMANDS = lazy("[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def render_json(document: Any) -> str:
    """The one JSON document `--json` prints (and an MCP tool returns): indented, keys sorted."""
    return orjson.dumps(document, option=orjson.OPT_INDENT_2 | orjson.OPT_SORT_KEYS).decode()


def render_compact(document: Any) -> str:
    """The same document as compact JSON, keys sorted: the text of an MCP tool's answer (pages.MCP_MAX_BYTES
    bounds a list tool's)."""
    return orjson.dumps(document, option=orjson.OPT_SORT_KEYS).decode()


def emit(args: Any, document: Any, human: str | Callable[[], str] | None = None) -> None:
    if getattr(args, "json", False) or human is None:
        sys.stdout.write(render_json(document) + "\n")
        return
    text = human() if callable(human) else human
    if text:
        text = _plain(text)
        sys.stdout.write(text if text.endswith("\n") else text + "\n")


def _escaped(found: Any, text: str) -> str:
    return found.sub(lambda m: repr(m.group())[1:-1], text) if found.search(text) else text


def _plain(text: str) -> str:
    """Text output with the terminal's commands in it escaped (`\\x1b`), its lines and tabs kept."""
    return _escaped(_COMMANDS, text)


def shown(text: str) -> str:
    """`text` with each control character escaped (`\\n`, `\\x1b`), for a line printed on a terminal."""
    return _escaped(CONTROL, text)


def plural(count: int, word: str, many: str | None = None) -> str:
    """`1 record`, `2 records`, `0 records` (`many` for a plural that is not word + s)."""
    return f"{count} {word if count == 1 else many or word + 's'}"


def note(message: str) -> None:
    """Progress and remarks go to stderr, so stdout stays one document."""
    print(message, file=sys.stderr)


def emit_page(args: Any, document: dict[str, Any], human: Callable[[], str]) -> None:
    """A list verb's page (pages.Page.document): the document, or text and, when more remain, how to go on
    on stderr."""
    emit(args, document, human)
    if not getattr(args, "json", False) and document.get("next_cursor"):
        sys.stdout.flush()  # a reader gone (a closed pipe) ends the verb here, quietly: no "more" for no one
        note(f"… {document['remaining']} more; --cursor {document['next_cursor']}")


def emit_each(args: Any, items: Iterable[Any], line: Callable[[Any], str], empty: str) -> None:
    """A whole list as one page, written item by item (never held whole): the bytes `emit_page` would write
    for `{"items": [...], "next_cursor": null, "remaining": 0}`; as text, `line(item)` for each item, `empty`
    when there is none."""
    out = sys.stdout
    as_json = getattr(args, "json", False)
    count = 0
    for item in items:
        if as_json:
            text = orjson.dumps(item, option=orjson.OPT_INDENT_2 | orjson.OPT_SORT_KEYS).decode()
            out.write(('{\n  "items": [\n' if not count else ",\n") + "    " + text.replace("\n", "\n    "))
        else:
            out.write(_plain(line(item)) + "\n")
        count += 1
    if as_json:
        out.write(("\n  ],\n" if count else '{\n  "items": [],\n') + '  "next_cursor": null,\n  "remaining": 0\n}\n')
    elif not count and empty:
        out.write(empty + "\n")


def emit_streamed(fields: dict[str, Any]) -> None:
    """The bytes `emit` writes for the document `fields` with `--json`, written as they come: a value that
    is an iterator is a list written item by item (never held whole; an item given as bytes is one
    `render_json` made already); any other value is written as it is."""
    out = sys.stdout
    for n, name in enumerate(sorted(fields)):
        out.write(("{\n" if not n else ",\n") + "  " + orjson.dumps(name).decode() + ": ")
        value = fields[name]
        if not isinstance(value, Iterator):
            out.write(render_json(value).replace("\n", "\n  "))
            continue
        count = 0
        for item in value:
            text = item.decode() if isinstance(item, bytes) else render_json(item)
            out.write(("[\n" if not count else ",\n") + "    " + text.replace("\n", "\n    "))
            count += 1
        out.write("\n  ]" if count else "[]")
    out.write("\n}\n" if fields else "{}\n")
