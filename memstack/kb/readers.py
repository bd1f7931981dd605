"""Where the fact read verbs get their answers: the store's files, or the PostgreSQL replica (`--pg`).

`recall`, `fact get-valid-at` and `fact history` (and their MCP tools) build
their documents from a FactReader, so the same command code answers from
either source. Both implementations decide the answer with the same rules
(`facts.py`); the tests hold them to byte-identical `--json` documents.
"""

from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any, Protocol

from memstack.base import pages
from memstack.base.forgotten import Forgotten
from memstack.base.pages import Page
from memstack.base.shown import Shown
from memstack.kb import facts, factstore, views
from memstack.kb.facts import LISTING_SHAPE, RECALL_SHAPE, Fact, Row, is_recall_predicate
from memstack.kb.index import queries
from memstack.repo.sources import WorktreeSource
from memstack.repo.store import Store, open_store


class FactReader(Protocol):
    def valid_at(self, ts: Any, subject: Any = None, as_of: Any = None) -> list[Fact]: ...

    def history(self, subject: Any) -> list[Fact]: ...

    def recall(self, subject: Any, now_ts: Any, limit: Any = None) -> list[Fact]: ...

    def valid_at_page(self, ts: Any, subject: Any = None, as_of: Any = None, *, limit: Any = None,
                      cursor: str | None = None, max_bytes: int | None = None) -> Page[Fact]: ...

    def history_page(self, subject: Any, *, limit: Any = None, cursor: str | None = None,
                     max_bytes: int | None = None) -> Page[Fact]: ...

    def recall_page(self, subject: Any, now_ts: Any, *, limit: Any = None, cursor: str | None = None,
                    max_bytes: int | None = None) -> Page[Fact]: ...

    def other_predicates(self, subject: str, now_ts: int) -> tuple[int, list[str]]: ...

    def binder_waiting(self, subject: str) -> int: ...

    def code_store(self) -> Path | None: ...

    def close(self) -> None: ...


def _paged(rows: Iterable[Row], limit: Any, cursor: str | None, key: Callable[[Row], Any], verb: str,
           shape: pages.Shape, shown: Shown, as_of: int | None = None,
           max_bytes: int | None = None, by_subject: bool = False, query: Any = None) -> Page[Fact]:
    """One page of rows, parsed (as believed at `as_of`) only once handed out; a forgotten fact without its
    content (docs/forgetting.md), and, asked for by its subject (`by_subject`), not at all: its subject is
    gone too (as in the replica, which holds none of it)."""
    if by_subject and shown.forgotten:
        rows = (row for row in rows if row.id not in shown)
    got = pages.page(rows, limit=limit, cursor=cursor, key=key, verb=verb, shape=shape, max_bytes=max_bytes,
                     weigh=Row.size, query=query)
    return Page([shown.record(row.fact(as_of)) for row in got.items], got.next_cursor, got.remaining)


class Lists:
    """The answers of both sources, checked and paged alike over their rows (`*_rows`, in the files' order)."""

    def valid_at_rows(self, ts: int, subject: str | None, as_of: int | None) -> Iterator[Row]:
        raise NotImplementedError

    def history_rows(self, subject: str) -> Iterator[Row]:
        raise NotImplementedError

    def recall_rows(self, subject: str, now_ts: int) -> Iterator[Row]:
        raise NotImplementedError

    def recall_limit(self) -> int:
        """recall's page when none is asked: memory.recall_limit of (the synced) memstack.yaml."""
        raise NotImplementedError

    def valid_at_page(self, ts: Any, subject: Any = None, as_of: Any = None, *, limit: Any = None,
                      cursor: str | None = None, max_bytes: int | None = None) -> Page[Fact]:

        ts, subject, as_of = factstore.query_args(ts, subject, as_of)
        pages.check_limit(limit)
        return _paged(self.valid_at_rows(ts, subject, as_of), limit, cursor, Row.listing_key, "fact get-valid-at",
                      LISTING_SHAPE, self.forgotten(), as_of=as_of, max_bytes=max_bytes,
                      by_subject=subject is not None, query=[subject])

    def history_page(self, subject: Any, *, limit: Any = None, cursor: str | None = None,
                     max_bytes: int | None = None) -> Page[Fact]:

        subject = facts.text(subject, "subject")
        pages.check_limit(limit)
        return _paged(self.history_rows(subject), limit, cursor, Row.listing_key, "fact history", LISTING_SHAPE,
                      self.forgotten(), max_bytes=max_bytes, by_subject=True, query=[subject])

    def recall_page(self, subject: Any, now_ts: Any, *, limit: Any = None, cursor: str | None = None,
                    max_bytes: int | None = None) -> Page[Fact]:
        """Most recent first; without a limit, at most memory.recall_limit."""

        subject, now, _ = factstore.recall_args(subject, now_ts, 1)
        size = pages.check_limit(limit)
        return _paged(self.recall_rows(subject, now), self.recall_limit() if size is None else size, cursor,
                      Row.recall_key, "recall", RECALL_SHAPE, self.forgotten(), max_bytes=max_bytes, by_subject=True,
                      query=[subject])

    def binder_waiting(self, subject: str) -> int:
        """How many intake records about `subject` wait in the Binder for a human's decision."""
        raise NotImplementedError

    def forgotten(self) -> Shown:
        """What the answers show (docs/forgetting.md); the replica holds no forgotten content: none to mask."""
        return Shown(Forgotten())

    def code_store(self) -> Path | None:
        """The store whose code repository the answers' code anchors are followed into (None: no status)."""
        return None

    def other_predicates(self, subject: str, now_ts: int) -> tuple[int, list[str]]:
        """The facts about `subject` valid at `now_ts` that recall leaves out: how many, and their predicates."""

        count, predicates, forgotten = 0, set(), self.forgotten()
        for row in self.valid_at_rows(now_ts, subject, None):
            if row.id in forgotten:
                continue  # its subject is gone: not a fact about `subject` any more
            predicate = row.fact()["predicate"]
            if not is_recall_predicate(predicate):
                count += 1
                predicates.add(predicate)
        return count, sorted(predicates)

    def valid_at(self, ts: Any, subject: Any = None, as_of: Any = None) -> list[Fact]:
        return self.valid_at_page(ts, subject, as_of).items

    def history(self, subject: Any) -> list[Fact]:
        return self.history_page(subject).items

    def recall(self, subject: Any, now_ts: Any, limit: Any = None) -> list[Fact]:
        return self.recall_page(subject, now_ts, limit=limit).items


class FileReader(Lists):
    """The store's fact files (through the fact index); no store at all (root None) recalls nothing."""

    def __init__(self, root: Path | None) -> None:
        self.root = root

    def close(self) -> None:
        pass  # the fact index keeps its own connection cache

    def _store(self) -> Path:
        return open_store(self.root).root if self.root is None else self.root

    def valid_at_rows(self, ts: int, subject: str | None, as_of: int | None) -> Iterator[Row]:

        return queries.valid_at_rows(self._store(), ts, subject, as_of, self.forgotten().forgotten)

    def history_rows(self, subject: str) -> Iterator[Row]:

        return queries.history_rows(self._store(), subject)

    def recall_rows(self, subject: str, now_ts: int) -> Iterator[Row]:

        return iter(()) if self.root is None else queries.recall_rows(self.root, subject, now_ts)

    def other_predicates(self, subject: str, now_ts: int) -> tuple[int, list[str]]:
        return (0, []) if self.root is None else super().other_predicates(subject, now_ts)

    def binder_waiting(self, subject: str) -> int:
        if self.root is None:
            return 0

        forgotten = self.forgotten()
        return sum(1 for record in views.waiting(WorktreeSource(self.root))
                   if record.get("subject") == subject and record.get("id") not in forgotten)

    def forgotten(self) -> Shown:
        return Shown(Forgotten()) if self.root is None else Shown.in_store(self.root)

    def code_store(self) -> Path | None:
        return self.root

    def recall_limit(self) -> int:
        if self.root is None:
            return pages.MCP_DEFAULT_LIMIT
        return int(Store(self.root).config.get("memory", "recall_limit"))
