"""`memstack binder list|ratify|reject`: the records waiting for a human."""

from typing import Any

from memstack.base import layout
from memstack.base.output import emit, emit_each, emit_page, shown
from memstack.base.times import iso
from memstack.cli.commands import doc, page_options
from memstack.repo.store import open_store


def register(sub: Any, common: Any) -> None:
    top = sub.add_parser("binder", help="the Binder: records waiting for human review",
                         **doc("The Binder (Willow's word for what needs a human): intake records promotion"
                               " could not route on its own (low confidence, unverified), and disagreements"
                               " between agents, wait here until a person ratifies or rejects them.",
                               "memstack binder list", "memstack binder ratify 01a22f76d85d7bac88375856c857d09d"))
    verbs = top.add_subparsers(dest="verb", metavar="VERB", required=True)
    p = verbs.add_parser("list", parents=[common], help="the records waiting for a decision",
                         **doc("The intake records waiting for a human decision, oldest first, then the"
                               " disagreements between agents.", "memstack binder list --json"))
    page_options(p, "entries")
    p.set_defaults(func=run_list)
    for verb, text in (("ratify", "ratify: the next promotion makes it knowledge (tier ratified)"),
                       ("reject", "reject: it stays in the audit trail, never routed again")):
        p = verbs.add_parser(verb, parents=[common], help=text,
                             **doc(f"Binder decision, {text}. The decision is appended to kb/binder.jsonl;"
                                   " commit it for review.",
                                   f"memstack binder {verb} 01a22f76d85d7bac88375856c857d09d --note 'checked it'"))
        p.add_argument("id", metavar="ID", help="the intake record's id (or a disputed fact's id)")
        p.add_argument("--by", metavar="NAME", help="who decides (default: git user.name, else the login name)")
        p.add_argument("--note", metavar="TEXT", help="why")
        p.set_defaults(func=run_decide)
    register_confirmed(verbs, common)


def register_confirmed(verbs: Any, common: Any) -> None:
    """`binder file` and `binder edge`: what a human confirms, entered append-only in kb/binder.jsonl."""
    p = verbs.add_parser(
        "file", parents=[common], help="file a human-confirmed document in the Binder (kept in kb/files/)",
        **doc("Copy a document (UTF-8 text) into the store as kb/files/<sha256>[.ext] and enter it in"
                    " kb/binder.jsonl as confirmed knowledge. Append-only: never edited or deleted. The"
                    " document is a regular file (no symbolic link, FIFO or device) inside the repository"
                    " that holds the store, at most limits.file_bytes, with no credential.",
            "memstack binder file docs/adr-0004.md --by 'Ada Lovelace'"))
    p.add_argument("path", metavar="PATH", help="the document to file (inside the store's repository)")
    p.add_argument("--outside-repo", action="store_true",
                   help="file a document from outside the repository that holds the store (never /proc, /sys, /dev)")
    p.add_argument("--by", metavar="NAME", help="who confirms it (default: git user.name, else the login name)")
    p.add_argument("--note", metavar="TEXT", help="why it is filed")
    p.set_defaults(func=run_file)
    p = verbs.add_parser(
        "edge", parents=[common], help="confirm a relation between two subjects (kb/binder.jsonl)",
        **doc("Enter a human-confirmed relation FROM -RELATION-> TO in kb/binder.jsonl (append-only)."
                    " `memstack related` walks these edges.",
            "memstack binder edge --from parser --to lexer --relation depends-on --note 'tokens first'"))
    p.add_argument("--from", dest="source", metavar="A", required=True, help="the subject the relation starts at")
    p.add_argument("--to", dest="target", metavar="B", required=True, help="the subject it ends at")
    p.add_argument("--relation", metavar="R", required=True, help="how A relates to B (e.g. depends-on)")
    p.add_argument("--by", metavar="NAME", help="who confirms it (default: git user.name, else the login name)")
    p.add_argument("--note", metavar="TEXT", help="why")
    p.set_defaults(func=run_edge)


def _line(r: dict[str, Any]) -> str:
    """One entry as one line: a newline a record holds is escaped (it would print a line of its own)."""
    return shown(_text(r))


def _text(r: dict[str, Any]) -> str:
    if r.get("kind") == "dispute" and "decisions" in r:  # one intake record, decided differently by people
        said = "; ".join(f"{d['decision']} by {d['by']} at {iso(d['decided_at'])}" for d in r["decisions"])
        what = (r["record"] or {}).get("title") or (r["record"] or {}).get("content") or ""
        made = f" (already knowledge: fact {r['fact']})" if r.get("fact") else ""
        return (f"dispute  {r['id']}  {str(what)[:60]!r} was decided differently: {said}{made}"
                f" — `memstack binder ratify|reject {r['id']}` settles it")
    if r.get("kind") == "dispute":
        sides = "; ".join(f"{s['id']} {s['object']!r} by {s['agent']}" + (" (closing kept)" if s["id"] ==
                                                                         r["kept_closing"] else "")
                          for s in r["sides"])
        if r["predecessor"] is None and any(s["id"] == r["id"] for s in r["sides"]):
            return (f"dispute  {r['subject']} | {r['predicate']}: {len(r['sides'])} facts promoted in different"
                    f" clones are open at once: {sides} — `memstack binder ratify <fact id>` keeps one")
        before = r["predecessor"]["object"] if r["predecessor"] else r["id"]
        return (f"dispute  {r['subject']} | {r['predicate']}: {before!r} was closed by {len(r['sides'])} facts: {sides}"
                " — `memstack binder ratify <fact id>` keeps one")
    return f"{r['id']}  {r['agent']}  {r['tier']:<8} {r['confidence']:.2f}  {(r['title'] or r['content'])[:60]}"


def run_list(args: Any) -> int:
    from memstack.api.binder import (  # lazy: --help stays quick
        list_document,
        queue,
    )

    store = open_store(args.store)
    if args.limit is None and args.cursor is None:  # the whole queue: streamed, never held whole
        emit_each(args, queue(store), _line, "the binder queue is empty")
        return 0
    document = list_document(store, limit=args.limit, cursor=args.cursor)
    emit_page(args, document, lambda: "\n".join(_line(r) for r in document["items"]) or "the binder queue is empty")
    return 0


def run_decide(args: Any) -> int:
    from memstack.api.binder import decide_document  # lazy: --help stays quick
    from memstack.kb import binder  # with it (the fact index behind it)

    record = decide_document(open_store(args.store), args.verb, args.id, args.by, args.note)
    emit(args, record, f"{binder.PAST[args.verb]} {args.id} (recorded in {layout.DECISIONS}; commit it for review)")
    return 0


def run_file(args: Any) -> int:
    from memstack.api.binder import file_document  # lazy: --help stays quick

    entry = file_document(open_store(args.store), path=args.path, by=args.by, note=args.note,
                          outside_repo=args.outside_repo)
    emit(args, entry, f"filed {args.path} as {entry['path']} (entered in {layout.DECISIONS}; commit both for review)")
    return 0


def run_edge(args: Any) -> int:
    from memstack.api.binder import edge_document  # lazy: --help stays quick

    entry = edge_document(open_store(args.store), source=args.source, target=args.target, relation=args.relation,
                          by=args.by, note=args.note)
    emit(args, entry, f"confirmed {entry['from']} -{entry['relation']}-> {entry['to']} (in {layout.DECISIONS};"
                      " commit it for review)")
    return 0
