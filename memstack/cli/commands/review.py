"""`memstack review A..B [--format md|json]`."""

from typing import Any

from memstack.base import progress
from memstack.cli.commands import doc
from memstack.repo.store import folder_of, open_store


def register(sub: Any, common: Any) -> None:
    p = sub.add_parser("review", parents=[common], help="what a range changes in memory (for a pull request)",
                       **doc("What a range of commits changes in memory, for the person reviewing a pull"
                             " request: facts added and superseded, intake by agent, the Binder, promotions,"
                             " handoffs, SOIL changes, credentials found, invariant violations.",
                             "memstack review origin/main..HEAD > review.md",
                             "memstack review HEAD~3..HEAD --format json"))
    p.add_argument("range", metavar="A..B", help="the commits to review, as git names them (e.g. origin/main..HEAD)")
    p.add_argument("--format", choices=("md", "json"), default="md",
                   help="md (Markdown to paste in a pull request, the default) or json (as --json)")
    p.set_defaults(func=run)


def run(args: Any) -> int:
    from memstack import review  # lazy: the review and its SQLite workspace; --help stays quick

    store = open_store(args.store)
    top, folder = folder_of(store.root)  # a store in a folder of a code repository: its paths only
    args.json = args.json or args.format == "json"
    if args.json:
        progress.silence()  # one document on stdout, nothing beside it
    with review.read_range(top, args.range, folder) as found:  # streamed from disk: never the whole range held
        if args.json:
            review.write_json(found)
        else:
            review.write_markdown(found)
    return 0
