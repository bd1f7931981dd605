"""`memstack boot rebuild` and `memstack boot show`."""

from typing import Any

from memstack.base.output import emit, shown
from memstack.cli.commands import AGENT, doc
from memstack.repo.store import open_store


def register(sub: Any, common: Any) -> None:
    top = sub.add_parser("boot", help="L1 boot context: anchors and willow.md",
                         **doc("L1 boot context, what an agent reads first: session_anchor_<agent>.json (its"
                               " latest handoff's open threads and capabilities, the newest knowledge) and"
                               " willow.md (every agent's anchor as Markdown, readable with no tools). Both"
                               " are derived files: rebuilt, never edited by hand.",
                               "memstack boot rebuild", "memstack boot show --agent claude"))
    verbs = top.add_subparsers(dest="verb", metavar="VERB", required=True)
    p = verbs.add_parser("rebuild", parents=[common], help="rebuild anchors and willow.md from handoffs and the KB",
                         **doc("Rebuild the boot anchors and willow.md from the handoffs and the knowledge view"
                               " (kb/knowledge/); an unchanged store rewrites nothing.",
                               "memstack boot rebuild --agent claude"))
    p.add_argument("--agent", metavar="A", help="only this agent's anchor (willow.md is always rebuilt)")
    p.set_defaults(func=run_rebuild)
    p = verbs.add_parser("show", parents=[common], help="print an agent's boot anchor (files only, no git)",
                         **doc("Print an agent's boot anchor: session, open threads, capabilities, knowledge.",
                               "memstack boot show --agent claude --json"))
    p.add_argument("--agent", metavar="A", help=AGENT)
    p.set_defaults(func=run_show)


def run_rebuild(args: Any) -> int:
    from memstack.api.boot import rebuild_document  # lazy: --help stays quick

    changed = rebuild_document(open_store(args.store), args.agent)["changed"]
    emit(args, {"changed": changed}, "\n".join(f"rebuilt {p}" for p in changed) or "boot files already fresh")
    return 0


def _human(anchor: dict[str, Any]) -> str:
    """The anchor as text, each value on one line (its control characters escaped: `\\n`, `\\x1b`)."""
    from memstack.boot.context import knowledge_line  # lazy: --help stays quick

    lines = [f"agent {shown(anchor['agent'])}: session {shown(str(anchor['session']))} ({shown(str(anchor['date']))}),"
             f" from {shown(str(anchor['handoff']))}", "open threads:"]
    lines += [f"  - {shown(t)}" for t in anchor["open_threads"]]
    lines.append("capabilities:")
    lines += ["  " + ", ".join(f"{shown(k)}: {shown(v)}" for k, v in row.items()) for row in anchor["capabilities"]]
    lines.append("knowledge:")
    lines += [f"  {knowledge_line(f)}" for f in anchor["knowledge"]] or ["  (nothing promoted to knowledge yet)"]
    if anchor.get("edges"):
        lines.append("confirmed edges touching the open threads:")
        lines += [f"  {shown(e['from'])} -{shown(e['relation'])}-> {shown(e['to'])} (by {shown(e['by'])})"
                  for e in anchor["edges"]]
    if anchor.get("to_reverify"):
        lines.append("to re-verify (their code changed or is gone: `memstack anchors --status drifted`,"
                     " `--status orphaned`):")
        lines += [f"  {f['id']}  {shown(f['subject'])} {shown(f['predicate'])} {shown(f['object'])}"
                  f"  [code: {f['code_status']['status']}]" for f in anchor["to_reverify"]]
        if anchor.get("to_reverify_more"):
            lines.append(f"  ... and {anchor['to_reverify_more']} more")
    return "\n".join(lines)


def run_show(args: Any) -> int:
    from memstack.api.boot import show_document  # lazy: --help stays quick

    anchor = show_document(open_store(args.store), args.agent)
    emit(args, anchor, lambda: _human(anchor))
    return 0
