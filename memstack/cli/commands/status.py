"""`memstack status`: pending intake, the Binder, stale derived files, uncommitted memory, last promotion."""

from typing import Any

from memstack.base.output import emit, plural
from memstack.cli.commands import doc
from memstack.repo.store import open_store


def register(sub: Any, common: Any) -> None:
    p = sub.add_parser(
        "status", parents=[common], help="where the store stands: pending intake, Binder, stale views, uncommitted",
        **doc("Pending intake per agent, Binder items waiting for a human, derived files that lag their"
                    " sources, memory not yet committed, the last promotion, and whether the fact index in"
                    " .memstack/ is in step with the fact files, and how many records with code anchors are"
                    " fresh, moved, drifted or orphaned. Reads; writes nothing but its cache in .memstack/.",
            "memstack status --json"))
    p.set_defaults(func=run_status)


STALE_SHOWN = 10  # stale files named on the human line (a store's first promotion can leave hundreds): --json has all


def _human(doc: dict[str, Any]) -> str:
    pending = doc["pending_intake"]
    per_agent = ", ".join(f"{a} {n}" for a, n in pending.items())
    lines = [f"store {doc['store']}",
             "pending intake: " + (f"{per_agent} (total {doc['pending_total']}; `memstack promote` routes them)"
                                   if pending else "none")]
    waiting = doc["binder_waiting"]
    disputes = "not counted (fact index behind)" if waiting["disputes"] is None else str(waiting["disputes"])
    lines.append(f"Binder waiting: {plural(waiting['records'], 'record')}, disputes {disputes}")
    stale = doc["stale"]
    more = f", … and {len(stale) - STALE_SHOWN} more (`memstack rebuild --check`)" if len(stale) > STALE_SHOWN else ""
    lines.append("stale derived files: " + (", ".join(stale[:STALE_SHOWN]) + more + " (they lag their sources, no"
                                            " violation; `memstack rebuild` or `memstack sync` refreshes them)"
                                            if stale else "none"))
    changed = doc["uncommitted"]
    if changed is None:
        lines.append("uncommitted memory: not a git work tree")
    else:
        lines.append(f"uncommitted memory: {len(changed)} files" if changed else "uncommitted memory: none")
        lines += [f"  {c['status']:>2} {c['path']}" for c in changed[:20]]
        if len(changed) > 20:
            lines.append(f"  … and {len(changed) - 20} more (`git status`)")
    last = doc["last_promotion"]
    if last is None:
        lines.append("last promotion: never")
    else:
        commit = f"{last['commit'][:12]} at {last['time']}" if last["commit"] else "not committed"
        lines.append(f"last promotion: {commit}; ledger's last promoted_at {last['promoted_at']}")
    index = doc["index"]
    behind = f"behind by {index['files_behind']} files, {index['bytes_behind']:,} bytes (the next query catches up)"
    state = ("in step" if index["fresh"] else "not built yet (the next query builds it)" if not index["exists"]
             else behind)
    lines.append(f"fact index: {state}" + (" — a build is running" if index["building"] else ""))
    anchors = doc["anchors"]
    if anchors is None:
        lines.append("code anchors: no code repository (code.repo in memstack.yaml names one)")
    elif any(anchors.values()):
        shows = " and ".join(f"`memstack anchors --status {status}`" for status in ("drifted", "orphaned")
                             if anchors[status])
        lines.append(f"code anchors: {anchors['fresh']} fresh, {anchors['moved']} moved, {anchors['drifted']} drifted,"
                     f" {anchors['orphaned']} orphaned" + (f" ({shows} {'show' if ' and ' in shows else 'shows'} them)"
                                                           if shows else ""))
    return "\n".join(lines)


def run_status(args: Any) -> int:
    from memstack.api.status import status_document  # lazy: --help stays quick

    doc = status_document(open_store(args.store))
    emit(args, doc, lambda: _human(doc))
    return 0
