"""`memstack nest FILE --agent A`: a human-filed document enters intake."""

from pathlib import Path
from typing import Any

from memstack.base.output import emit
from memstack.base.times import now_ms
from memstack.cli.commands import AGENT, anchor_options, doc
from memstack.intake import log as intake
from memstack.repo.store import open_store, resolve_agent


def register(sub: Any, common: Any) -> None:
    p = sub.add_parser("nest", parents=[common],
                       help="the Nest: file a document into intake (tier verified, confidence 1.0)",
                       **doc("Nest (Willow's word for a human filing a document into memory): the document enters"
                             " intake as one record at tier verified, confidence 1.0, so the next promotion makes it"
                             " knowledge. The same text filed before under the same file name is not filed again:"
                             " `already recorded` with its id, exit 0.",
                             "memstack nest docs/decisions/0004-deploys.md --agent claude"))
    p.add_argument("file", metavar="FILE", help="the UTF-8 text file to file into intake")
    p.add_argument("--agent", metavar="A", help=f"whose intake it enters: {AGENT}")
    anchor_options(p)
    p.set_defaults(func=run)


def run(args: Any) -> int:
    store = open_store(args.store)
    from memstack.anchors.take import take_all  # lazy: --help stays quick

    anchors = take_all(store, args.anchor, repo=args.repo, here=Path.cwd())
    record, already = intake.nest(store.root, Path(args.file), resolve_agent(store, args.agent), now_ms(), anchors)
    where = intake.relpath_for(record)
    emit(args, {"path": where, "record": record, "already_recorded": already},
         f"already recorded: {args.file} is {record['id']} in {where} (nothing written)" if already
         else f"nested {args.file} as {record['id']} in {where}")
    return 0
