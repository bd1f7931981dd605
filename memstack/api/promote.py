"""`promote`: the norn-pass as a document."""

from typing import Any

from memstack.base import pages
from memstack.base.errors import bad
from memstack.base.times import given_ts, now_ms
from memstack.repo.store import Store
from memstack.workflows import promote

DRY_RUN_SHOWN = 50  # the records a dry run lists when no limit is given; it counts the rest


def promote_document(store: Store, now_ts: Any = None, dry_run: bool = False,
                     no_commit: bool = False, limit: Any = None) -> dict[str, Any]:
    """One norn-pass; the document `promote --json` prints and the `promote` tool returns. A dry run lists
    the routing of the first `limit` records (default DRY_RUN_SHOWN) and counts the rest (`remaining`)."""

    shown = pages.check_limit(limit) or DRY_RUN_SHOWN
    if limit is not None and not dry_run:  # a promotion routes every pending record: a limit would be ignored
        raise bad("--limit", str(limit), "a limit only bounds what {arg:--dry-run} lists; a promotion routes every"
                  " pending record")
    now = now_ms() if now_ts is None else given_ts(now_ts, "--now-ts")
    return promote.promote(store.root, now, dry_run=dry_run, commit=not no_commit, listed=shown)
