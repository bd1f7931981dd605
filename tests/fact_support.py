"""Facts written by hand for the merge and review tests: bound to alice and one recorded_at, closed at will."""

import hashlib
import json

from memstack.base.ids import agent_tag

RECORDED = 1_767_225_600_000


def bound(name: str) -> str:
    """A fact id bound to alice and RECORDED (memstack/base/ids.py), its random part named by `name`."""
    return f"{RECORDED:012x}{hashlib.sha256(name.encode()).hexdigest()[:12]}{agent_tag('alice')}"


def fact(fid: str, subject: str = "s", obj: str = "o", **closing: object) -> dict:
    record = {"id": bound(fid), "subject": subject, "predicate": "p", "object": obj, "valid_from": 1000,
              "valid_to": None, "confidence": 0.9, "recorded_at": 1_767_225_600_000, "table": "knowledge",
              "expired_at": None, "superseded_by": None, "source": None, "agent": "alice", "intake_id": None}
    record.update(closing)
    return record


def line(record: dict) -> bytes:
    return json.dumps(record, sort_keys=True, separators=(",", ":")).encode() + b"\n"


def closed(record: dict, valid_to: int, by: str | None = None) -> dict:
    return {**record, "valid_to": valid_to, "expired_at": max(valid_to, RECORDED) + 1, "superseded_by": by}
