"""`sync`: commit, pull through the drivers, push."""

from typing import Any

from memstack.repo.store import Store
from memstack.workflows import sync


def sync_document(store: Store) -> dict[str, Any]:
    """`sync --json` and the `sync` tool."""

    return sync.sync(store.root)
