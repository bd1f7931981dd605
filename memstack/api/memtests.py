"""`test`: a store's memory tests (docs/memory-tests.md), run in this process through the functions the
`search` and `recall` verbs call.

A case passes when each of its `expect` entries matches one of the first k answers and none of its
`expect_not` entries matches any of them. An entry matches an answer whose id it is, or whose record's
text holds it (any case, runs of white space read as one space): a fact's subject, predicate and object;
an intake record's title, content, keywords and tags; a handoff section; a SOIL record's value.
"""

import re
from pathlib import Path
from typing import Any

from memstack.api.memtestfile import Case, load
from memstack.api.readers import fact_reader
from memstack.api.recall import recall_document
from memstack.api.search import search_document
from memstack.base.errors import MemstackError
from memstack.repo.store import Store
from memstack.search import records
from memstack.search.query import MARK

FILE_NAME = "memory-tests.yaml"


def memory_tests_document(store: Store, file: str | None = None) -> dict[str, Any]:
    """The `test --json` document: `{file, cases: [...], passed, failed}`, each case `{index, name, query,
    k, answered, passed, missing: [entry], present: [{entry, rank, id, where}]}`."""
    path, shown = _where(store, file)
    cases = load(path, shown)
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


def _run(store: Store, reader: Any, texts: "_Texts", case: Case, shown: str) -> dict[str, Any]:
    try:
        if case.search is not None:
            answers = search_document(store, query=case.search, agent=case.agent, valid_at=case.valid_at,
                                      as_of=case.as_of, limit=case.k)["hits"]
        else:
            answers = recall_document(reader, subject=case.subject, now_ts=case.valid_at, limit=case.k)["items"]
    except MemstackError as exc:  # a query search or recall refuses (too long, ...): the file's mistake
        field = "search" if case.search is not None else "recall"
        raise MemstackError(f"{shown}: case {case.index} {case.name!r}: {field}: {exc.message}") from None
    answers = answers[:case.k]
    known = [texts.of(answer) for answer in answers]
    missing = [entry for entry in case.expect
               if not any(_matches(entry, answer, text) for answer, text in zip(answers, known, strict=True))]
    present = [{"entry": entry, "rank": rank, "id": answer.get("id"), "where": answer.get("where")}
               for entry in case.expect_not
               for rank, (answer, text) in enumerate(zip(answers, known, strict=True), 1)
               if _matches(entry, answer, text)]
    return {"index": case.index, "name": case.name, "query": case.query(), "k": case.k, "answered": len(answers),
            "passed": not missing and not present, "missing": missing, "present": present}


_SPACE = re.compile(r"\s+")


def _folded(text: str) -> str:
    return _SPACE.sub(" ", text).strip().casefold()


def _matches(entry: str, answer: dict[str, Any], text: str) -> bool:
    return entry == answer.get("id") or _folded(entry) in text


class _Texts:
    """The text of each answer's record, folded for matching; a record is read from its file once a run."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.known: dict[tuple[str, int], str] = {}

    def of(self, answer: dict[str, Any]) -> str:
        if "layer" not in answer:  # a recalled fact
            return _folded(" ".join(str(answer.get(k, "")) for k in ("subject", "predicate", "object")))
        shown = [answer.get(k) for k in ("title", "snippet", "subject", "predicate", "object", "content")]
        parts = [p.replace(MARK[0], "").replace(MARK[1], "") for p in shown if isinstance(p, str)]
        return _folded(" ".join([self._record(answer), *parts]))

    def _record(self, answer: dict[str, Any]) -> str:
        """The head and body search indexed for a hit's record ('' when its file no longer holds it)."""
        layer, path, line = answer["layer"], answer["path"], answer["line"]
        if (path, line) not in self.known:
            try:
                data = (self.root / path).read_bytes()
            except OSError:
                data = b""
            if layer in records.APPEND_ONLY:  # only the hit's line is parsed, not the whole log
                start = _line_start(data, line)
                end = data.find(b"\n", start) + 1 if start >= 0 else 0
                data, start = (data[:end], start) if end > 0 else (b"", 0)
            else:
                start = 0
            for doc in records.parse(layer, path, data, start):
                self.known.setdefault((path, doc.line), f"{doc.head}\n{doc.body}")
            self.known.setdefault((path, line), "")
        return self.known[(path, line)]


def _line_start(data: bytes, line: int) -> int:
    """The offset of line `line` (from 1) of `data`, or -1 when it has fewer lines."""
    at = 0
    for _ in range(line - 1):
        at = data.find(b"\n", at) + 1
        if at == 0:
            return -1
    return at if at < len(data) else -1
