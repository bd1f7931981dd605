"""The ferrox seed's fact store file: `{"facts": [{subject, predicate, object, valid_from, valid_to,
confidence, recorded_at}, ...]}` (its `memory.fact_store`), read and checked whole.

Every record is checked before anything is done with any of them; the first bad one is
refused naming its index and field (`facts[3].valid_to`). Times must be integer
milliseconds (the seed writes JavaScript numbers: 100.0 is taken as 100, 100.5 is refused),
in the ranges memstack's facts hold; fields other than the seven are ignored, as the seed
ignores them.
"""

import math
from typing import Any

from memstack.base import jsonio
from memstack.base.errors import MemstackError
from memstack.kb.facts import MAX_MS, MIN_RECORDED_MS, MIN_VALID_MS
from memstack.kb.ferrox import FIELDS

Record = dict[str, Any]


def parse(data: bytes, where: str) -> list[Record]:
    """The checked records of a ferrox store file's bytes (`where` names the file in messages)."""
    document = jsonio.loads(data, where)
    if not isinstance(document, dict) or "facts" not in document:
        raise MemstackError(f'bad {where}: not a ferrox fact store (expected {{"facts": [...]}})')
    records = document["facts"]
    if not isinstance(records, list):
        raise MemstackError(f"bad {where}: facts must be a list, not {type(records).__name__}")
    return [record(index, value) for index, value in enumerate(records)]


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
