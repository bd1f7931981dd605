"""The fact files, `kb/facts/<agent>/YYYY-MM.jsonl`: listing, reading, appending, closing in place.

A file per writing agent and month of `recorded_at` (UTC). New facts are
appended as whole lines in one write per file. Closing facts rewrites only
their lines (every other byte of the file stays as it was), atomically: a new
file beside the old, renamed over it under the file's lock, so a crash leaves
the old file or the new one. After each write the query index is told exactly
what changed, so the next query re-reads nothing.
"""

import os
from collections import defaultdict
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import NamedTuple

from memstack.base import files, jsonio, logfiles, schemas
from memstack.base.errors import MemstackError
from memstack.base.names import NAME_RE
from memstack.base.patterns import lazy
from memstack.base.times import month
from memstack.kb import facts
from memstack.kb.facts import Fact
from memstack.repo import git

FACTS_DIR = "kb/facts"
FILE_RE = lazy(r"\d{4}-\d{2}\.jsonl")
NEWLINE = b"\n"


class Closing(NamedTuple):
    """Close fact `fact_id` at valid time `valid_to`, the closing recorded at `expired_at`."""

    fact_id: str
    valid_to: int
    expired_at: int
    superseded_by: str | None = None


def relpath_for(fact: Fact) -> str:
    return f"{FACTS_DIR}/{fact['agent']}/{month(fact['recorded_at'])}.jsonl"


def list_files(store: Path) -> list[tuple[str, os.stat_result]]:
    """Every fact file (`<agent>/<YYYY-MM>.jsonl`) with its stat, sorted; a symlink is refused (I7).

    Other names are not fact files and are left to `memstack check` to report.
    """
    found = []
    try:
        with os.scandir(store / FACTS_DIR) as entries:
            agents = list(entries)
    except (FileNotFoundError, NotADirectoryError):
        return []
    for agent in agents:
        if agent.is_symlink():
            files.refuse_symlinks(store, Path(agent.path))
        if not agent.is_dir() or not NAME_RE.fullmatch(agent.name):
            continue
        with os.scandir(agent.path) as entries:
            inside = list(entries)
        for entry in inside:
            if entry.is_symlink():
                files.refuse_symlinks(store, Path(entry.path))
            if FILE_RE.fullmatch(entry.name) and entry.is_file():
                found.append((f"{FACTS_DIR}/{agent.name}/{entry.name}", entry.stat()))
    return sorted(found, key=lambda item: item[0])


def read(store: Path, relpath: str) -> list[Fact]:
    return logfiles.read_jsonl(store / relpath, relpath)


def scan(store: Path) -> Iterator[Fact]:
    """Every fact of every file, straight from the files (the reference the index is checked against)."""
    for relpath, _ in list_files(store):
        yield from read(store, relpath)


def escapes(value: str) -> list[bytes]:
    """What every other spelling of `value` as a JSON string than memstack's own (orjson's) holds: an escape
    orjson never writes for that character (`\\u00e9` for é, `\\u0061` for a, `\\u000a` for a newline;
    `\\/` for a slash)."""
    return [b"\\u", b"\\/"] if "/" in value else [b"\\u"]


def scan_for(store: Path, values: Sequence[str]) -> Iterator[tuple[str, int, Fact]]:
    """(file, line number, fact), in the files' order, for every line holding one of `values` as a JSON
    string: a superset of the facts with that subject or id, found with a byte search instead of parsing every
    line.

    A line is parsed when it holds the value as memstack writes it (`"..."`, so spaces around it do not
    matter) or an escape that could spell it another way (`escapes`). `git grep` first tells which files hold
    any of those bytes at all (on a fresh clone of 1,000,000 facts, one file of 230); only those are read.
    """
    listed = list_files(store)
    if not listed:
        return
    needles = [jsonio.dumps_line(value)[:-1] for value in values]
    needles += sorted({escape for value in values for escape in escapes(value)})
    holding = git.files_holding(store, FACTS_DIR, needles)
    for relpath, _ in listed:
        if holding is not None and relpath not in holding:
            continue
        data = (store / relpath).read_bytes()
        found = _lines_holding(data, needles) if len(needles) < MANY else _lines_holding_many(data, needles)
        number, at = 1, 0
        for start, end in found:
            number, at = number + data.count(NEWLINE, at, start), start  # counted on from the last line
            fact = jsonio.loads(data[start:end], f"{relpath}:{number}")
            if isinstance(fact, dict):
                yield relpath, number, fact


MANY = 8  # from this many byte strings, one pass over the lines instead of one search of the file per string
_STRING = lazy(rb'"[^"]*"')  # a JSON string of a line without backslashes (its quotes pair in order)


def _lines_holding(data: bytes, needles: Sequence[bytes]) -> list[tuple[int, int]]:
    """(start, end) of each whole line of `data` holding one of `needles`, in order: a search per needle."""
    starts = set()
    for needle in needles:
        at = data.find(needle)
        while at >= 0:
            start, end = data.rfind(NEWLINE, 0, at) + 1, data.find(NEWLINE, at)
            if end < 0:
                break  # an unfinished last line
            starts.add((start, end))
            at = data.find(needle, end)
    return sorted(starts)


def _lines_holding_many(data: bytes, needles: Sequence[bytes]) -> list[tuple[int, int]]:
    """`_lines_holding` for many needles (whole JSON strings, and escapes), in one pass: a line with a
    backslash is kept (it may spell a value another way), any other one when one of its JSON strings is a
    needle."""
    wanted = set(needles)
    found: list[tuple[int, int]] = []
    start = 0
    while True:
        end = data.find(NEWLINE, start)
        if end < 0:
            return found  # an unfinished last line is no line
        line = data[start:end]
        if b"\\" in line or not wanted.isdisjoint(_STRING.findall(line)):
            found.append((start, end))
        start = end + 1


# Who hears of each write, under the file's lock, with the file's stat before and after: the fact index
# (kb/index/catchup.py), so its next query re-reads nothing. The fact store, the one writer, passes it; this
# module knows nothing of the index.
Appended = Callable[[Path, str, os.stat_result | None, os.stat_result, Sequence[bytes], Sequence[Fact]], None]
Rewritten = Callable[[Path, str, os.stat_result, os.stat_result, bytes, Sequence[tuple[int, int, bytes, Fact]]], None]


def append(store: Path, new: Sequence[Fact], noted: Appended | None = None, checked: bool = False) -> list[str]:
    """Append facts (each validated and screened for credentials first, unless `checked`: a commit's check
    does both; nothing is written if one is bad), one write per file; `noted` hears of each file's append.

    Returns the store-relative paths written, sorted.
    """
    groups: dict[str, list[int]] = defaultdict(list)
    for number, fact in enumerate(new):
        if not checked:
            schemas.validate("fact", fact, f"fact {number + 1} of {len(new)}" if len(new) > 1 else "")
        groups[relpath_for(fact)].append(number)
    lines = [jsonio.dumps_line(fact) for fact in new]
    if not checked:
        from memstack.base.secrets import refuse_secrets_in  # deferred: only a write screens for credentials

        refuse_secrets_in(new, lines, store=store)
    for relpath, numbers in sorted(groups.items()):
        path = store / relpath
        path.parent.mkdir(parents=True, exist_ok=True)
        files.refuse_symlinks(store, path)
        group = [new[n] for n in numbers]
        held = [lines[n] for n in numbers]
        with files.locked(store, relpath):
            before = _stat(path)
            files.append_held(path, relpath, b"".join(held))
            if noted is not None:
                noted(store, relpath, before, os.stat(path), held, group)
    return sorted(groups)


def close(store: Path, relpath: str, closings: Sequence[Closing], noted: Rewritten | None = None,
          checked: bool = False) -> list[Fact]:
    """Close facts of one file in one atomic rewrite of that file (`noted` hears of it); returns the closed
    facts. Each closed fact is validated, unless `checked` (a commit's check does it: `append`).

    Each fact must be open and the closing legal (I2); otherwise nothing is written.
    """
    path = store / relpath
    files.refuse_symlinks(store, path)
    if len({c.fact_id for c in closings}) != len(closings):
        raise MemstackError(f"{relpath}: a fact is closed twice in one batch")
    with files.locked(store, relpath):
        before = _stat(path)
        if before is None:
            raise MemstackError(f"{relpath}: no such fact file")
        data = path.read_bytes()
        if data and not data.endswith(b"\n"):
            logfiles.check_tail(path, relpath)
        marker = logfiles.conflict_marker(data)  # held whole already: a byte search per marker
        if marker >= 0:
            raise logfiles.conflicted(relpath, data.count(NEWLINE, 0, marker) + 1, data[marker:marker + 7])
        found = find_lines(data, [c.fact_id for c in closings], relpath)
        spans = []
        for closing, (start, end, number) in zip(closings, found, strict=True):
            where = f"{relpath}:{number}"
            old = jsonio.loads(data[start:end], where)
            new = facts.close(old, valid_to=closing.valid_to, expired_at=closing.expired_at,
                              superseded_by=closing.superseded_by)
            problem = facts.closing_problem(old, new)
            if problem:  # pragma: no cover - facts.close only sets the closing fields
                raise MemstackError(f"{where}: I2 {problem}")
            if not checked:
                schemas.validate("fact", new, where)
            spans.append((start, end, jsonio.dumps_line(new), new))
        spans.sort(key=lambda span: span[0])
        pieces, at = [], 0
        for start, end, line, _ in spans:
            pieces += [data[at:start], line]
            at = end + 1  # past the old line's newline; `line` brings its own
        pieces.append(data[at:])
        rewritten = b"".join(pieces)
        files.write_atomic(path, rewritten)
        if noted is not None:
            noted(store, relpath, before, os.stat(path), rewritten, spans)
    closed = {new["id"]: new for _, _, _, new in spans}
    return [closed[c.fact_id] for c in closings]


def close_many(store: Path, where: Mapping[str, str], closings: Sequence[Closing],
               noted: Rewritten | None = None, checked: bool = False) -> list[Fact]:
    """Close facts in many files, one rewrite per file; `where` maps each fact id to its file."""
    groups: dict[str, list[Closing]] = defaultdict(list)
    for closing in closings:
        if closing.fact_id not in where:
            raise MemstackError(f"bad fact id {closing.fact_id!r}: no such fact")
        groups[where[closing.fact_id]].append(closing)
    closed: dict[str, Fact] = {}
    for relpath, group in sorted(groups.items()):
        closed.update((f["id"], f) for f in close(store, relpath, group, noted, checked))
    return [closed[c.fact_id] for c in closings]


_ID_KEY = lazy(rb'"id":("(?:[^"\\]|\\.)*")')  # memstack writes compact lines: `"id":"<id>"`


def find_lines(data: bytes, fact_ids: Sequence[str], relpath: str) -> list[tuple[int, int, int]]:
    """(start, end before the newline, line number) of the line holding each fact, in one pass."""
    wanted = set(fact_ids)
    spans: dict[str, tuple[int, int]] = {}
    for match in _ID_KEY.finditer(data):
        fact_id = jsonio.loads(match.group(1), relpath)
        if fact_id in wanted and fact_id not in spans:
            start, end = data.rfind(NEWLINE, 0, match.start()) + 1, data.find(NEWLINE, match.end())
            end = len(data) if end < 0 else end
            record = jsonio.loads(data[start:end], relpath)
            if isinstance(record, dict) and record.get("id") == fact_id:
                spans[fact_id] = (start, end)
    if len(spans) < len(wanted):  # a line written some other way (spaces, key order): parse every line
        start = 0
        for line in data.splitlines(keepends=True):
            record = jsonio.loads(line, relpath)
            if isinstance(record, dict) and record.get("id") in wanted and record["id"] not in spans:
                spans[record["id"]] = (start, start + len(line.rstrip(b"\n")))
            start += len(line)
    missing = [i for i in fact_ids if i not in spans]
    if missing:
        raise MemstackError(f"{relpath}: no fact {missing[0]}")
    numbers, number, at = {}, 1, 0
    for start, _ in sorted(spans.values()):
        number += data.count(NEWLINE, at, start)
        numbers[start] = number
        at = start
    return [(*spans[i], numbers[spans[i][0]]) for i in fact_ids]


def _stat(path: Path) -> os.stat_result | None:
    try:
        return os.stat(path)
    except FileNotFoundError:
        return None
