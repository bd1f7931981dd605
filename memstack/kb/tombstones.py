"""The one writer of tombstones: `memstack forget ID... --reason TEXT` (docs/forgetting.md).

A tombstone is appended to the writing agent's `kb/forgotten/<agent>/YYYY-MM.jsonl` (the month of
`forgotten_at`): a file per agent and month, like the facts, so no file grows with the whole store, two
agents forgetting at once never touch one file, and the checks read only what a commit appends. It
names the record and says who forgot it and why; it holds nothing of the record.

Forgetting a fact closes it (its successor chain is kept: a closed fact keeps its `superseded_by`).
Forgetting an intake record forgets the facts promotion made from it too (they hold its content): each
gets a tombstone of its own, so every reader, index and replica needs only the ids (a fact promoted in another
clone meanwhile is forgotten by the record's tombstone: base/forgotten.py; `close_forgotten` closes it after
the merge). Everything is checked before anything is written: an id no record has, one already forgotten, an
empty reason, a control character or a credential in the reason refuse the whole call.
"""

from pathlib import Path
from typing import Any

from memstack.base import jsonio, layout, limits, schemas, secrets
from memstack.base.errors import bad
from memstack.base.files import append_held, locked, refuse_symlinks
from memstack.base.forgotten import Forgotten, closing_at, find
from memstack.base.names import check_printable
from memstack.base.reasons import repeats
from memstack.base.secrets import refuse_secrets
from memstack.base.times import month
from memstack.kb import factfiles, facts, factstore
from memstack.kb.factfiles import Closing
from memstack.kb.index import queries
from memstack.repo.sources import WorktreeSource

LOCK = layout.FORGOTTEN_DIR + ".forget"


def _text(store: Path, field: str, value: Any, what: str) -> str:
    if not isinstance(value, str) or not value.strip():
        raise bad(field, repr(value) if value else None, f"must say {what}")
    check_printable(value, field)
    limits.check_text(store, field, value)
    return value


def _derived(store: Path, found: dict[str, str], known: Forgotten) -> None:
    """Add to `found` the facts promotion made from a forgotten intake record (they hold its content), unless
    forgotten already."""
    intake_ids = {i for i, kind in found.items() if kind == "intake"}
    if intake_ids:
        for _, _, fact in factfiles.scan_for(store, sorted(intake_ids)):
            if fact.get("intake_id") in intake_ids and fact["id"] not in known:
                found.setdefault(fact["id"], "fact")


def _closings(store: Path, at: dict[str, int]) -> list[Closing]:
    """The open facts to close: each of `at` (fact id -> when it was forgotten), as forgetting closes them
    (`closing_at`), no successor named."""
    policy = secrets.for_store(store)
    # A fact holding a credential (committed past the checks) stays as it is: closing rewrites its line, which
    # the checks refuse while it holds one. The tombstone hides it all the same.
    open_facts = {fact["id"]: fact for _, (_, fact) in queries.locate(store, list(at)).items()
                  if facts.is_open(fact) and not secrets.scan(fact, "", policy)}
    closings = []
    for fact in open_facts.values():
        closing = Closing(fact["id"], *closing_at(fact, at[fact["id"]]))
        facts.close(fact, valid_to=closing.valid_to, expired_at=closing.expired_at)  # refused before any write
        closings.append(closing)
    return closings


def close_forgotten(store: Path) -> list[str]:
    """Close every open fact the store forgets (base/forgotten.py) as `forget` would have, at its tombstone's
    time; returns their ids. A merge can bring one: another clone promoted a record while this one forgot it, so
    no `forget` closed the fact. `memstack sync` calls it after each merge; the closing is the same in every
    clone (`closing_at`), so two clones that both close it merge as one closing."""
    forgotten = Forgotten.in_store(store)
    at = {ref: t["forgotten_at"] for ref, t in forgotten.by_id.items()
          if t.get("kind") == "fact" and type(t.get("forgotten_at")) is int}
    closings = _closings(store, at) if at else []
    return [f["id"] for f in factstore.close_many(store, closings)] if closings else []


def forget(store: Path, record_ids: list[str], reason: Any, by: Any, agent: str, now: int,
           via: str | None = None) -> dict[str, Any]:
    """Append a tombstone for each of `record_ids` and close the facts they take with them. Returns
    `{"path", "tombstones", "closed", "intake_kept"}` (the fact ids closed; the facts forgotten whose intake
    record is not, `_intake_kept`)."""
    reason = _text(store, "--reason", reason, "why the record is forgotten")
    by = _text(store, "--by", by, "who forgets it")
    if not record_ids:
        raise bad("ID", None, "name at least one record to forget")
    source = WorktreeSource(store)
    with locked(store, LOCK):
        known = Forgotten.of(source)
        found: dict[str, str] = {}
        for record_id in record_ids:
            if not isinstance(record_id, str) or not record_id.strip():
                raise bad("ID", repr(record_id), "name a record: an intake or fact id, a SOIL record's"
                          " collection/key or a handoff's path")
            check_printable(record_id, "ID")
            if record_id in known:
                raise bad("ID", repr(record_id), "already forgotten ({reason})", reason=known.reason(record_id))
            where = find(source, record_id)
            if where is None:
                raise bad("ID", repr(record_id), "no record of the store has this id (an intake or fact id, a SOIL"
                          " record's collection/key, a handoff's path handoffs/<agent>/<file>.md)")
            found[record_id] = where[0]
        _derived(store, found, known)
        for record_id in found:  # the reason stands in for the content: it must not carry it (as the checks say)
            where = find(source, record_id)
            if where is not None and repeats(source, *where, record_id, reason):
                raise bad("--reason", None, "it repeats the content of the record it forgets ({record}): say why"
                          " without it", record=record_id)
        tombstones = [{"forgets": record_id, "kind": kind, "reason": reason, "by": by, "agent": agent,
                       "forgotten_at": now, **({"via": via} if via else {})} for record_id, kind in found.items()]
        for tombstone in tombstones:
            refuse_secrets(tombstone, store=store)
            schemas.validate("tombstone", tombstone)
        closings = _closings(store, {i: now for i, kind in found.items() if kind == "fact"})
        path = layout.tombstone_file(agent, month(now))
        (store / path).parent.mkdir(parents=True, exist_ok=True)
        refuse_symlinks(store, store / path)
        with locked(store, path):
            append_held(store / path, path, b"".join(jsonio.dumps_line(t) for t in tombstones))
    closed = factstore.close_many(store, closings) if closings else []
    return {"path": path, "tombstones": tombstones, "closed": [f["id"] for f in closed],
            "intake_kept": _intake_kept(store, source, found, known)}


def _intake_kept(store: Path, source: WorktreeSource, found: dict[str, str], known: Forgotten) -> list[dict[str, str]]:
    """`{"fact", "intake"}` for each fact forgotten here whose intake record (the same words, promoted) is not:
    that record is still shown (intake list, search, the replica) and an excise leaves it in history."""
    facts_named = [ref for ref, kind in found.items() if kind == "fact"]
    kept = []
    for ref, (_, fact) in sorted(queries.locate(store, facts_named).items()) if facts_named else ():
        intake_id = fact.get("intake_id")
        if isinstance(intake_id, str) and intake_id not in found and intake_id not in known \
                and (find(source, intake_id) or ("",))[0] == "intake":
            kept.append({"fact": ref, "intake": intake_id})
    return kept
