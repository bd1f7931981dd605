"""`memstack export ferrox|jsonl [--output FILE] [--at TS]`: every fact, streamed out (docs/ferrox.md);
`memstack export knowledge [--table T] [--output FILE]`: one fact view as a single JSON array."""

import sys
from pathlib import Path
from typing import Any

from memstack.base.output import emit
from memstack.base.times import given_ts
from memstack.cli.commands import doc
from memstack.repo.store import open_store


def register(sub: Any, common: Any) -> None:
    top = sub.add_parser("export", help="every fact, streamed (ferrox, JSON lines), or a fact view as one array",
                         **doc("Write every fact out, streamed, as a ferrox fact store or as JSON lines.",
                               "memstack export ferrox --output facts.json", "memstack export jsonl --at now"))
    forms = top.add_subparsers(dest="form", metavar="FORM", required=True)
    for form, what in (("ferrox", 'a ferrox fact store, {"facts": [...]}, the seed\'s seven fields'),
                       ("jsonl", "one JSON object a line, every field memstack keeps")):
        p = forms.add_parser(form, parents=[common], help=what,
                             **doc(f"Every fact as {what}.", f"memstack export {form} --output facts.{form}"))
        p.add_argument("--output", metavar="FILE", help="write FILE (replaced once complete) instead of stdout")
        p.add_argument("--at", metavar="TS", help="only the facts valid at this instant (ms, ISO-8601 or `now`)")
        p.set_defaults(func=run)
    p = forms.add_parser("knowledge", parents=[common], help="one fact view as a single JSON array (valid-now facts)",
                         **doc("The open facts of one table as a single JSON array, sorted by subject, predicate,"
                               " valid_from and id, each with its distilled_at: the view's shards as one file.",
                               "memstack export knowledge --output knowledge.json",
                               "memstack export knowledge --table opus_atoms"))
    p.add_argument("--table", choices=("knowledge", "jeles_atoms", "opus_atoms"), default="knowledge",
                   help="the view (default knowledge)")
    p.add_argument("--output", metavar="FILE", help="write FILE (replaced once complete) instead of stdout")
    p.set_defaults(func=run, at=None)


def run(args: Any) -> int:
    from memstack.kb import export, facts  # lazy: the export reads every fact file; --help stays quick

    root = open_store(args.store).root
    at = None if args.at is None else facts.timestamp(given_ts(args.at, "at"), "at")
    table = getattr(args, "table", "knowledge")
    if args.output is None:
        export.write(root, args.form, sys.stdout.buffer, at, table)
        sys.stdout.flush()
        return 0
    count = export.write_file(root, args.form, Path(args.output), at, table)
    what = f"{args.form}, {table}" if args.form == "knowledge" else args.form
    emit(args, {"facts": count, "format": args.form, "output": args.output, **({"table": table} if
                                                                                  args.form == "knowledge" else {})},
         f"exported {count} facts to {args.output} ({what})")
    return 0
