"""The records that carry code anchors: open facts and pending intake records. A `git grep` names the files
that hold anchors at all; only their lines that do are parsed."""

from collections.abc import Iterator
from pathlib import Path
from typing import Any

from memstack.base import jsonio
from memstack.kb import factfiles, facts
from memstack.repo import git

KEY = b'"anchors"'


def anchored_facts(store: Path, subject: str | None) -> Iterator[dict[str, Any]]:
    """The open facts with anchors (of `subject`), in the files' order."""
    listed = factfiles.list_files(store)
    holding = git.files_holding(store, factfiles.FACTS_DIR, [KEY]) if listed else None
    for relpath, _ in listed:
        if holding is not None and relpath not in holding:
            continue
        for fact in _holding_key(store / relpath, relpath):
            if facts.is_open(fact) and (subject is None or fact.get("subject") == subject):
                yield fact


def _holding_key(path: Path, relpath: str) -> Iterator[dict[str, Any]]:
    """The records of a JSONL file whose line holds anchors (only those lines are parsed)."""
    for line in path.read_bytes().splitlines():
        if KEY in line:
            record = jsonio.loads(line, relpath)
            if isinstance(record, dict) and record.get("anchors"):
                yield record


def anchored_intake(store: Path, subject: str | None) -> Iterator[dict[str, Any]]:
    """The pending intake records with anchors (of `subject`), oldest first; only the day files that hold
    anchors at all are read."""
    from memstack.intake import log as intake  # deferred: only when intake is read

    holding = git.files_holding(store, "intake", [KEY])
    records = []
    for path in sorted((store / "intake").glob("*/*.jsonl")):
        relpath = path.relative_to(store).as_posix()
        if holding is not None and relpath not in holding:
            continue
        done: set[str] | None = None  # the file's ledger shard, read once a record of it is anchored
        for record in _holding_key(path, relpath):
            if subject is not None and record.get("subject") != subject:
                continue
            done = intake.promoted_ids(store, relpath) if done is None else done
            if record.get("id") not in done:
                records.append(record)
    records.sort(key=lambda r: (r["created_at"], r["id"]))
    yield from records
