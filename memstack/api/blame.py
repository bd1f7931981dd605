"""`blame`: where a belief came from (review/blame.py builds the chain)."""

from typing import Any

from memstack.base import ids
from memstack.base.shown import Shown
from memstack.repo.store import Store
from memstack.review import blame


def anchor_statuses(store: Store, anchors: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The record's code anchors as blame shows them. The one place their status against the code
    (fresh, moved, drifted, orphaned) joins them; until then each is shown as it was recorded."""
    del store
    return [dict(anchor) for anchor in anchors]


def blame_document(store: Store, *, id: Any) -> dict[str, Any]:
    """The document `blame ID --json` prints and the `blame` tool returns, as every read shows it
    (docs/forgetting.md): each forgotten record of the chain `[forgotten: reason]`, a credential anywhere
    (a record, a note, a commit message) `[redacted: kind]` (base/shown.py)."""
    document = blame.chain(store.root, ids.checked(id))
    document["anchors"] = anchor_statuses(store, document["anchors"])
    shown = Shown.in_store(store.root)
    for key in ("fact", "intake", "closed_by"):
        if document[key] is not None:
            document[key] = {**document[key], "record": shown.record(document[key]["record"])}
    for key in ("closed", "decisions"):
        document[key] = [{**entry, "record": shown.record(entry["record"])} for entry in document[key]]
    return shown.redacted(document)
