"""`status`: where a store stands."""

from typing import Any

from memstack.repo.store import Store


def status_document(store: Store) -> dict[str, Any]:
    """The document `status --json` prints and the `status` tool returns."""
    from memstack.workflows import status

    return status.status(store.root)
