"""The records that carry code anchors: open facts and pending intake records. A `git grep` names the files
that hold anchors at all; only their lines that do are parsed."""

from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from memstack.base import jsonio
from memstack.base.layout import DECISIONS
from memstack.base.ledger import routed_ids
from memstack.base.logfiles import read_log
from memstack.kb import factfiles, facts
from memstack.repo import git
from memstack.repo.objects import CatFile
from memstack.repo.sources import GitSource

KEY = b'"anchors"'


def anchored_facts(store: Path, subject: str | None) -> Iterator[dict[str, Any]]:
    """The open facts with anchors (of `subject`), in the files' order."""
    listed = factfiles.list_files(store)
    holding = git.files_holding(store, factfiles.FACTS_DIR, [KEY]) if listed else None
    for relpath, _ in listed:
        if holding is not None and relpath not in holding:
            continue
        for fact in _holding_key((store / relpath).read_bytes(), relpath):
            if facts.is_open(fact) and (subject is None or fact.get("subject") == subject):
                yield fact


def _holding_key(data: bytes, relpath: str) -> list[dict[str, Any]]:
    """The records of a JSONL file's bytes whose line holds anchors (only those lines are parsed)."""
    return [record for record in jsonio.records_holding(data, KEY, relpath) if record.get("anchors")]


def anchored_intake(store: Path, subject: str | None) -> Iterator[dict[str, Any]]:
    """The pending intake records with anchors (of `subject`), oldest first; only the day files that hold
    anchors at all are read."""
    holding = git.files_holding(store, "intake", [KEY])
    records = []
    for path in sorted((store / "intake").glob("*/*.jsonl")):
        relpath = path.relative_to(store).as_posix()
        if holding is not None and relpath not in holding:
            continue
        done: set[str] | None = None  # the file's ledger shard, read once a record of it is anchored
        for record in _holding_key(path.read_bytes(), relpath):
            if subject is not None and record.get("subject") != subject:
                continue
            done = routed_ids(store, relpath) if done is None else done
            if record.get("id") not in done:
                records.append(record)
    records.sort(key=lambda r: (r["created_at"], r["id"]))
    yield from records


def latest(store: Path) -> dict[str, dict[str, Any]]:
    """The last re-check (`anchors reverify`, a Binder line) of each fact, by fact id."""
    return latest_of(read_log(store, DECISIONS))


def latest_of(lines: Iterable[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """The last re-check of each fact among Binder log lines, by fact id."""
    return {line["reverified"]: line for line in lines
            if line.get("kind") == "reverify" and isinstance(line.get("reverified"), str)}


def rechecked(fact: dict[str, Any], checked: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """The fact with the anchors its latest re-check took (`reverified`: by whom, when), or as it is."""
    line = checked.get(fact["id"])
    return fact if line is None else {**fact, "anchors": line["anchors"], "reverified": line}


def anchored_at(repo: Path, rev: str, folder: str, blobs: CatFile) -> tuple[list[dict[str, Any]],
                                                                          list[dict[str, Any]], list[dict[str, Any]]]:
    """What commit `rev` of `repo` holds in the store at `folder` ("" or "path/"): its anchored open facts (in
    the files' order), its anchored pending intake records (oldest first) and its Binder lines that re-check
    anchors. Only the files that hold anchors at all are read (`git grep` of the commit's tree)."""
    source = GitSource(repo, blobs, rev, folder)
    held = git.files_holding_at(repo, rev, [folder + factfiles.FACTS_DIR, folder + "intake"], [KEY])
    facts_found, intake_found = [], []
    for path in held:
        relpath = path[len(folder):]
        data = source.read(relpath) or b""
        if relpath.startswith(factfiles.FACTS_DIR + "/"):
            facts_found += [f for f in _holding_key(data, relpath) if facts.is_open(f)]
        elif relpath.endswith(".jsonl"):
            anchored = list(_holding_key(data, relpath))
            done = routed_ids(source, relpath) if anchored else set()
            intake_found += [r for r in anchored if r.get("id") not in done]
    intake_found.sort(key=lambda r: (r["created_at"], r["id"]))
    decisions = source.read(DECISIONS) or b""
    rechecks = [line for line in jsonio.iter_jsonl(decisions, DECISIONS) if line.get("kind") == "reverify"] \
        if b'"reverify"' in decisions else []
    return facts_found, intake_found, rechecks
