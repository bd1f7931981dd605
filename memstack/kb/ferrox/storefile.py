"""The ferrox seed's fact store file: `{"facts": [{subject, predicate, object, valid_from, valid_to,
confidence, recorded_at}, ...]}` (its `memory.fact_store`), read as a stream, a record at a time.

The file is never held whole (a ferrox store of 150,000 facts parsed whole took 190 MB): ijson's
event parser (its C backend) hands over one value at a time, and each record is checked as it comes;
the first bad one is refused naming its index and field (`facts[3].valid_to`). Times must be integer
milliseconds (the seed writes JavaScript numbers: 100.0 is taken as 100, 100.5 is refused), in the
ranges memstack's facts hold; fields other than the seven are ignored, as the seed ignores them.
"""

import itertools
import math
from collections.abc import Iterator
from typing import IO, Any

import ijson
from ijson.common import ObjectBuilder

from memstack.base.errors import MemstackError
from memstack.kb.facts import MAX_MS, MIN_RECORDED_MS, MIN_VALID_MS
from memstack.kb.ferrox import FIELDS

Record = dict[str, Any]

# A JSON value's kind in ijson's events, named as Python names the type it parses to.
_TYPES = {"start_map": "dict", "start_array": "list", "string": "str", "integer": "int", "double": "float",
          "number": "float", "boolean": "bool", "null": "NoneType"}
_OPEN, _CLOSE = ("start_map", "start_array"), ("end_map", "end_array")
# Bytes read at a time. yajl scans a token that spans reads again from its start at each read, so a long string
# costs its length squared over this: 64 KiB (ijson's default) took 59 s for one 100 MB string, 4 MiB 16x less.
BUFFER = 4 << 20
_NOT_A_STORE = 'not a ferrox fact store (expected {"facts": [...]})'


def records(stream: IO[bytes], where: str) -> Iterator[Record]:
    """The checked records of a ferrox store file read from `stream` (`where` names it in messages)."""
    events = ijson.basic_parse(stream, use_float=True, buf_size=BUFFER)
    try:
        first = next(events, None)
        if first is None or first[0] != "start_map":
            raise MemstackError(f"bad {where}: {_NOT_A_STORE}")
        found = False
        for _, key in events:  # the top level's keys, each followed by its value
            if key is None:  # its end_map
                break
            if key != "facts":
                _skip(events, next(events))  # ignored, as the seed ignores it
            elif found:
                raise MemstackError(f"bad {where}: facts given twice")
            else:
                found = True
                yield from _facts(events, where)
        if not found:
            raise MemstackError(f"bad {where}: {_NOT_A_STORE}")
        for _ in events:  # what follows the document: only white space (ijson refuses anything else)
            pass
    except ijson.JSONError as exc:
        said = exc.args[0] if exc.args else exc  # yajl's words, in bytes at times, over three lines
        said = said.decode("utf-8", "replace") if isinstance(said, bytes) else str(said)
        first_line = (said.strip().splitlines() or [""])[0]
        raise MemstackError(f"{where}: invalid JSON ({first_line})") from None


def _facts(events: Iterator[tuple[str, Any]], where: str) -> Iterator[Record]:
    event, _ = next(events)
    if event != "start_array":
        raise MemstackError(f"bad {where}: facts must be a list, not {_TYPES.get(event, event)}")
    for index in itertools.count():
        item = next(events)  # a file cut short: ijson's error, not the end of the events
        if item[0] == "end_array":
            return
        yield record(index, _value(events, item))


def _value(events: Iterator[tuple[str, Any]], first: tuple[str, Any]) -> Any:
    """The JSON value whose first event is `first`, built from the events that follow it: an object
    (a ferrox record) read field by field, a field that nests further by ijson's builder, one that is
    not a ferrox field skipped."""
    event, value = first
    if event == "start_map":
        built: dict[str, Any] = {}
        for event, key in events:
            if event == "end_map":
                break
            item = next(events)
            if key not in FIELDS:
                _skip(events, item)
            else:
                built[key] = _built(events, item) if item[0] in _OPEN else item[1]
        return built
    return _built(events, first) if event in _OPEN else value


def _skip(events: Iterator[tuple[str, Any]], first: tuple[str, Any]) -> None:
    """Past the JSON value whose first event is `first`, building nothing."""
    depth = int(first[0] in _OPEN)
    while depth:
        event, _ = next(events)
        depth += (event in _OPEN) - (event in _CLOSE)


def _built(events: Iterator[tuple[str, Any]], first: tuple[str, Any]) -> Any:
    """A list or an object, however deep, built without recursion."""
    builder = ObjectBuilder()
    builder.event(*first)
    depth = 1
    for event, value in events:
        builder.event(event, value)
        depth += (event in _OPEN) - (event in _CLOSE)
        if not depth:
            break
    return builder.value


def record(index: int, value: Any) -> Record:
    """One fact checked and normalised (integer times, float confidence), or an error naming `facts[index].field`."""
    where = f"facts[{index}]"
    if not isinstance(value, dict):
        raise MemstackError(f"bad {where}: a fact is a JSON object, not {_kind(value)}")
    for field in FIELDS:
        if field not in value:
            raise MemstackError(f"bad {where}: missing field {field}")
    for field in ("subject", "predicate", "object"):
        text = value[field]
        if field == "object" and not isinstance(text, str):
            raise MemstackError(f"bad {where}.object {text!r}: must be text")
        if field != "object" and (not isinstance(text, str) or not text.strip()):
            raise MemstackError(f"bad {where}.{field} {text!r}: must be non-empty text")
    valid_from = _ms(value["valid_from"], f"{where}.valid_from", MIN_VALID_MS)
    valid_to = None if value["valid_to"] is None else _ms(value["valid_to"], f"{where}.valid_to", MIN_VALID_MS)
    if valid_to is not None and valid_to <= valid_from:
        raise MemstackError(f"bad {where}.valid_to {valid_to}: must be after valid_from {valid_from}"
                            " (a window is [valid_from, valid_to))")
    confidence = value["confidence"]
    if isinstance(confidence, bool) or not isinstance(confidence, (int, float)) or not math.isfinite(confidence) \
            or not 0 <= confidence <= 1:
        raise MemstackError(f"bad {where}.confidence {confidence!r}: must be a number in [0, 1]")
    return {"subject": value["subject"], "predicate": value["predicate"], "object": value["object"],
            "valid_from": valid_from, "valid_to": valid_to, "confidence": float(confidence),
            "recorded_at": _ms(value["recorded_at"], f"{where}.recorded_at", MIN_RECORDED_MS)}


def _ms(value: Any, field: str, low: int) -> int:
    if isinstance(value, float) and math.isfinite(value) and value == int(value):
        value = int(value)
    if isinstance(value, bool) or not isinstance(value, int):
        raise MemstackError(f"bad {field} {value!r}: must be integer milliseconds since the epoch")
    if not low <= value <= MAX_MS:
        raise MemstackError(f"bad {field} {value}: must lie between {low} and {MAX_MS}")
    return value


def _kind(value: Any) -> str:
    return {list: "a list", str: "text", type(None): "null", bool: "a boolean"}.get(type(value), "a number")
