"""`test`: a store's memory tests (docs/memory-tests.md), run in this process through the functions the
`search` and `recall` verbs call.

A case passes when each of its `expect` entries matches one of the first k answers and none of its
`expect_not` entries matches any of them. An entry matches an answer whose id it is, or whose record's
text holds it (any case, runs of white space read as one space): a fact's subject, predicate and object;
an intake record's title, content, keywords and tags; a handoff section; a SOIL record's value.
"""

from collections.abc import Callable
from pathlib import Path
from typing import Any

from memstack.api.memtestfile import Case, load
from memstack.api.readers import fact_reader
from memstack.api.recall import recall_document
from memstack.api.search import search_document
from memstack.base.errors import MemstackError
from memstack.base.forgotten import Forgotten
from memstack.base.patterns import lazy
from memstack.kb.readers import FactReader
from memstack.repo.store import Store
from memstack.search import build, forgotten, records
from memstack.search.query import MARK

FILE_NAME = "memory-tests.yaml"
LOOK_FURTHER = 100  # answers past k searched for a missing entry, to say where it went


def memory_tests_document(store: Store, file: str | None = None,
                          told: Callable[[str], None] = lambda _: None) -> dict[str, Any]:
    """The `test --json` document: `{file, cases: [...], passed, failed}`, each case `{index, name, query,
    k, answered, passed, missing: [entry], present: [{entry, rank, id, where}], looked_further, looked_at_all,
    found_further: [{entry, rank, id, where}]}`: when an entry is missing, how many answers were looked at
    (up to `LOOK_FURTHER` past k), whether that was every answer, and where a missing entry was found there.
    The cases search a complete index, never one a build is catching up (a search would answer from it): it is
    brought up to date first, `told` hearing it when it is far behind (search/build.py)."""
    path, shown = _where(store, file)
    cases = load(path, shown, store.root)
    if any(case.search is not None for case in cases):
        build.caught_up(store.root, told)
    texts = _Texts(store.root)
    reader = fact_reader(str(store.root))
    try:
        results = [_run(store, reader, texts, case, shown) for case in cases]
    finally:
        reader.close()
    failed = sum(not result["passed"] for result in results)
    return {"file": shown, "cases": results, "passed": len(results) - failed, "failed": failed}


def _where(store: Store, file: str | None) -> tuple[Path, str]:
    """The file to read and its name in messages (the store's `memory-tests.yaml` when none is named)."""
    if file is not None:
        return Path(file), file
    path = store.root / FILE_NAME
    if not path.is_file():
        raise MemstackError.marked("no {name} at the store's root ({root}): write one (docs/memory-tests.md)"
                                   " or name the file: {verb:memstack test FILE}", name=FILE_NAME, root=store.root)
    try:
        return path, str(path.relative_to(Path.cwd()))
    except ValueError:
        return path, str(path)


def _run(store: Store, reader: FactReader, texts: "_Texts", case: Case, shown: str) -> dict[str, Any]:
    answers = _answers(store, reader, case, case.k, shown)
    known = texts.of_all(answers)
    missing = [entry for entry in case.expect
               if not any(_matches(entry, answer, text) for answer, text in zip(answers, known, strict=True))]
    present = [{"entry": entry, "rank": rank, "id": answer.get("id"), "where": answer.get("where")}
               for entry in case.expect_not
               for rank, (answer, text) in enumerate(zip(answers, known, strict=True), 1)
               if _matches(entry, answer, text)]
    result = {"index": case.index, "name": case.name, "query": case.query(), "k": case.k,
              "answered": len(answers), "passed": not missing and not present, "missing": missing,
              "present": present, "looked_further": None, "looked_at_all": None,
              "found_further": []}
    if missing:  # where a missing entry went: a few answers further down, or not there at all
        further = _answers(store, reader, case, case.k + LOOK_FURTHER, shown)[case.k:] \
            if len(answers) == case.k else []  # fewer than k: there is nothing further
        texts_further = texts.of_all(further)
        result["looked_further"] = len(answers) + len(further)
        result["looked_at_all"] = len(further) < LOOK_FURTHER  # the query has no more answers
        result["found_further"] = [found for found in (_first(entry, further, texts_further, case.k)
                                                       for entry in missing) if found]
    return result


def _first(entry: str, answers: list[dict[str, Any]], texts: list[str], before: int) -> dict[str, Any] | None:
    """The first of `answers` (ranked after the first `before`) that `entry` matches, or None."""
    for rank, (answer, text) in enumerate(zip(answers, texts, strict=True), before + 1):
        if _matches(entry, answer, text):
            return {"entry": entry, "rank": rank, "id": answer.get("id"), "where": answer.get("where")}
    return None


def _answers(store: Store, reader: FactReader, case: Case, limit: int, shown: str) -> list[dict[str, Any]]:
    """The first `limit` answers of the case's query, as the search or recall verb gives them."""
    try:
        if case.search is not None:
            found = search_document(store, query=case.search, agent=case.agent, valid_at=case.valid_at,
                                    as_of=case.as_of, limit=limit)["hits"]
        else:
            found = recall_document(reader, subject=case.subject, now_ts=case.valid_at, limit=limit)["items"]
    except MemstackError as exc:  # a query search or recall refuses (too long, ...): the file's mistake
        field = "search" if case.search is not None else "recall"
        raise MemstackError(f"{shown}: case {case.index} {case.name!r}: {field}: {exc.message}") from None
    return list(found[:limit])


_SPACE = lazy(r"\s+")


def _folded(text: str) -> str:
    return _SPACE.sub(" ", text).strip().casefold()


def _matches(entry: str, answer: dict[str, Any], text: str) -> bool:
    return entry == answer.get("id") or _folded(entry) in text


class _Texts:
    """The text of each answer's record, folded for matching; a record is read from its file once a run."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.gone = Forgotten.in_store(root)  # a forgotten record's text is its marker, as in the index
        self.known: dict[tuple[str, int], str] = {}

    def of_all(self, answers: list[dict[str, Any]]) -> list[str]:
        wanted: dict[tuple[str, str], set[int]] = {}
        for answer in answers:
            if "layer" in answer and (answer["path"], answer["line"]) not in self.known:
                wanted.setdefault((answer["layer"], answer["path"]), set()).add(answer["line"])
        for (layer, path), lines in wanted.items():
            self._read(layer, path, lines)
        return [self._of(answer) for answer in answers]

    def _of(self, answer: dict[str, Any]) -> str:
        if "layer" not in answer:  # a recalled fact
            return _folded(" ".join(str(answer.get(k, "")) for k in ("subject", "predicate", "object")))
        shown = [answer.get(k) for k in ("title", "snippet", "subject", "predicate", "object", "content")]
        parts = [p.replace(MARK[0], "").replace(MARK[1], "") for p in shown if isinstance(p, str)]
        return _folded(" ".join([self.known.get((answer["path"], answer["line"]), ""), *parts]))

    def _read(self, layer: str, path: str, lines: set[int]) -> None:
        """The head and body search indexed for the records at `lines` of one file (read once; of a log,
        only those lines are parsed). A line the file no longer holds reads as ''."""
        try:
            data = (self.root / path).read_bytes()
        except OSError:
            data = b""
        if layer not in records.APPEND_ONLY:
            self._keep(path, forgotten.shown(self.gone, path, records.parse(layer, path, data)))
        else:
            at, number = 0, 1
            for line in sorted(lines):
                while number < line and at < len(data):
                    at = data.find(b"\n", at) + 1 or len(data)
                    number += 1
                end = data.find(b"\n", at) + 1
                if number == line and end > 0:  # the line alone: its one record is numbered 1
                    self._keep(path, forgotten.shown(self.gone, path, records.parse(layer, path, data[at:end])),
                               line - 1)
        for line in lines:
            self.known.setdefault((path, line), "")

    def _keep(self, path: str, docs: Any, shift: int = 0) -> None:
        for doc in docs:
            self.known.setdefault((path, doc.line + shift), f"{doc.head}\n{doc.body}")
