"""`memstack migrate`: convert a store of format 1 to format 2 in one commit (memstack/workflows/migrate.py)."""

from typing import Any

from memstack.base.output import emit
from memstack.cli.commands import doc
from memstack.repo import clonehooks
from memstack.repo.store import open_store


def register(sub: Any, common: Any) -> None:
    p = sub.add_parser("migrate", parents=[common],
                       help="convert a store of format 1 to format 2 in one commit",
                       **doc("Move the promotion ledger kb/promotions.jsonl into one file per intake file"
                             " (kb/promotions/<agent>/YYYY-MM-DD.jsonl, every line unchanged), rebuild the"
                             " views, set `format: 2` in memstack.yaml, and commit that alone; the hooks verify"
                             " the commit. Refused while memory is uncommitted. Interrupted, run it again: it"
                             " finishes.",
                             "memstack migrate"))
    p.set_defaults(func=run)


def run(args: Any) -> int:
    from memstack.api.migrate import migrate_document  # lazy: --help stays quick

    clonehooks.hush()  # the migration installs this memstack's hooks itself, and says so
    found = migrate_document(open_store(args.store, old_format_ok=True))
    emit(args, found, lambda: found["message"])
    return 0
