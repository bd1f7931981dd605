"""`memstack excise [--dry-run]`: remove forgotten content from history, with a receipt (docs/forgetting.md)."""

from typing import Any

from memstack.base.output import emit
from memstack.cli.commands import doc
from memstack.repo.store import open_store


def register(sub: Any, common: Any) -> None:
    p = sub.add_parser(
        "excise", parents=[common], help="remove forgotten records' content from every commit, with a receipt",
        **doc("Rewrite every local branch (git-filter-repo) so that no commit holds the content of a forgotten"
              " record not excised before: its line keeps its id, agent and times, every content field becomes"
              " [excised sha256:<hex>] (a salted hash; the salt stays in .memstack/excise/), and the views, boot"
              " files and Binder queue that copied it are changed the same way. Commit structure, authors, dates"
              " and messages are kept. An erasure receipt (kb/erasures.jsonl) is committed on top of each"
              " rewritten branch; reflogs are expired and old objects pruned. Then force-push each branch as"
              " printed. Refused with a dirty work tree, a merge or rebase in progress, or a stash (pop or drop it"
              " first, or pass --drop-stashes).",
              "memstack excise --dry-run", "memstack excise --reason 'erasure request' --by 'Ada Lovelace'"))
    p.add_argument("--dry-run", action="store_true", help="say what would be rewritten; change nothing")
    p.add_argument("--reason", metavar="TEXT", help="why (recorded in the receipt)")
    p.add_argument("--by", metavar="NAME", help="who excises (default: git user.name, else the login name)")
    p.add_argument("--drop-stashes", action="store_true",
                   help="drop every stash (they hold the old content); without it a stash refuses the excise")
    p.set_defaults(func=run)


def run(args: Any) -> int:
    from memstack.api.excise import excise_document  # lazy: --help stays quick

    document = excise_document(open_store(args.store), by=args.by, reason=args.reason, dry_run=args.dry_run,
                               drop_stashes=args.drop_stashes)
    emit(args, document, lambda: human(document))
    return 0


def human(document: dict[str, Any]) -> str:
    if not document["records"]:
        return "nothing to excise: every forgotten record's content is already out of history"
    lines = [f"{'would excise' if document.get('dry_run') else 'excised'} {len(document['records'])} record(s):"]
    lines += [f"  {name}" for name in document["records"]]
    if "commits" in document:
        lines.append(f"{document['commits']} commit(s) and {document['blobs']} blob(s) rewritten"
                     + (" (nothing changed: --dry-run)" if document.get("dry_run") else ""))
        lines += [f"  {path}: {count} version(s)" for path, count in document["paths"].items()]
    receipt = document.get("receipt")
    if receipt:
        lines.append(f"receipt {receipt['id']} committed in kb/erasures.jsonl on:")
        lines += [f"  {ref}: {h['old'][:12]} -> {h['new'][:12]} (+ the receipt's commit)"
                  for ref, h in receipt["heads"].items()]
        if document.get("salt"):
            lines.append(f"salt (kept in .memstack/excise/{receipt['id']}.salt, shown once): {document['salt']}")
        lines.append("push each branch (the remote refuses the rewrite without its receipt):")
        lines += [f"  {push}" for push in document["push"]]
        lines.append("then the server's operator removes the old objects there: see docs/forgetting.md, Excise")
    return "\n".join(lines)
