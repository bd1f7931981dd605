"""`blame`: where a belief came from (review/blame.py builds the chain)."""

from typing import Any

from memstack.repo.store import Store
from memstack.review import blame


def anchor_statuses(store: Store, anchors: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The record's code anchors as blame shows them. The one place their status against the code
    (fresh, moved, drifted, orphaned) joins them; until then each is shown as it was recorded."""
    del store
    return [dict(anchor) for anchor in anchors]


def blame_document(store: Store, *, id: Any) -> dict[str, Any]:
    """The document `blame ID --json` prints and the `blame` tool returns."""
    document = blame.chain(store.root, blame.check_id(id))
    document["anchors"] = anchor_statuses(store, document["anchors"])
    return document
