"""Where the fact read verbs get their answers: the store's files, or the PostgreSQL replica (`--pg`).

`recall`, `fact get-valid-at` and `fact history` (and their MCP tools) build
their documents from a FactReader, so the same command code answers from
either source. Both implementations decide the answer with the same rules
(`facts.py`); the tests hold them to byte-identical `--json` documents.
"""

import argparse
import os
from pathlib import Path
from typing import Any, Protocol

from memstack.facts import Fact
from memstack.store import Store, locate, open_store


class FactReader(Protocol):
    def valid_at(self, ts: Any, subject: Any = None, as_of: Any = None) -> list[Fact]: ...

    def history(self, subject: Any) -> list[Fact]: ...

    def recall(self, subject: Any, now_ts: Any, limit: Any = None) -> list[Fact]: ...

    def close(self) -> None: ...


class FileReader:
    """The store's fact files (through the fact index); no store at all (root None) recalls nothing."""

    def __init__(self, root: Path | None) -> None:
        self.root = root

    def close(self) -> None:
        pass  # the fact index keeps its own connection cache

    def _store(self) -> Path:
        return open_store(self.root).root if self.root is None else self.root

    def valid_at(self, ts: Any, subject: Any = None, as_of: Any = None) -> list[Fact]:
        from memstack import factstore

        return factstore.get_valid_at(self._store(), ts, subject, as_of)

    def history(self, subject: Any) -> list[Fact]:
        from memstack import factstore

        return factstore.history(self._store(), subject)

    def recall(self, subject: Any, now_ts: Any, limit: Any = None) -> list[Fact]:
        from memstack import factstore

        if self.root is None:
            factstore.recall_args(subject, now_ts, 1 if limit is None else limit)  # bad input is still bad
            return []
        if limit is None:
            limit = Store(self.root).config.get("memory", "recall_limit")
        return factstore.recall(self.root, subject, now_ts, limit)


def add_pg_option(parser: argparse.ArgumentParser, what: str = "answer") -> None:
    """`--pg [DSN]`: None when absent, "" when given bare (then `pg_dsn` looks the DSN up)."""
    parser.add_argument("--pg", nargs="?", const="", default=None, metavar="DSN",
                        help=f"{what} from the PostgreSQL replica (`memstack pg sync`) at DSN (default: MEMSTACK_PG,"
                             " then replica.postgres in memstack.yaml)")


def pg_dsn(store: str | None, pg: str | None) -> str | None:
    """The replica's DSN when `--pg` was given (bare `--pg`: MEMSTACK_PG, then memstack.yaml), else None."""
    if pg is None:
        return None
    from memstack.replica.db import ENV, resolve_dsn

    if not pg and not os.environ.get(ENV):
        return resolve_dsn(None, locate(store))
    return resolve_dsn(pg, None)


def fact_reader(store: str | None, pg: str | None = None, optional_store: bool = False) -> FactReader:
    """The replica when a DSN is given, else the store's files (`optional_store`: no store is no error)."""
    if pg is not None:
        from memstack.replica.reads import ReplicaReader

        return ReplicaReader(pg)
    return FileReader(locate(store) if optional_store else open_store(store).root)
