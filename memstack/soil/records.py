"""L4 SOIL: session-scoped structured records, one file each: `store/<collection>/<key>.json`.

`put` creates or replaces a record's value; `update` changes an existing one
(a JSON object is merged key by key into an object value, anything else
replaces it); `expire` marks a record expired without deleting it; `get` and
`list` leave expired records out unless asked.
"""

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import orjson

from memstack.base import ids, jsonio, limits, schemas
from memstack.base.errors import bad
from memstack.base.files import locked, refuse_symlinks, write_atomic
from memstack.base.names import check_name
from memstack.base.secrets import refuse_secrets
from memstack.base.times import iso, parse_ts
from memstack.intake import log as intake


def relpath(collection: str, key: str) -> str:
    return f"store/{check_name(collection, 'collection')}/{check_name(key, 'key')}.json"


def _read(store: Path, rel: str) -> dict[str, Any] | None:
    path = store / rel
    if path.is_symlink() or path.parent.is_symlink():
        refuse_symlinks(store, path)
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return None
    record: dict[str, Any] = jsonio.loads(data, rel)
    schemas.validate("soil", record, rel)  # a hand edit or a hand-resolved conflict: named, never a traceback
    return record


def is_expired(record: dict[str, Any], now_ms: int) -> bool:
    return record["expires_at"] is not None and record["expires_at"] <= iso(now_ms)


def _save(store: Path, rel: str, record: dict[str, Any]) -> dict[str, Any]:
    schemas.validate("soil", record, rel)
    refuse_secrets(record, store=store)
    write_atomic(store / rel, jsonio.dumps_pretty(record))
    return record


def put(store: Path, collection: str, key: str, value: Any, now_ms: int) -> dict[str, Any]:
    limits.check_value(store, "value", value)  # size and depth before any other work (base/limits.py)
    rel = relpath(collection, key)
    with locked(store, rel):
        old = _read(store, rel)
        created = old["created_at"] if old and not is_expired(old, now_ms) else iso(now_ms)
        return _save(store, rel, {"key": key, "collection": collection, "value": value,
                                  "created_at": created, "updated_at": iso(now_ms), "expires_at": None})


def _existing(store: Path, collection: str, key: str, now_ms: int, verb: str) -> tuple[str, dict[str, Any]]:
    rel = relpath(collection, key)
    record = _read(store, rel)
    if record is None:
        raise bad("key", repr(key), "no record {collection}/{key} to {doing} (`{verb:soil put}` creates one)",
                  collection=collection, key=key, doing=verb)
    if is_expired(record, now_ms):
        raise bad("key", repr(key), "{collection}/{key} expired at {at} (`{verb:soil put}` starts it again)",
                  collection=collection, key=key, at=record["expires_at"])
    return rel, record


def update(store: Path, collection: str, key: str, value: Any, now_ms: int) -> dict[str, Any]:
    limits.check_value(store, "value", value)
    with locked(store, relpath(collection, key)):
        rel, record = _existing(store, collection, key, now_ms, "update")
        if isinstance(record["value"], dict) and isinstance(value, dict):
            value = {**record["value"], **value}
        limits.check_value(store, "value", value)  # the merged value too
        return _save(store, rel, {**record, "value": value, "updated_at": iso(now_ms)})


def expire(store: Path, collection: str, key: str, now_ms: int, at_ms: int | None = None) -> dict[str, Any]:
    with locked(store, relpath(collection, key)):
        rel, record = _existing(store, collection, key, now_ms, "expire")
        when = iso(now_ms if at_ms is None else at_ms)
        return _save(store, rel, {**record, "expires_at": when, "updated_at": iso(now_ms)})


def get(store: Path, collection: str, key: str, now_ms: int, include_expired: bool = False) -> dict[str, Any]:
    rel = relpath(collection, key)
    record = _read(store, rel)
    if record is None:
        raise bad("key", repr(key), "no record {collection}/{key}", collection=collection, key=key)
    if not include_expired and is_expired(record, now_ms):
        raise bad("key", repr(key), "{collection}/{key} expired at {when} (it is kept: {arg:--include-expired}"
                  " reads it)", collection=collection, key=key, when=record.get("expires_at"))
    return record


def list_records(store: Path, collection: str, now_ms: int, include_expired: bool = False) -> list[dict[str, Any]]:
    return list(iter_records(store, collection, now_ms, include_expired))


def iter_records(store: Path, collection: str, now_ms: int, include_expired: bool = False) -> Iterator[dict[str, Any]]:
    """A collection's records by key, read one at a time (a listing pages them: pages.py)."""
    check_name(collection, "collection")
    for path in sorted((store / "store" / collection).glob("*.json"), key=lambda p: p.name[:-len(".json")]):
        record = _read(store, str(path.relative_to(store)))
        if record is not None and (include_expired or not is_expired(record, now_ms)):
            yield record


def content_of(value: Any) -> str:
    """A SOIL value as intake content: a string as it is, any other value as compact JSON (keys sorted)."""
    return value if isinstance(value, str) else orjson.dumps(value, option=orjson.OPT_SORT_KEYS).decode()


def graduation(record: dict[str, Any], rel: str, agent: str) -> tuple[str, str]:
    """The intake record's `created_at` and id for one version of a SOIL record: its `updated_at` (when the
    store learnt that value) and an id derived from the path, that time and the value (ids.from_content).
    The same version always gives the same id, so a graduation killed after its intake append is found
    by the rerun instead of written twice."""
    ms = parse_ts(record["updated_at"], "updated_at")
    version = jsonio.dumps_line({"path": rel, "updated_at": record["updated_at"], "value": record["value"]})
    return iso(ms), ids.from_content(ms, agent, version)


def graduate(store: Path, collection: str, key: str, now_ms: int,
             make_intake: Callable[[dict[str, Any], str], dict[str, Any]]
             ) -> tuple[dict[str, Any], str, dict[str, Any]]:
    """Graduate a live SOIL record to intake (Willow: stable facts go on to the KB): `make_intake(record,
    relpath)` makes the intake record (its id and time from `graduation`), which is appended; then the SOIL
    record is retired: expired now and marked `graduated_to` with the intake id, never deleted. Returns
    (intake record, its file, SOIL record). Idempotent: when a run killed between the two writes already
    appended this version's record (under any agent), the rerun only retires the SOIL record."""

    with locked(store, relpath(collection, key)):
        record = _read(store, relpath(collection, key))
        if record is not None and record.get("graduated_to"):
            raise bad("key", repr(key), "{collection}/{key} already graduated to intake record {id}"
                      " (`{verb:soil put}` starts it again)", collection=collection, key=key,
                      id=record["graduated_to"])
        rel, record = _existing(store, collection, key, now_ms, "graduate")
        if not content_of(record["value"]).strip():
            raise bad("key", repr(key), "{collection}/{key} holds an empty value: nothing to graduate",
                      collection=collection, key=key)
        made = make_intake(record, rel)
        written = intake.find_written(store, made["id"][:24], made["created_at"])
        if written is None:
            path = intake.write(store, made)
        else:
            made, path = written
        retired = _save(store, rel, {**record, "expires_at": iso(now_ms), "updated_at": iso(now_ms),
                                     "graduated_to": made["id"]})
    return made, path, retired
