"""`migrate`: a store of format 1 made format 2 in one commit (the command line only)."""

from typing import Any

from memstack.repo.store import Store
from memstack.workflows import migrate


def migrate_document(store: Store) -> dict[str, Any]:
    """`migrate --json`."""

    return migrate.migrate(store.root)
