"""`memstack sync`: commit the memory, merge the remote's, rebuild, push (memstack/workflows/sync.py)."""

from typing import Any

from memstack.base.output import emit, plural
from memstack.cli.commands import doc
from memstack.repo.store import open_store


def register(sub: Any, common: Any) -> None:
    p = sub.add_parser("sync", parents=[common],
                       help="commit the memory, merge the remote's, rebuild derived files, push",
                       **doc("Share this clone's memory: commit what is uncommitted (through the hooks), merge"
                             " the remote's through the merge driver, rebuild the derived files from both and"
                             " commit them, push; retried when another agent pushed first. What it pushes is"
                             " never stale.",
                             "memstack sync"))
    p.set_defaults(func=run)


def _human(found: dict[str, Any]) -> str:
    where = f"{found['remote']}/{found['branch']}"
    lines = [f"committed {made['commit'][:12]} {made['message'].splitlines()[0]}"
             for made in (found["committed"], *found["also_committed"]) if made]
    for pulled in found["pulls"]:
        moved = pulled.get("after_excise")
        if moved:
            lines.append(f"{where} was rewritten by an excise (erasure receipt {', '.join(moved['receipts'])}):"
                         f" moved {plural(moved['replayed'], 'commit')} of this clone onto it"
                         f" ({moved['from'][:12]} -> {moved['to'][:12]})")
            lines.append("purged here: the old history (reflogs expired, `git gc --prune=now`) and the local"
                         " indexes (rebuilt on next use)")
        if pulled["merged"]:
            how = "fast-forwarded to" if pulled["fast_forward"] else "merged"
            lines.append(f"{how} {where} ({pulled['from'][:12]} -> {pulled['to'][:12]})")
    lines += [f"committed {r['commit'][:12]} {r['message'].splitlines()[0]}" for r in found["rebuilt"]]
    if found["pushed"]:
        lines.append(f"pushed {found['pushed'][:12]} to {where}"
                     + (f" (attempt {found['attempts']})" if found["attempts"] > 1 else ""))
    elif lines:
        lines.append(f"nothing to push: {where} holds every commit here")
    return "\n".join(lines) or f"in sync with {where}: nothing to do"


def run(args: Any) -> int:
    from memstack.api.sync import sync_document  # lazy: --help stays quick

    found = sync_document(open_store(args.store))
    emit(args, found, lambda: _human(found))
    return 0
