"""`memstack blame ID`: the chain behind a belief, from the files and from git.

For a fact id or an intake id: the fact's line and the commit that added it, the intake record it was
promoted from and its commit, the merge that brought each into the current branch, the promotion ledger's
lines, the Binder decisions on it and who made them, the facts it closed and the fact that closed it, and
its code anchors. Every record is found where its id is bound (the agent's folder and the month or day of
the id's time: base/ids.py), so the work is a few files read and a few git questions about those files
(`origins.py`), whatever the size of the store or of the repository.
"""

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from memstack.base import ids, jsonio, layout, ledger
from memstack.base.errors import bad
from memstack.base.times import day, month
from memstack.kb import factfiles
from memstack.repo import git
from memstack.review.origins import History, Origin, commit_document

FACTS, INTAKE = "kb/facts", "intake"


@dataclass(frozen=True, slots=True)
class Line:
    path: str  # store-relative
    number: int  # 1-based
    record: dict[str, Any]
    needle: bytes  # what marks this line in every version of its file


def _quoted(value: str) -> bytes:
    return jsonio.dumps_line(value)[:-1]


def _lines_with(root: Path, relpath: str, field: str, value: str) -> list[Line]:
    """The lines of store file `relpath` whose `field` is `value`, parsed, in file order: a byte search for
    the value, so only the few lines that mention it are parsed."""
    try:
        data = (root / relpath).read_bytes()
    except (FileNotFoundError, NotADirectoryError, IsADirectoryError):
        return []
    quoted = _quoted(value)
    key = re.compile(rb'"' + field.encode() + rb'"\s*:\s*' + re.escape(quoted))
    found, at = [], data.find(quoted)
    while at >= 0:
        start, end = data.rfind(b"\n", 0, at) + 1, data.find(b"\n", at)
        end = len(data) if end < 0 else end
        number = data.count(b"\n", 0, start) + 1
        record = jsonio.loads(data[start:end], f"{relpath}:{number}")
        marked = key.search(data, start, end)
        if isinstance(record, dict) and record.get(field) == value and marked:
            # A Binder line never changes and several may name one record (people who decided it differently):
            # the whole line marks it. A fact's line changes when it is closed: its id marks it.
            needle = data[start:end] + b"\n" if relpath == layout.DECISIONS else marked.group()
            found.append(Line(relpath, number, record, needle))
        at = data.find(quoted, end)
    return found


def _bound_file(root: Path, record_id: str, layer: str) -> str | None:
    """The one file a bound id can live in: its agent's folder (by the id's tag) and the month (facts) or
    day (intake) of its time; None for an id of another shape or an agent with no folder."""
    match = ids.ID.match(record_id)
    if match is None:
        return None
    ms = int(match.group(1), 16)
    name = f"{month(ms)}.jsonl" if layer == FACTS else f"{day(ms)}.jsonl"
    folder = root / layer
    agents = sorted(p.name for p in folder.iterdir() if p.is_dir()) if folder.is_dir() else []
    return next((f"{layer}/{agent}/{name}" for agent in agents if ids.agent_tag(agent) == match.group(3)), None)


def _find(root: Path, record_id: str, layer: str) -> Line | None:
    """The line of `layer` (facts or intake) whose id is `record_id`: in its bound file, else (an id
    written before ids were bound) in the files `git grep` says hold it."""
    bound = _bound_file(root, record_id, layer)
    found = _lines_with(root, bound, "id", record_id) if bound else []
    if found:
        return found[0]
    holding = git.files_holding(root, layer, [_quoted(record_id)]) if (root / layer).is_dir() else set()
    places = sorted(holding) if holding is not None else sorted(
        p.relative_to(root).as_posix() for p in (root / layer).glob("*/*.jsonl"))
    return next((line for relpath in places for line in _lines_with(root, relpath, "id", record_id)), None)


def ledger_lines(root: Path, intake_id: str, intake_file: str | None) -> list[dict[str, Any]]:
    """The promotion ledger's lines for one intake record (routed, then ratified: two lines), oldest first:
    from the shard of `intake_file` (the record's, or the one its id is bound to), else from the shard
    its id names (base/ledger.py)."""
    if intake_file:
        return [line for line in ledger.shard_lines(root, intake_file) if line.get("intake_id") == intake_id]
    return list(ledger.record_lines(root, intake_id))


def _entry(line: Line, history: History) -> dict[str, Any]:
    """A record with where it is and, from git, the commit that added it and the merge that brought it in."""
    origin: Origin | None = history.origin(line.path, line.needle)
    return {"path": line.path, "line": line.number, "record": line.record,
            "added": commit_document(origin.added if origin else None),
            "merge": commit_document(origin.merge if origin else None)}


def _decisions(root: Path, history: History, intake_id: str | None, fact_id: str | None) -> list[dict[str, Any]]:
    """The Binder's decisions on the intake record (ratify, reject) and on the fact (a side of a
    disagreement), with who made them and the commit that recorded them."""
    found = []
    for field, value in (("intake_id", intake_id), ("fact_id", fact_id)):
        if value is None:
            continue
        found += [_entry(line, history) for line in _lines_with(root, layout.DECISIONS, field, value)]
    return found


def _closed(root: Path, fact_id: str) -> list[dict[str, Any]]:
    """The facts this one closed (their superseded_by names it), found by one `git grep` of the fact files."""
    return [{"path": relpath, "line": number, "record": fact}
            for relpath, number, fact in factfiles.scan_for(root, [fact_id]) if fact.get("superseded_by") == fact_id]


def chain(root: Path, record_id: str) -> dict[str, Any]:
    """The blame document of a fact id or an intake id; an id of neither is refused (exit 2)."""
    ids.checked(record_id)
    fact = _find(root, record_id, FACTS)
    intake = None if fact else _find(root, record_id, INTAKE)
    if fact is None and intake is None:
        raise bad("ID", repr(record_id), "no fact or intake record has this id in this store")
    intake_id = record_id if intake else fact.record.get("intake_id") if fact else None
    if intake is None and isinstance(intake_id, str) and ids.SHAPE.fullmatch(intake_id):
        intake = _find(root, intake_id, INTAKE)
    promotions: list[dict[str, Any]] = []
    if isinstance(intake_id, str):
        promotions = ledger_lines(root, intake_id, intake.path if intake else _bound_file(root, intake_id, INTAKE))
        listed = [p["file"] for p in promotions  # an intake file's path, never a path the line could forge
                  if isinstance(p.get("file"), str) and layout.classify(p["file"]).kind == layout.INTAKE]
        if intake is None and listed:  # an id not bound to its file: the ledger says which file holds it
            intake = next(iter(_lines_with(root, listed[0], "id", intake_id)), None)
    if fact is None:
        made = [p["fact_id"] for p in promotions if isinstance(p.get("fact_id"), str)]
        fact = _find(root, made[-1], FACTS) if made else None
    fact_id = fact.record["id"] if fact else None
    with History(root) as history:
        successor_id = fact.record.get("superseded_by") if fact else None
        successor = _find(root, successor_id, FACTS) if isinstance(successor_id, str) else None
        return {
            "id": record_id,
            "kind": "fact" if fact and fact_id == record_id else "intake",
            "fact": _entry(fact, history) if fact else None,
            "intake": _entry(intake, history) if intake else None,
            "promotions": promotions,
            "decisions": _decisions(root, history, intake_id if isinstance(intake_id, str) else None, fact_id),
            "closed": _closed(root, fact_id) if fact_id else [],
            "closed_by": _entry(successor, history) if successor else None,
            "anchors": list((fact and fact.record.get("anchors")) or (intake and intake.record.get("anchors")) or []),
        }
