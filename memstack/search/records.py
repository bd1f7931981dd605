"""What search indexes: the files of each layer and the searchable records each one holds.

| layer | files | a record | head (weighted) | body |
|---|---|---|---|---|
| facts | kb/facts/<agent>/YYYY-MM.jsonl | a line | subject | predicate, object |
| intake | intake/<agent>/YYYY-MM-DD.jsonl | a line | title | content, keywords, tags |
| handoffs | handoffs/<agent>/session_handoff-*.md | a `## ` section | its heading | its text |
| soil | store/<collection>/<key>.json | the file | collection/key | every string and number of the value |

A line that is not a record (bad JSON, a missing field) is left out: search
answers from what it can read; `memstack check` is what names such a line.
"""

import os
import zlib
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, NamedTuple

import orjson

from memstack.base import layout
from memstack.base.errors import MemstackError
from memstack.base.names import NAME_RE
from memstack.base.patterns import lazy
from memstack.base.times import parse_ts
from memstack.handoff.sealed import SECTION
from memstack.kb import factfiles

LAYERS = ("facts", "intake", "handoffs", "soil")
APPEND_ONLY = ("facts", "intake")  # read from where the index stopped when they grow (a closed fact: re-read)
_KINDS = {"facts": layout.FACTS, "intake": layout.INTAKE, "handoffs": layout.HANDOFF, "soil": layout.SOIL}
# A cheap first look at a name (a store holds thousands of intake days); layout.classify has the last word.
_NAMES = {"facts": factfiles.FILE_RE, "intake": lazy(r"\d{4}-\d{2}-\d{2}\.jsonl"),
          "handoffs": lazy(r"session_handoff-.*\.md"), "soil": lazy(r".+\.json")}


class Doc(NamedTuple):
    """One searchable record: where it is, its filter fields, its bi-temporal times, its text."""

    line: int
    ref: str  # the fact or intake id, the handoff section's heading, the SOIL record's collection/key
    agent: str | None
    tier: str | None
    tbl: str | None  # a fact's KB sub-tier (`table`)
    valid_from: int | None
    valid_to: int | None
    recorded_at: int | None  # when the store learned it (intake created_at, a handoff's date, SOIL updated_at)
    expired_at: int | None
    head: str
    body: str
    fields: str | None = None  # what a hit shows beside its snippet: JSON of a record's source (and a fact's triple)

    def sig(self) -> int:
        """A checksum of everything but a fact's closing fields (the one part of a record that may change)."""
        return zlib.crc32(orjson.dumps([self.ref, self.agent, self.tier, self.tbl, self.valid_from,
                                        self.recorded_at, self.head, self.body]))


TOPS = {"facts": "kb/facts", "intake": "intake", "handoffs": "handoffs", "soil": "store"}


def list_folders(store: Path) -> list[tuple[str, str, os.stat_result]]:
    """(layer, store-relative path, stat) of every folder holding a layer's files (one per agent or collection)."""
    found = []
    for layer, top in TOPS.items():
        try:
            with os.scandir(store / top) as entries:
                found += [(layer, f"{top}/{e.name}", e.stat(follow_symlinks=False)) for e in entries
                          if e.is_dir(follow_symlinks=False) and NAME_RE.fullmatch(e.name)]
        except (FileNotFoundError, NotADirectoryError):
            continue
    return found


def list_folder(store: Path, layer: str, folder: str) -> list[tuple[str, os.stat_result]]:
    """(store-relative path, stat) of the layer's files in one folder (links and other names left out)."""
    shape = _NAMES[layer]
    found = []
    try:
        with os.scandir(store / folder) as entries:
            for entry in entries:
                rel = f"{folder}/{entry.name}"
                if shape.fullmatch(entry.name) and entry.is_file(follow_symlinks=False) \
                        and (layer in ("intake", "facts") or layout.classify(rel).kind == _KINDS[layer]):
                    found.append((rel, entry.stat(follow_symlinks=False)))
    except (FileNotFoundError, NotADirectoryError):
        pass
    return found


def list_files(store: Path) -> list[tuple[str, str, os.stat_result]]:
    """(layer, store-relative path, stat) of every file search reads, sorted by path."""
    found = [(layer, rel, st) for layer, folder, _ in list_folders(store)
             for rel, st in list_folder(store, layer, folder)]
    return sorted(found, key=lambda item: item[1])


def parse(layer: str, relpath: str, data: bytes, start: int = 0) -> Iterator[Doc]:
    """The records of `data` (a file's bytes) from byte `start` (a line's start) on."""
    if layer in APPEND_ONLY:
        make = _fact if layer == "facts" else _intake
        number = data.count(b"\n", 0, start)
        end = data.rfind(b"\n") + 1  # an unfinished last line (a write in progress) waits for the next sync
        for line in data[start:end].split(b"\n")[:-1]:
            number += 1
            try:
                doc = make(orjson.loads(line), number)
            except (orjson.JSONDecodeError, KeyError, TypeError, AttributeError, MemstackError):
                continue
            yield doc
    elif layer == "handoffs":
        yield from _handoff(relpath, data.decode("utf-8", "replace"))
    else:
        try:
            yield _soil(relpath, orjson.loads(data))
        except (orjson.JSONDecodeError, KeyError, TypeError, AttributeError, MemstackError):
            return


def indexed_end(layer: str, data: bytes) -> int:
    """How many bytes of `data` a parse took in: whole lines of a log, the whole of any other file."""
    return data.rfind(b"\n") + 1 if layer in APPEND_ONLY else len(data)


def _text(value: Any) -> str:
    return value if isinstance(value, str) else "" if value is None else orjson.dumps(value).decode()


def _int(value: Any) -> int | None:
    if value is not None and type(value) is not int:
        raise TypeError("not integer ms")
    return value


def _fields(**given: Any) -> str | None:
    """The JSON of the given fields that hold something (a source of "" is none)."""
    held = {key: value for key, value in given.items() if value not in (None, "")}
    return orjson.dumps(held).decode() if held else None


def _fact(fact: dict[str, Any], number: int) -> Doc:
    return Doc(number, fact["id"], fact.get("agent"), fact.get("tier"), fact.get("table"),
               _int(fact["valid_from"]), _int(fact["valid_to"]), _int(fact["recorded_at"]),
               _int(fact["expired_at"]), _text(fact["subject"]),
               f"{_text(fact['predicate'])} {_text(fact['object'])}",
               _fields(source=fact.get("source"), subject=fact["subject"], predicate=fact["predicate"],
                       object=fact["object"]))


def _intake(record: dict[str, Any], number: int) -> Doc:
    words = " ".join(_text(k) for k in (*record.get("keywords", ()), *record.get("tags", ())))
    return Doc(number, record["id"], record.get("agent"), record.get("tier"), None, None, None,
               parse_ts(record["created_at"], "created_at"), None, _text(record.get("title")),
               f"{_text(record['content'])}\n{words}", _fields(source=record.get("source")))


def _day_ms(date: str) -> int:
    return int(datetime.strptime(date, "%Y-%m-%d").replace(tzinfo=UTC).timestamp() * 1000)


def _handoff(relpath: str, text: str) -> Iterator[Doc]:
    place = layout.classify(relpath)
    known = _day_ms(place.date)
    heads = list(SECTION.finditer(text))
    for index, head in enumerate(heads):
        end = heads[index + 1].start() if index + 1 < len(heads) else len(text)
        body = text[head.end():end].strip()
        yield Doc(text.count("\n", 0, head.start()) + 1, head.group(1).strip(), place.agent, None, None,
                  None, None, known, None, head.group(1).strip(), body)


def _strings(value: Any) -> Iterator[str]:
    if isinstance(value, dict):
        for key, inner in value.items():
            yield str(key)
            yield from _strings(inner)
    elif isinstance(value, list):
        for inner in value:
            yield from _strings(inner)
    elif value is not None and not isinstance(value, bool):
        yield str(value)


def _soil(relpath: str, record: dict[str, Any]) -> Doc:
    place = layout.classify(relpath)
    where = f"{place.collection}/{place.key}"
    return Doc(1, where, None, None, None, None, None, parse_ts(record["updated_at"], "updated_at"), None,
               where, " ".join(_strings(record["value"])))
