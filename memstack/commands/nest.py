"""`memstack nest FILE --agent A`: a human-filed document enters intake."""

from pathlib import Path
from typing import Any

from memstack import intake
from memstack.output import emit
from memstack.store import open_store, resolve_agent
from memstack.times import now_ms


def register(sub: Any, common: Any) -> None:
    p = sub.add_parser("nest", parents=[common], help="file a document into intake (tier verified, confidence 1.0)")
    p.add_argument("file", metavar="FILE")
    p.add_argument("--agent", metavar="A")
    p.set_defaults(func=run)


def run(args: Any) -> int:
    store = open_store(args.store)
    record = intake.nest(store.root, Path(args.file), resolve_agent(store, args.agent), now_ms())
    emit(args, {"path": intake.relpath_for(record), "record": record},
         f"nested {args.file} as {record['id']} in {intake.relpath_for(record)}")
    return 0
