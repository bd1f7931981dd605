"""The Binder: intake records that wait for a human (`kb/binder.jsonl`, append-only decisions).

A record routed to the binder waits in the queue until a human ratifies it
(the next promotion makes it a `knowledge` fact at tier `ratified`) or rejects
it (it stays in the audit trail and is never routed again). One decision per
record.
"""

from pathlib import Path
from typing import Any

from memstack.base import jsonio, schemas
from memstack.base.errors import bad
from memstack.base.files import append_line, locked
from memstack.base.layout import DECISIONS, LEDGER
from memstack.base.logfiles import read_log
from memstack.base.secrets import refuse_secrets

PAST = {"ratify": "ratified", "reject": "rejected"}


def waiting_ids(ledger: list[dict[str, Any]], decisions: list[dict[str, Any]]) -> list[str]:
    """Intake ids routed to the binder and not yet decided, in ledger order."""
    decided = {d.get("intake_id") for d in decisions}
    return [line["intake_id"] for line in ledger
            if line.get("sub_tier") == "binder" and isinstance(line.get("intake_id"), str)
            and line["intake_id"] not in decided]


def ratified_unpromoted(ledger: list[dict[str, Any]], decisions: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Ratify decisions whose record has not yet become a knowledge fact."""
    done = {line.get("intake_id") for line in ledger if line.get("sub_tier") != "binder"}
    first: dict[str, dict[str, Any]] = {}
    for d in decisions:  # one decision per record counts: the first (a side of a disagreement: disputes.py)
        if isinstance(d.get("intake_id"), str):
            first.setdefault(d["intake_id"], d)
    return [d for d in first.values() if d.get("decision") == "ratify" and d["intake_id"] not in done]


def queue(store: Path, intake_by_id: dict[str, dict[str, Any]]) -> list[dict[str, Any]]:
    ids = waiting_ids(read_log(store, LEDGER), read_log(store, DECISIONS))
    return [intake_by_id[i] for i in ids if i in intake_by_id]


def decide(store: Path, intake_id: str, decision: str, by: str, now_ms: int, note: str | None = None, *,
           via: str | None = None) -> dict[str, Any]:
    """Append a ratify/reject decision for a record waiting in the queue (`via`: "mcp" when an agent made it
    over the MCP server)."""
    record: dict[str, Any] = {"intake_id": intake_id, "decision": decision, "decided_at": now_ms, "by": by}
    if via:
        record["via"] = via
    if note:
        record["note"] = note
    refuse_secrets(record, store=store)
    problems = schemas.errors("binder", record)
    if problems:
        field = problems[0].split(":", 1)[0]
        raise bad("ID" if field == "intake_id" else field, None, "{why}", why=problems[0].split(": ", 1)[-1])
    with locked(store, DECISIONS + ".decide"):
        ledger, decisions = read_log(store, LEDGER), read_log(store, DECISIONS)
        earlier = [d for d in decisions if d.get("intake_id") == intake_id]
        if earlier:
            raise bad("ID", repr(intake_id), "already {done} by {by} (one decision per record)",
                      done=PAST[earlier[0]["decision"]], by=earlier[0]["by"])
        if intake_id not in waiting_ids(ledger, decisions):
            raise bad("ID", repr(intake_id), "not waiting in the binder queue (`{verb:memstack binder list}`)")
        append_line(store, DECISIONS, jsonio.dumps_line(record))
    return record


def check_entry(store: Path, entry: dict[str, Any], note: str | None, via: str | None = None) -> None:
    """A confirmed document or edge (`documents.py`, `edges.py`) made ready for kb/binder.jsonl: its `via`
    and note added, then refused if it holds a credential (I8) or does not match schemas/binder.schema.json."""

    if via:
        entry["via"] = via
    if note:
        entry["note"] = note
    refuse_secrets(entry, store=store)
    problems = schemas.errors("binder", entry)
    if problems:
        raise bad(problems[0].split(":", 1)[0], None, "{why}", why=problems[0].split(": ", 1)[-1])
