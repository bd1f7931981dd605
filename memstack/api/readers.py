"""Which reader answers the fact read verbs: the PostgreSQL replica when a DSN is given, else the files."""

import os
from pathlib import Path

from memstack.base.errors import MemstackError
from memstack.kb.readers import FactReader, FileReader
from memstack.replica.db import ENV, resolve_dsn
from memstack.replica.reads import ReplicaReader
from memstack.repo.store import locate, open_store


def pg_dsn(store: str | None, pg: str | None) -> str | None:
    """The replica's DSN when `--pg` was given (bare `--pg`: MEMSTACK_PG, then memstack.yaml), else None."""
    if pg is None:
        return None
    if not pg and not os.environ.get(ENV):
        return resolve_dsn(None, locate(store))
    return resolve_dsn(pg, None)


def fact_reader(store: str | None, pg: str | None = None, optional_store: bool = False) -> FactReader:
    """The replica when a DSN is given, else the store's files (`optional_store`: no store is no error)."""
    if pg is not None:
        return ReplicaReader(pg, _clone(store))
    return FileReader(locate(store) if optional_store else open_store(store).root)


def _clone(store: str | None) -> Path | None:
    """The store the command runs in, if any (the replica's answers follow their code anchors into its code
    repository); none, or one that cannot be read, is no error: the replica answers without them."""
    try:
        return locate(store)
    except MemstackError:
        return None
