"""What a tool returns: the JSON Schema of its document (its `output`), built from the record schemas in
`schemas/` (one definition each) and a few shapes (a document, a list, a page)."""

import copy
from collections.abc import Mapping
from typing import Any

from memstack.base import schemas

_SHAPE = ("type", "required", "properties", "items", "enum", "const", "anyOf", "oneOf")


def _shape(schema: Any) -> Any:
    """A schema's structure only: types, required keys, enums. The record was checked in full when written;
    every byte here is read by the agent in tools/list."""
    if not isinstance(schema, dict):
        return schema
    kept: dict[str, Any] = {}
    for key, value in schema.items():
        if key == "properties":
            kept[key] = {name: _shape(sub) for name, sub in value.items()}
        elif key in ("items",):
            kept[key] = _shape(value)
        elif key in ("anyOf", "oneOf"):
            kept[key] = [_shape(sub) for sub in value]
        elif key in _SHAPE:
            kept[key] = copy.deepcopy(value)
    return kept


def record(kind: str) -> dict[str, Any]:
    """The schema of a record as a document carries it: the structure of schemas/<kind>.schema.json, open to
    added fields (a document may show more than the file holds, e.g. ISO times beside ms)."""
    return {"description": f"a {kind} record (schemas/{kind}.schema.json)", **_shape(schemas.schema(kind))}


def listing(item: dict[str, Any], description: str) -> dict[str, Any]:
    return {"type": "array", "items": item, "description": description}


def document(description: str, required: Mapping[str, Any],
             optional: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """An object document: `required` keys always present, `optional` ones sometimes."""
    return {"type": "object", "description": description, "required": list(required),
            "properties": {**required, **(optional or {})}}


STRING: dict[str, Any] = {"type": "string"}
STRINGS: dict[str, Any] = {"type": "array", "items": {"type": "string"}}
CHANGED = document("the derived files rewritten (store-relative paths; empty: already fresh)", {"changed": STRINGS})


def paged_output(item: dict[str, Any], what: str) -> dict[str, Any]:
    return document(f"one page of {what}", {
        "items": listing(item, what),
        "next_cursor": {"type": ["string", "null"], "description": "pass as cursor for the next page; null: no more"},
        "remaining": {"type": "integer", "minimum": 0, "description": "how many items follow this page"}})

INTAKE = record("intake")
FACT = record("fact")
FACTS = listing(FACT, "facts (times in ms since the epoch)")
