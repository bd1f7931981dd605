"""`memstack review A..B [--format md|json] [--limit N | --full]`."""

from typing import Any

from memstack.base import progress
from memstack.cli.commands import doc
from memstack.repo.store import open_store


def register(sub: Any, common: Any) -> None:
    p = sub.add_parser("review", parents=[common], help="what a range changes in memory (for a pull request)",
                       **doc("What a range of commits changes in memory, for the person reviewing a pull"
                             " request: facts added and superseded, intake by agent, the Binder (what waits and"
                             " what was decided, with its content), promotions, handoffs, SOIL changes,"
                             " credentials found, invariant violations. Counts for everything; each list shows"
                             " its first 50 items unless --limit or --full says otherwise.",
                             "memstack review origin/main..HEAD > review.md",
                             "memstack review HEAD~3..HEAD --format json",
                             "memstack review HEAD~1..HEAD --format json --full > everything.json"))
    p.add_argument("range", metavar="A..B", help="the commits to review, as git names them (e.g. origin/main..HEAD)")
    p.add_argument("--format", choices=("md", "json"), default="md",
                   help="md (Markdown to paste in a pull request, the default) or json (as --json)")
    p.add_argument("--limit", metavar="N", help="at most N items of each list (of each agent's intake records),"
                                                " default 50; the counts say how many there are")
    p.add_argument("--full", action="store_true", help="every item of every list (streamed; may be large)")
    p.set_defaults(func=run)


def run(args: Any) -> int:
    from memstack.api.review import write_review  # lazy: --help stays quick

    store = open_store(args.store)
    args.json = args.json or args.format == "json"
    if args.json:
        progress.silence()  # one document on stdout, nothing beside it
    limit = int(args.limit) if args.limit is not None and args.limit.isascii() and args.limit.isdigit() else args.limit
    write_review(store, args.range, as_json=args.json, limit=limit, full=args.full)
    return 0
