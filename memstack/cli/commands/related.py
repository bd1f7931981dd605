"""`memstack related SUBJECT`: the subject's confirmed edges and the facts that name other subjects."""

from typing import Any

from memstack.base.output import emit, shown
from memstack.cli.commands import doc
from memstack.kb.edges import MAX_DEPTH
from memstack.repo.store import open_store


def register(sub: Any, common: Any) -> None:
    p = sub.add_parser(
        "related", parents=[common], help="a subject's Binder edges and the facts naming other subjects",
        **doc("Walk out from SUBJECT: the human-confirmed edges that touch it (either end), and its facts"
                    " valid now whose object is another subject known to the store; with --depth N, again from"
                    " each subject reached, up to N steps. Nearest first.",
            "memstack related parser --depth 2 --json"))
    p.add_argument("subject", metavar="SUBJECT", help="the subject to start from")
    p.add_argument("--depth", metavar="N", default=1, help=f"steps to walk, 1 to {MAX_DEPTH} (default: 1)")
    p.add_argument("--limit", metavar="N", help="at most N items (the --json document's next_cursor goes on)")
    p.add_argument("--cursor", metavar="C", help="continue after a previous page (its next_cursor)")
    p.set_defaults(func=run_related)


def _line(item: dict[str, Any]) -> str:
    what = f"edge by {item['by']}" if item["kind"] == "edge" else f"fact {item['id']}"
    return shown(f"{item['depth']}  {item['from']} -{item['relation']}-> {item['to']}  ({what})")


def run_related(args: Any) -> int:
    from memstack.api.related import related_document  # lazy: --help stays quick

    doc = related_document(open_store(args.store), subject=args.subject, depth=args.depth, limit=args.limit,
                           cursor=args.cursor)
    emit(args, doc, lambda: "\n".join(_line(i) for i in doc["items"]) + (
        f"\n… {doc['remaining']} more (--cursor {doc['next_cursor']})" if doc["next_cursor"] else "")
        if doc["items"] else f"nothing related to {shown(repr(args.subject))}")
    return 0
