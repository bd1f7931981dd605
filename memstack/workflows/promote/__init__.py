"""`memstack promote`, the norn-pass: route pending intake into the KB, derive the views, commit.

One pass, with the store's state loaded once:

1. every intake record not yet in its intake file's ledger shard
   (`kb/promotions/<agent>/YYYY-MM-DD.jsonl`) is routed (routing.py)
   to knowledge, jeles_atoms, opus_atoms or the binder; records a human has
   ratified since the last pass go to knowledge at tier `ratified`;
2. a routed record becomes a fact with its provenance. The triple is the
   record's `subject`/`predicate`/`object` when it has them; otherwise subject =
   the title (or `note:<intake id>` without one), predicate `noted`, object =
   the content. Its id is derived from the intake id (`<id>-f`, `<id>-r` when
   ratified), valid_from and recorded_at are the record's `created_at` (the
   decision's `decided_at` when ratified): no clock, so the same logs give the
   same facts;
3. a new fact supersedes the open facts of its table, subject and predicate
   with another object: they are closed at its valid_from. A new fact older
   than an open one is added already closed, superseded by it. An open fact
   with the same object makes the record a duplicate: no new fact, the ledger
   points at the existing one;
4. facts are appended, closings written, ledger lines appended (each line's
   promoted_at is its record's time, planner.promoted_at: nothing a promotion
   writes comes from the clock, so two clones promoting the same records write
   the same bytes and merge as one, docs/merge.md), views and boot files
   rebuilt, and everything under `kb/`, `intake/` and `handoffs/` and the boot
   files is committed, in one commit.

Each step streams (docs/bounded.md, "Promotion at scale"): a pending record is kept as one int (its
time, file and line) and read back BATCH at a time. The records are routed, decided and written
CHUNK at a time in time order, a chunk never splitting a millisecond and taking the ratified records
of its span, so the facts of one chunk are all older than the next one's: a chunk boundary changes
when lines are written, never what (the ledger lines of ratified records come last, as in one pass).

Interrupted anywhere, a second run finishes the same work: fact ids are
derived, so facts already written are not written twice, and whatever the
ledger holds is committed with the rebuilt views.
"""

from memstack.workflows.derived import rebuild, stale
from memstack.workflows.promote.planner import fact_id_for, plan
from memstack.workflows.promote.run import promote

__all__ = ["fact_id_for", "plan", "promote", "rebuild", "stale"]
