"""`memstack excise`: forgotten records' content removed from history, with a receipt (docs/forgetting.md)."""

from typing import Any

from memstack.base.errors import bad
from memstack.repo import git
from memstack.repo.store import Store
from memstack.workflows.excise.run import excise

DEFAULT_REASON = "forgotten on purpose: the content of the records the tombstones name"


def excise_document(store: Store, *, by: str | None = None, reason: str | None = None,
                    dry_run: bool = False, drop_stashes: bool = False) -> dict[str, Any]:
    """`excise --json`: the records, the commits and blobs the rewrite changes; after a real run the receipt
    and the pushes to make."""
    for field, value in (("--by", by), ("--reason", reason)):
        if value is not None and (not value.strip() or any(ord(ch) < 32 or 127 <= ord(ch) < 160 for ch in value)):
            raise bad(field, repr(value), "give a non-empty text on one line without control characters")
    return excise(store.root, by=git.person(store.root) if by is None else by, reason=reason or DEFAULT_REASON,
                  dry_run=dry_run, drop_stashes=drop_stashes)
