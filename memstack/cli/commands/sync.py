"""`memstack sync`: commit the memory, pull through the drivers, rebuild, push (memstack/workflows/sync.py)."""

from typing import Any

from memstack.base.output import emit
from memstack.cli.commands import doc
from memstack.repo.store import open_store


def register(sub: Any, common: Any) -> None:
    p = sub.add_parser("sync", parents=[common],
                       help="commit the uncommitted memory, merge the remote's, rebuild derived files, push",
                       **doc("Share this clone's memory: commit what is uncommitted (through the hooks),"
                             " merge the remote's through the merge driver, rebuild derived files when the"
                             " pull brought new sources, push; retried when another agent pushed first.",
                             "memstack sync"))
    p.set_defaults(func=run)


def _human(found: dict[str, Any]) -> str:
    lines = []
    if found["committed"]:
        lines.append(f"committed {found['committed']['commit'][:12]} {found['committed']['message'].splitlines()[0]}")
    merges = [p for p in found["pulls"] if p["merged"]]
    for pulled in merges:
        lines.append(f"merged {found['remote']}/{found['branch']} ({pulled['from'][:12]} -> {pulled['to'][:12]})")
    lines += [f"rebuilt derived files in {r['commit'][:12]}" for r in found["rebuilt"]]
    if found["pushed"]:
        lines.append(f"pushed {found['pushed'][:12]} to {found['remote']}/{found['branch']}"
                     + (f" (attempt {found['attempts']})" if found["attempts"] > 1 else ""))
    return "\n".join(lines) or f"in sync with {found['remote']}/{found['branch']}: nothing to do"


def run(args: Any) -> int:
    from memstack.api.sync import sync_document  # lazy: --help stays quick

    found = sync_document(open_store(args.store))
    emit(args, found, lambda: _human(found))
    return 0
