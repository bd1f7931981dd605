"""Every fact of the store, streamed out: as a ferrox fact store, or as JSON lines.

The fact files are read a line at a time, so memory stays bounded by one fact, never
a file or the store. Facts come in file order (agents, then
months, then as appended). `at` keeps only the facts valid at that instant.

- `ferrox`: `{"facts": [...]}` with the seed's seven fields in the seed's order, one fact
  a line, what `memstack import ferrox` reads back (docs/ferrox.md).
- `jsonl`: each fact as memstack keeps it (every field), one JSON object a line.
- `knowledge`: one fact view (`--table`, default knowledge) as a single JSON array, every shard's
  entries in view order with their `distilled_at` (ADR-0004's one-file form), made from the fact files.

Every form shows what a read shows: a forgotten fact without its content, a credential redacted.
"""

import os
from collections.abc import Iterator
from pathlib import Path
from typing import BinaryIO

import orjson

from memstack.base import jsonio, logfiles, progress
from memstack.base.errors import MemstackError, bad
from memstack.base.shown import Shown
from memstack.kb import factfiles, facts, views
from memstack.kb.facts import Fact
from memstack.kb.ferrox import FIELDS
from memstack.repo.sources import WorktreeSource

FORMATS = ("ferrox", "jsonl", "knowledge")


def stored(store: Path, at: int | None = None) -> Iterator[Fact]:
    """Every fact of every fact file (valid at `at`, if given), read a line at a time; a forgotten one without
    its content, a credential redacted (docs/forgetting.md)."""
    listed = factfiles.list_files(store)
    shown = Shown.in_store(store)
    for relpath, _ in progress.each(listed, len(listed), "exporting", "files"):
        with open(store / relpath, "rb") as lines:
            for number, line in enumerate(lines, start=1):
                if not line.endswith(b"\n"):
                    logfiles.check_tail(store / relpath, relpath)  # a torn last line: say so
                fact = jsonio.loads(line, f"{relpath}:{number}")
                if not isinstance(fact, dict):
                    raise MemstackError(f"{relpath}:{number}: I5 a line must be a JSON object — repair the line")
                if at is None or facts.is_valid_at(fact, at):
                    yield shown.record(fact)


def ferrox_chunks(found: Iterator[Fact]) -> Iterator[bytes]:
    yield b'{"facts": ['
    first = True
    for fact in found:
        yield (b"\n  " if first else b",\n  ") + orjson.dumps({k: fact[k] for k in FIELDS})
        first = False
    yield b"]}\n" if first else b"\n]}\n"


def jsonl_chunks(found: Iterator[Fact]) -> Iterator[bytes]:
    for fact in found:
        yield jsonio.dumps_line(fact)


def view_chunks(lines: Iterator[bytes]) -> Iterator[bytes]:
    """A view's entries as one JSON array, one entry a line."""
    first = True
    for line in lines:
        yield (b"[\n" if first else b",\n") + line
        first = False
    yield b"[]\n" if first else b"\n]\n"


def write(store: Path, form: str, out: BinaryIO, at: int | None = None, table: str = "knowledge") -> int:
    """Write the store's facts to `out` in `form` (`knowledge`: the open facts of `table`); returns how many."""
    count = 0
    if form == "knowledge":  # as a read shows them: a forgotten entry without its content, a credential redacted
        entries = Shown.in_store(store).records(orjson.loads(text) for text in views.table_lines(WorktreeSource(store),
                                                                                                  table))
        for chunk in view_chunks(views.line(entry) for entry in entries):
            count += 1
            out.write(chunk)
        return count - 1

    def counted() -> Iterator[Fact]:
        nonlocal count
        for fact in stored(store, at):
            count += 1
            yield fact

    chunks = ferrox_chunks(counted()) if form == "ferrox" else jsonl_chunks(counted())
    for chunk in chunks:
        out.write(chunk)
    return count


def write_file(store: Path, form: str, path: Path, at: int | None = None, table: str = "knowledge") -> int:
    """As `write`, into `path`, replaced whole only once complete (a failed export leaves the old file)."""
    if path.is_dir():
        raise bad("--output", repr(str(path)), "a folder: name the file to write")
    temp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        out = open(temp, "wb")  # closed by the with below
    except OSError as exc:  # said of the file asked for, not of the temporary one beside it
        raise bad("--output", repr(str(path)), "{why}", why=exc.strerror or str(exc)) from None
    try:
        with out:
            count = write(store, form, out, at, table)
            out.flush()
            os.fsync(out.fileno())
        os.replace(temp, path)
    finally:
        temp.unlink(missing_ok=True)
    return count
