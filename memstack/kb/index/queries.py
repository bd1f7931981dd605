"""The fact index's queries: facts valid at a time (as of a transaction time), a subject's history,
recall, versions of a key, where ids are; the same answers as kb/facts.py's over the files.

Each asks the index (build.opened: brought up to date first) and reads the facts' lines from the
files (answers.py). A query about one subject, or a few ids, is answered from the files instead
while the index is far behind (more than build.build.BUILD_BUDGET bytes to read: a fresh clone, a large
pull): a byte search, then parsing only the matching lines.

VALID and VALID_AS_OF are the bi-temporal rules as SQL over the `facts` columns (search uses
them too). The `*_rows` forms walk the same answers row by row for a listing to page (pages.py).
"""

import copy
import functools
import heapq
import sqlite3
import threading
from collections.abc import Callable, Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any

from memstack.base import follow
from memstack.base.forgotten import Forgotten
from memstack.kb import factfiles, facts
from memstack.kb.facts import Fact
from memstack.kb.index import answers, build
from memstack.kb.index.answers import ROW, Lines, Moved

# Facts tied on the times keep the order they were written in: file, then line (never the random part of an id).
_FROM = "facts JOIN files ON files.file_id = facts.file_id"
_LISTING = " ORDER BY subject, valid_from, recorded_at, files.relpath, facts.line_no"
VALID = "valid_from <= :ts AND (valid_to IS NULL OR valid_to > :ts)"
# As of transaction time X: recorded by X, and a closing recorded after X not yet known.
VALID_AS_OF = ("recorded_at <= :as_of AND valid_from <= :ts"
               " AND (valid_to IS NULL OR valid_to > :ts OR expired_at > :as_of)")
# SQLite's lower() folds ASCII only; Python's str.lower() folds no other character to an ASCII
# letter of these words (only KELVIN SIGN folds to ASCII, to 'k'), so the two agree.
_RECALL_WHERE = "subject = :subject AND lower(predicate) IN ({}) AND {}".format(
    ", ".join(f"'{p}'" for p in facts.RECALL_PREDICATES), VALID)
_RECALL_ORDER = " ORDER BY valid_from DESC, recorded_at DESC, files.relpath, facts.line_no"
_RECALL = _RECALL_WHERE + _RECALL_ORDER + " LIMIT :limit"


LOCATE_FROM_FILES = 16  # up to this many ids are found in the files while the index catches up


def _select(store: Path, where: str, params: dict[str, Any],
            from_files: Callable[[], list[Fact]] | None = None) -> list[Fact]:
    """Facts from the index; if it is far behind and `from_files` is given, that answers instead."""
    def ask(db: sqlite3.Connection, lines: Lines) -> list[Fact]:
        return [lines.fact(*row) for row in db.execute(f"SELECT {ROW} FROM {_FROM} WHERE {where}", params)]

    return answers.answer(store, None if from_files is None else build.BUILD_BUDGET, ask, from_files)


# The last subject answered from the files, kept while every fact file is as it was (the index's own test
# of a file unchanged): a command that asks twice (recall, then what the subject holds besides) searches once.
_LAST_ABOUT: list[Any] = [None, []]
_ABOUT_LOCK = threading.Lock()


def _about(store: Path, subject: str) -> list[Fact]:
    """The facts about `subject`, in the files' order."""
    return [fact for _, _, fact in _about_where(store, subject)]


def _about_where(store: Path, subject: str) -> list[tuple[str, int, Fact]]:
    """(file, line number, fact) of the facts about `subject`, in the files' order."""
    key = (store, subject, [(relpath, follow.signature(st)) for relpath, st in factfiles.list_files(store)])
    with _ABOUT_LOCK:
        if _LAST_ABOUT[0] == key:
            return copy.deepcopy(_LAST_ABOUT[1])
    found = [(path, number, f) for path, number, f in factfiles.scan_for(store, [subject])
             if f["subject"] == subject]
    with _ABOUT_LOCK:
        _LAST_ABOUT[:] = [key, copy.deepcopy(found)]
    return found


def valid_at(store: Path, ts: int, subject: str | None = None, as_of: int | None = None) -> list[Fact]:
    where = VALID if as_of is None else VALID_AS_OF
    if subject is not None:
        where = "subject = :subject AND " + where
    from_files = None if subject is None else (lambda: facts.valid_at(_about(store, subject), ts, subject, as_of))
    found = _select(store, where + _LISTING, {"ts": ts, "subject": subject, "as_of": as_of}, from_files)
    if as_of is None:
        return found
    return [f for f in (facts.believed_at(f, as_of) for f in found) if f is not None]  # (a no-op on from_files')


def valid_at_of(store: Path, ts: int, subjects: Iterable[str]) -> list[Fact]:
    """`valid_at` of each of `subjects` (a walk's frontier), in listing order: a question of the index for
    every 500 subjects, not one for each."""
    wanted = sorted(set(subjects))
    found: list[Fact] = []
    for at in range(0, len(wanted), 500):
        chunk = {f"s{n}": subject for n, subject in enumerate(wanted[at:at + 500])}
        where = f"subject IN ({', '.join(':' + name for name in chunk)}) AND {VALID}{_LISTING}"
        found += _select(store, where, {"ts": ts, **chunk})
    return found


def each_valid_at(store: Path, ts: int, as_of: int | None = None, forgotten: Forgotten | None = None
                  ) -> Iterator[Fact]:
    """`valid_at` of every subject, one fact at a time (a listing of the whole store, never held whole), in
    `valid_at_rows`' order (a forgotten fact placed as it is shown).

    Lines are read as the rows come; a line moved meanwhile cannot send an answer half written
    back to the start, so it is an error (its file is marked, the next query re-reads it).
    """
    for row in valid_at_rows(store, ts, None, as_of, forgotten):
        fact = row.fact()
        if as_of is not None:
            fact = facts.believed_at(fact, as_of)  # type: ignore[assignment]
            if fact is None:
                continue
        yield fact


def history(store: Path, subject: str) -> list[Fact]:
    return _select(store, "subject = :subject" + _LISTING, {"subject": subject},
                   lambda: facts.history(_about(store, subject), subject))


def versions(store: Path, subject: str, predicate: str) -> list[Fact]:
    """Every fact of one subject and predicate, open or closed, oldest first."""
    return _select(store, "subject = :subject AND predicate = :predicate" + _LISTING,
                   {"subject": subject, "predicate": predicate},
                   lambda: [f for f in facts.history(_about(store, subject), subject) if f["predicate"] == predicate])


def open_by_key(store: Path, keys: Iterable[tuple[str, str]]) -> dict[tuple[str, str], list[Fact]]:
    """The open facts of many (subject, predicate) keys, oldest first, in one pass over one connection."""
    wanted = list(keys)

    def ask(db: sqlite3.Connection, lines: Lines) -> dict[tuple[str, str], list[Fact]]:
        return {key: [lines.fact(*row) for row in db.execute(OPEN_BY_KEY, key)] for key in wanted}

    return answers.answer(store, None, ask)


SAME_START = f"SELECT {ROW} FROM {_FROM} WHERE subject = ? AND predicate = ? AND valid_from = ? AND recorded_at = ?" \
    + _LISTING


def same_start(store: Path, keys: Iterable[tuple[str, str, int, int]]) -> dict[tuple[str, str, int, int], list[Fact]]:
    """The facts, open or closed, of each (subject, predicate, valid_from, recorded_at), in one pass over one
    connection (an import's twins: kb/ferrox/importing.py)."""
    wanted = list(dict.fromkeys(keys))

    def ask(db: sqlite3.Connection, lines: Lines) -> dict[tuple[str, str, int, int], list[Fact]]:
        return {key: [lines.fact(*row) for row in db.execute(SAME_START, key)] for key in wanted}

    return answers.answer(store, None, ask)


CROWDED = ("SELECT subject, predicate FROM facts WHERE valid_to IS NULL GROUP BY subject, predicate"
           " HAVING count(*) > 1 ORDER BY subject, predicate")  # read from the open facts' index (schema.py)
OPEN_BY_KEY = f"SELECT {ROW} FROM {_FROM} WHERE subject = ? AND predicate = ? AND valid_to IS NULL" + _LISTING


def crowded(store: Path) -> list[tuple[str, str]]:
    """The (subject, predicate) keys holding two or more open facts: where a disagreement can be."""
    with build.opened(store) as db:
        assert db is not None
        rows = db.execute(CROWDED).fetchall()
    return [(subject, predicate) for subject, predicate in rows]


# --- the same queries walked row by row, for a listing to page (pages.py): nothing held but the page ---

_COLUMNS = f"subject, valid_from, recorded_at, facts.line_no, {ROW}"


def _walk(store: Path, where: str, order: str, params: dict[str, Any],
          from_files: Callable[[], list[facts.Row]] | None, forgotten: Forgotten | None = None
          ) -> Iterator[facts.Row]:
    """The rows of `where` in `order` one at a time, each with its line read but not parsed; with
    `from_files`, the files answer while the index is far behind (as `_select`). With `forgotten` (a listing
    of every subject, in listing order), a forgotten fact is placed by its subject as a read shows it, the
    marker, as the replica holds it (`_shown_apart`): its order and its cursor hold nothing it forgot."""
    try:
        with answers.reading(store, None if from_files is None else build.BUILD_BUDGET) as found:
            if found is None:
                assert from_files is not None
                answer = from_files()  # inside: the background build starts once this is done
            else:
                db, lines = found
                apart = _shown_apart(db, lines, where, params, forgotten) if forgotten else []
                rows = (facts.Row(subject, valid_from, recorded_at, ident, lines.paths[file_id], number,
                                  lines.line(file_id, pos, length, ident))
                        for subject, valid_from, recorded_at, number, file_id, pos, length, ident in db.execute(
                            f"SELECT {_COLUMNS} FROM {_FROM} WHERE {where}{order}", params))
                if not apart:
                    yield from rows
                else:
                    ids = {row.id for row in apart}
                    yield from heapq.merge((row for row in rows if row.id not in ids), apart,
                                           key=facts.Row.listing_key)
                return
    except Moved as moved:
        raise answers.listed_moved(store, moved.file_id) from None
    yield from answer


def _shown_apart(db: sqlite3.Connection, lines: Lines, where: str, params: dict[str, Any],
                 forgotten: Forgotten) -> list[facts.Row]:
    """The forgotten facts among the rows of `where`, as a read shows them (forgotten.masked): the marker in
    their subject (their place in a listing), nothing they forgot in the row; in listing order."""
    wanted = [ref for ref, tombstone in forgotten.by_id.items() if tombstone.get("kind") == "fact"]
    found: list[facts.Row] = []
    for at in range(0, len(wanted), 500):
        chunk = {f"f{n}": ref for n, ref in enumerate(wanted[at:at + 500])}
        for number, *row in db.execute(f"SELECT facts.line_no, {ROW} FROM {_FROM} WHERE ({where})"
                                       f" AND facts.id IN ({', '.join(':' + name for name in chunk)})",
                                       {**params, **chunk}):
            shown = forgotten.mask(lines.fact(*row))
            found.append(facts.Row.of(shown, lines.paths[row[0]], number))
    return sorted(found, key=facts.Row.listing_key)


def _rows_about(store: Path, subject: str, keep: Callable[[Fact], bool]) -> list[facts.Row]:
    """The rows of the facts about `subject` that `keep` keeps, from the files, in the files' order."""
    return [facts.Row.of(fact, path, number) for path, number, fact in _about_where(store, subject) if keep(fact)]


def valid_at_rows(store: Path, ts: int, subject: str | None = None, as_of: int | None = None,
                  forgotten: Forgotten | None = None) -> Iterator[facts.Row]:
    """`valid_at`'s facts in listing order, as rows (with `as_of`, `Row.fact(as_of)` gives them as believed);
    without `subject`, `forgotten`'s facts are placed as they are shown (`_walk`)."""
    where = VALID if as_of is None else VALID_AS_OF
    if subject is not None:
        where = "subject = :subject AND " + where
    def from_files(subject: str) -> list[facts.Row]:
        rows = _rows_about(store, subject, lambda fact: bool(facts.valid_at([fact], ts, subject, as_of)))
        return sorted(rows, key=facts.Row.listing_key)

    return _walk(store, where, _LISTING, {"ts": ts, "subject": subject, "as_of": as_of},
                 None if subject is None else functools.partial(from_files, subject),
                 forgotten if subject is None else None)


def history_rows(store: Path, subject: str) -> Iterator[facts.Row]:
    return _walk(store, "subject = :subject", _LISTING, {"subject": subject},
                 lambda: sorted(_rows_about(store, subject, lambda _: True), key=facts.Row.listing_key))


def recall_rows(store: Path, subject: str, now_ts: int) -> Iterator[facts.Row]:
    """Every fact `recall` could give, most recent first (the caller pages them)."""
    def recalled(fact: Fact) -> bool:
        return facts.is_recall_predicate(fact["predicate"]) and facts.is_valid_at(fact, now_ts)

    return _walk(store, _RECALL_WHERE, _RECALL_ORDER, {"subject": subject, "ts": now_ts},
                 lambda: sorted(_rows_about(store, subject, recalled), key=facts.Row.recall_key))


def recall(store: Path, subject: str, now_ts: int, limit: int) -> list[Fact]:
    return _select(store, _RECALL, {"subject": subject, "ts": now_ts, "limit": limit},
                   lambda: facts.recall(_about(store, subject), subject, now_ts, limit))


def locate(store: Path, ids: Sequence[str]) -> dict[str, tuple[str, Fact]]:
    """Where each of `ids` is (store-relative file) and what it holds now; missing ids are left out."""
    def from_files() -> dict[str, tuple[str, Fact]]:
        found: dict[str, tuple[str, Fact]] = {}
        wanted = set(ids)
        for relpath, _, fact in factfiles.scan_for(store, ids):
            if fact["id"] in wanted:
                found.setdefault(fact["id"], (relpath, fact))
        return found

    def ask(db: sqlite3.Connection, lines: Lines) -> dict[str, tuple[str, Fact]]:
        found: dict[str, tuple[str, Fact]] = {}
        for at in range(0, len(ids), 500):
            chunk = list(ids[at:at + 500])
            marks = ", ".join("?" * len(chunk))
            for row in db.execute(f"SELECT {ROW} FROM facts WHERE facts.id IN ({marks})", chunk):
                fact = lines.fact(*row)
                found.setdefault(fact["id"], (lines.paths[row[0]], fact))
        return found

    return answers.answer(store, build.BUILD_BUDGET if len(ids) <= LOCATE_FROM_FILES else None, ask, from_files)


def known_subjects(store: Path, names: Iterable[str]) -> set[str]:
    """Which of `names` are the subject of some fact (open or closed): one indexed lookup each."""
    wanted = sorted(set(names))
    if not wanted:
        return set()
    found: set[str] = set()
    with build.opened(store) as db:
        assert db is not None
        for at in range(0, len(wanted), 500):
            chunk = wanted[at:at + 500]
            marks = ", ".join("?" * len(chunk))
            found.update(s for (s,) in db.execute(f"SELECT DISTINCT subject FROM facts WHERE subject IN ({marks})",
                                                  chunk))
    return found

