"""`promote`: the norn-pass as a document."""

from typing import Any

from memstack.base.times import given_ts, now_ms
from memstack.repo.store import Store
from memstack.workflows import promote


def promote_document(store: Store, now_ts: Any = None, dry_run: bool = False,
                     no_commit: bool = False) -> dict[str, Any]:
    """One norn-pass; the document `promote --json` prints and the `promote` tool returns."""

    now = now_ms() if now_ts is None else given_ts(now_ts, "--now-ts")
    return promote.promote(store.root, now, dry_run=dry_run, commit=not no_commit)
