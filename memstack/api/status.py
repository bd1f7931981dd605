"""`status`: where a store stands."""

from typing import Any

from memstack.anchors import survey
from memstack.repo.store import Store
from memstack.workflows import status


def status_document(store: Store) -> dict[str, Any]:
    """The document `status --json` prints and the `status` tool returns."""

    return {**status.status(store.root), "anchors": survey.counts(store)}
