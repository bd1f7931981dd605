"""One promotion: gathered, routed, decided and written a chunk at a time, then the views rebuilt and
one commit made."""

from collections import Counter
from contextlib import nullcontext
from pathlib import Path
from typing import Any

from memstack.base import clock, files, progress
from memstack.kb import factstore, views
from memstack.workflows.derived import rebuild
from memstack.workflows.promote import pending
from memstack.workflows.promote.commit import (
    can_commit,
    commit_message,
    make_commit,
    memory_changes_asked,
    uncommitted_ledger,
    written_ahead,
)
from memstack.workflows.promote.gather import gather
from memstack.workflows.promote.planner import Planner, Routed
from memstack.workflows.promote.supersede import supersede, write_facts, write_ledger


def promote(store: Path, now_ms: int, *, dry_run: bool = False, commit: bool = True,
            listed: int | None = None) -> dict[str, Any]:
    """Route what is pending, write it, commit it. `now_ms` (`--now-ts`) may not lie beyond the clock skew;
    nothing is written from it (a ledger line's promoted_at is derived from its record). A run that
    fails (its commit refused by a hook, say) puts every file back as it found it. A dry run keeps the
    routing of the first `listed` records (all with None) and counts the rest."""
    clock.refuse_future(store, ("--now-ts", now_ms))
    if commit and not dry_run:
        can_commit(store)
    # A real run holds the commit window (base/files.py): a writer waits for it, so no line lands between the
    # views it rebuilds and its commit (refused: I4), nor is cut away when a refused run puts its files back.
    with files.committing(store) if not dry_run else nullcontext(), files.locked(store, "promote"), \
            files.undone_on_error(store):
        if not dry_run:
            factstore.finish_pending(store)  # a capture a killed process left half done
        # What differs from HEAD, asked of git while the intake files are read; with what this run writes.
        changes = memory_changes_asked(store) if commit and not dry_run else None
        gathered = gather(store)
        planner = Planner(store, gathered)
        counts: Counter[str] = Counter()
        ratified = superseded = facts_added = 0
        shown_records: list[dict[str, Any]] = []
        unshown = 0  # a dry run's records past the `listed` first: counted, not kept
        later: list[tuple[int, Routed, str | None]] = []  # the ratified: their ledger lines last, as decided
        with progress.bar(len(gathered.keys), "promote: routing") as shown:
            for keys, found in gathered.chunks():  # one chunk at a time: routed, decided, written
                routed, made = planner.route(keys, found, shown)
                counts.update(item.sub_tier for item in routed if item.decision is None)
                ratified += len(found)
                if dry_run:
                    room = len(routed) if listed is None else max(0, listed - len(shown_records))
                    shown_records += [{"intake_id": i.intake_id, "agent": i.agent, "sub_tier": i.sub_tier,
                                       "via": i.via} for i in routed[:room]]
                    unshown += len(routed[room:])
                    continue
                decided = supersede(store, made)
                facts_added += len(decided.append)
                superseded += write_facts(store, made, decided, checked=commit)
                fact_ids = decided.fact_ids + [None] * (len(routed) - len(decided.fact_ids))
                write_ledger(store, routed[:len(keys)], fact_ids[:len(keys)])
                later += zip((item.order for item in found), routed[len(keys):], fact_ids[len(keys):], strict=True)
                del routed, made, decided, fact_ids
        held = planner.held  # skipped for a credential (warned on stderr; an MCP client reads it here)
        if dry_run:
            return {"dry_run": True, "routed": dict(counts), "ratified": ratified, "records": shown_records,
                    "remaining": unshown, "held": held}
        moved = bool(gathered.keys or later)
        later.sort(key=lambda entry: entry[0])
        write_ledger(store, [item for _, item, _ in later], [fact_id for _, _, fact_id in later])
        pending.save(store, *gathered.read)  # the next promotion reads only what is written after
        del gathered, planner, later  # the views are rebuilt without them
        dirty = changes() if changes else None  # before the rebuild
        ahead = written_ahead(store, dirty) if dirty else None  # their blobs written meanwhile, on another core
        with views.remembering():  # the commit's check compares the shards built here by id (kb/views.py)
            changed = rebuild(store, changed_only=True, dirty=dirty)  # the shards whose sources changed
            if ahead is not None:
                ahead()
            if dirty is not None:  # what the commit moves: this run's lines and any an interrupted run left
                dirty = sorted({*dirty, *changed})
                counts, ratified = uncommitted_ledger(store, dirty)
            message = commit_message(counts, ratified, superseded)
            sha = make_commit(store, message, dirty) if dirty is not None else None
    return {"dry_run": False, "routed": dict(counts), "ratified": ratified, "superseded": superseded,
            "facts_added": facts_added, "changed": changed, "commit": sha, "held": held,
            "message": message if sha or moved or changed else "nothing to promote"}
