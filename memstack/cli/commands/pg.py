"""`memstack pg sync [DSN]` / `memstack pg status [DSN]`: the PostgreSQL replica of the committed memory."""

from typing import Any

from memstack.base.output import emit
from memstack.cli.commands import doc
from memstack.repo.store import locate, open_store


def register(sub: Any, common: Any) -> None:
    top = sub.add_parser("pg", help="the PostgreSQL replica of the committed memory (needs memstack[pg])",
                         **doc("The PostgreSQL replica: the memory committed at HEAD copied into schema"
                               " memstack, for hosts with no clone (`--pg` on recall and fact queries). Git"
                               " stays the source of truth.", "memstack pg sync postgresql://localhost/memory",
                               "memstack pg status"))
    verbs = top.add_subparsers(dest="verb", metavar="VERB", required=True)
    dsn = ("the database (a libpq DSN or URI; default: MEMSTACK_PG, then replica.postgres in memstack.yaml)")

    p = verbs.add_parser("sync", parents=[common], help="copy the memory committed at HEAD into schema memstack",
                         **doc("Copy the memory committed at HEAD into schema memstack, incrementally from the"
                               " last synced commit, in one transaction.", "MEMSTACK_PG=postgresql:///memory"
                               " memstack pg sync"))
    p.add_argument("dsn", nargs="?", metavar="DSN", help=dsn)
    p.add_argument("--force", action="store_true",
                   help="copy HEAD even when the replica holds a commit this clone does not have or is behind"
                        " (rolling the replica back)")
    p.set_defaults(func=run_sync)

    p = verbs.add_parser("status", parents=[common], help="the commit the replica holds, how far behind HEAD, rows",
                         **doc("Which commit the replica holds, how far behind HEAD it is, and its row counts.",
                               "memstack pg status --json"))
    p.add_argument("dsn", nargs="?", metavar="DSN", help=dsn)
    p.set_defaults(func=run_status)


def run_sync(args: Any) -> int:
    from memstack.replica import db  # lazy: the replica (psycopg, the optional `pg` extra); --help stays quick
    from memstack.replica import replicate as sync  # lazy: the replica's sync; --help stays quick

    root = open_store(args.store).root
    report = sync.sync(root, db.resolve_dsn(args.dsn, root), force=args.force)
    document = report.document()

    def human() -> str:
        if report.mode == "unchanged":
            return f"replica already at {report.commit[:12]}"
        moved = ", ".join(f"{n} {t}" for t, n in report.inserted.items() if n) or "no rows"
        gone = ", ".join(f"{n} {t}" for t, n in report.deleted.items() if n)
        return (f"replica at {report.commit[:12]} ({report.mode} sync of {report.files} files): copied {moved}"
                + (f"; removed {gone}" if gone else "")
                + (f"; gave back {report.restored} row(s) no longer forgotten" if report.restored else ""))

    emit(args, document, human)
    return 0


def run_status(args: Any) -> int:
    from memstack.replica import db, status  # lazy: the replica (psycopg, the optional `pg` extra); --help stays quick

    root = locate(args.store)
    document = status.status(root, db.resolve_dsn(args.dsn, root))
    emit(args, document, lambda: status.render(document))
    return 0
