"""The Binder: intake records that wait for a human (`kb/binder.jsonl`, append-only decisions).

A record routed to the binder waits in the queue until a human ratifies it
(the next promotion makes it a `knowledge` fact at tier `ratified`) or rejects
it (it stays in the audit trail and is never routed again). One decision per
record, unless people decided it differently on their own clones: the merge
keeps both decisions (each a person's word), and the record is *disputed* until
a person settles it (`in_force`). Promotion acts on neither; `binder list`
shows the dispute; `binder ratify|reject ID` then writes a decision that
`settles` the ones it was made against (docs/binder.md).
"""

from collections.abc import Iterable
from pathlib import Path
from typing import Any

from memstack.base import jsonio, ledger, schemas
from memstack.base.errors import bad
from memstack.base.files import append_line, locked
from memstack.base.forgotten import line_with
from memstack.base.layout import DECISIONS
from memstack.base.logfiles import read_log
from memstack.base.secrets import refuse_secrets
from memstack.base.times import iso

PAST = {"ratify": "ratified", "reject": "rejected"}


def in_force(decisions: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    """The decisions on one record that count: every one no settling decision overrules (a decision with
    `settles` overrules the others made at or before that time: those it was made against)."""
    decisions = list(decisions)
    settling = [d for d in decisions if type(d.get("settles")) is int]
    return [d for d in decisions if not any(
        s is not d and type(d.get("decided_at")) is int and d["decided_at"] <= s["settles"] for s in settling)]


def verdict(decisions: Iterable[dict[str, Any]]) -> str | None:
    """What the decisions on one record say: "ratify" or "reject" when those in force agree; None when none
    is, or when people decided differently and no one has settled it (a dispute: promotion acts on neither)."""
    said = {d.get("decision") for d in in_force(decisions)}
    return said.pop() if len(said) == 1 else None


def first_in_force(decisions: Iterable[dict[str, Any]]) -> dict[str, Any]:
    """The decision promotion takes a ratified record's time from: the earliest of those in force (the same
    whatever order a merge left the lines in)."""
    return min(in_force(decisions), key=_when)


def _when(decision: dict[str, Any]) -> tuple[int, str]:
    """A decision's place in time (a line without an integer time, which the checks refuse, last)."""
    at = decision.get("decided_at")
    return (at if type(at) is int else 2**63, str(decision.get("by")))


def by_record(decisions: Iterable[dict[str, Any]]) -> dict[str, list[dict[str, Any]]]:
    """The decisions on intake records, by record, in the log's order."""
    found: dict[str, list[dict[str, Any]]] = {}
    for d in decisions:
        if isinstance(d.get("intake_id"), str):
            found.setdefault(d["intake_id"], []).append(d)
    return found


def disputed(store: Path) -> list[dict[str, Any]]:
    """The records people decided differently and no one has settled, as `binder list` shows them:
    `{"kind": "dispute", "id", "subject", "predicate", "decisions" (in force, oldest first), "record",
    "created_at"}`. The Binder's log is read whole (a person's decisions: few); each record from its file."""
    found = []
    for intake_id, decisions in sorted(by_record(read_log(store, DECISIONS)).items()):
        if len(decisions) < 2 or verdict(decisions) is not None:
            continue
        shown = sorted(in_force(decisions), key=_when)
        record = _record(store, intake_id) or {}
        found.append({"kind": "dispute", "id": intake_id, "subject": str(record.get("subject") or ""),
                      "predicate": str(record.get("predicate") or ""), "decisions": shown, "record": record or None,
                      "fact": made_fact(store, intake_id),
                      "created_at": iso(max((d["decided_at"] for d in shown if type(d.get("decided_at")) is int),
                                             default=0))})
    return found


def made_fact(store: Path, intake_id: str) -> str | None:
    """The fact a promotion already made from the record (a clone that promoted its ratification before
    another person's different decision arrived), or None: its ledger line names it."""
    made = [line.get("fact_id") for line in ledger.record_lines(store, intake_id) if line.get("sub_tier") != "binder"]
    return next((fid for fid in made if isinstance(fid, str)), None)


def _record(store: Path, intake_id: str) -> dict[str, Any] | None:
    """The intake record, from the one file its id is bound to (only its line parsed)."""
    for relpath in ledger.intake_files_of(store, intake_id):
        found = line_with((store / relpath).read_bytes(), intake_id) if (store / relpath).is_file() else None
        if found is not None:
            return found
    return None


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
        said = verdict(earlier)
        if said is not None:
            raise bad("ID", repr(intake_id), "already {done} by {by} (one decision per record)",
                      done=PAST[said], by=first_in_force(earlier)["by"])
        if earlier:  # people decided it differently: this decision settles the ones it is made against
            record["settles"] = max(d["decided_at"] for d in earlier if type(d.get("decided_at")) is int)
        if not routed_to_binder(store, intake_id):
            raise bad("ID", repr(intake_id), "not waiting in the binder queue (`{verb:memstack binder list}`)")
        closed = _unmake(store, intake_id, now_ms) if earlier and decision == "reject" else []
        append_line(store, DECISIONS, jsonio.dumps_line(record))
    return {**record, "closed": closed} if earlier else record


def _unmake(store: Path, intake_id: str, now_ms: int) -> list[str]:
    """A dispute settled by a rejection: the fact a clone already made from the record's ratification is
    closed now, with no successor (the rejected record is knowledge no more; its history keeps it)."""
    from memstack.kb import factstore  # deferred: the fact index (SQLite), only for a dispute settled so
    from memstack.kb.factfiles import Closing
    from memstack.kb.index import queries

    fact_id = made_fact(store, intake_id)
    where = queries.locate(store, [fact_id]) if fact_id else {}
    if fact_id not in where or where[fact_id][1].get("valid_to") is not None:
        return []
    factstore.close_many(store, [Closing(fact_id, now_ms, now_ms, None)])
    return [fact_id]


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
