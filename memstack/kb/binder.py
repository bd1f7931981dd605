"""The Binder: intake records that wait for a human (`kb/binder.jsonl`, append-only decisions).

A record routed to the binder waits in the queue until a human ratifies it
(the next promotion makes it a `knowledge` fact at tier `ratified`) or rejects
it (it stays in the audit trail and is never routed again). One decision per
record.
"""

from pathlib import Path
from typing import Any

from memstack.base import jsonio, ledger, schemas
from memstack.base.errors import bad
from memstack.base.files import append_line, locked
from memstack.base.layout import DECISIONS
from memstack.base.logfiles import read_log
from memstack.base.secrets import refuse_secrets

PAST = {"ratify": "ratified", "reject": "rejected"}


def routed_to_binder(store: Path, intake_id: str) -> bool:
    """Whether promotion routed the record to the Binder: a line of its intake file's ledger shard says
    so (an id names its day and agent; one bound to none is looked for in every shard)."""
    return any(line.get("sub_tier") == "binder" for line in ledger.record_lines(store, intake_id))


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
        decisions = read_log(store, DECISIONS)
        earlier = [d for d in decisions if d.get("intake_id") == intake_id]
        if earlier:
            raise bad("ID", repr(intake_id), "already {done} by {by} (one decision per record)",
                      done=PAST[earlier[0]["decision"]], by=earlier[0]["by"])
        if not routed_to_binder(store, intake_id):
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
