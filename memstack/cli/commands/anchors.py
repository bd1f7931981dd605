"""`memstack anchors`: is the memory about the code still true of it?"""

from typing import Any

from memstack.anchors.follow import STATUSES
from memstack.base.output import emit, emit_page, plural
from memstack.base.times import iso
from memstack.cli.commands import doc, page_options
from memstack.repo.store import open_store


def register(sub: Any, common: Any) -> None:
    p = sub.add_parser("anchors", parents=[common], help="whether anchored memory still matches the code",
                       **doc("Each open fact and pending intake record with code anchors, and each anchor's status"
                             " against the work tree (or --rev): fresh (the lines are unchanged, perhaps shifted:"
                             " where they are now), moved (the file was renamed or the lines moved to another file:"
                             " the new place), drifted (the lines changed: old and new lines), orphaned (the file or"
                             " the lines are gone). A record's status is its worst anchor's. Reads; writes only its"
                             " cache in .memstack/.",
                             "memstack anchors --status drifted",
                             "memstack anchors --subject deploys --rev origin/main --json"))
    p.add_argument("--subject", metavar="S", help="only records of this subject")
    p.add_argument("--status", metavar="STATUS", help=f"only records of this status: {', '.join(STATUSES)}")
    p.add_argument("--rev", metavar="REV", help="against this revision of the code repository (default: the work tree)")
    p.add_argument("--repo", metavar="PATH",
                   help="the code repository (default: code.repo in memstack.yaml, then the repository holding the"
                        " store)")
    page_options(p, "records")
    p.set_defaults(func=run)
    verbs = p.add_subparsers(dest="verb", metavar="VERB", required=False)
    r = verbs.add_parser("reverify", parents=[common], help="record that an anchored fact still holds of the code",
                         **doc("Record (append-only, in the Binder log) that you checked an open fact against the"
                               " code as it is now and it still holds: its anchors are taken again where its lines"
                               " are now, and `memstack anchors` follows those from then on (fresh at the new"
                               " commit). The fact itself never changes. An anchor whose lines are gone cannot be"
                               " re-checked: capture what holds now with `capture --contradicts`.",
                               "memstack anchors reverify 01a23b27de1f3d95392d3cbf2bd806c9 --by ada"))
    r.add_argument("id", metavar="ID", help="the fact's id (`memstack anchors` lists them)")
    r.add_argument("--by", required=True, metavar="NAME", help="who checked it")
    r.add_argument("--note", metavar="TEXT", help="what was checked")
    r.add_argument("--repo", metavar="PATH", help="the code repository (as for `memstack anchors`)")
    r.set_defaults(func=run_reverify)
    c = verbs.add_parser("check", parents=[common], help="the anchored memory a code change makes stale",
                         **doc("The facts and pending intake records that the code change A..B makes stale, per"
                               " changed file: of the records the store holds at B, those with an anchor into a"
                               " file the change touched (from the merge base of A and B to B, as a pull request"
                               " shows it) that is moved, drifted or orphaned at B. Exit 0 when nothing is made"
                               " stale, 1 when something is (CI can warn or fail on it), 2 on a bad range. Reads"
                               " only.",
                               "memstack anchors check origin/main..HEAD",
                               "memstack anchors check HEAD~1..HEAD --json"))
    c.add_argument("range", metavar="A..B", help="the code change, as git names it (e.g. origin/main..HEAD)")
    c.add_argument("--repo", metavar="PATH", help="the code repository (as for `memstack anchors`)")
    page_options(c, "changed files")
    c.set_defaults(func=run_check)


def where(place: dict[str, Any] | None) -> str:
    if place is None:
        return "-"
    if place["start"] is None:
        return str(place["path"])
    if place["start"] == place["end"]:
        return f"{place['path']}:{place['start']}"
    return f"{place['path']}:{place['start']}-{place['end']}"


def _lines(item: dict[str, Any], indent: str = "") -> list[str]:
    about = " | ".join(str(item[k]) for k in ("subject", "predicate", "object") if k in item) or item.get("title", "")
    out = [f"{indent}{item['status']:<8} {item['kind']} {item['id']}  {about}"]
    if item.get("reverified"):  # the latest re-check its anchors follow (`anchors reverify`)
        out.append(f"{indent}  reverified by {item['reverified']['by']} at {iso(item['reverified']['decided_at'])}")
    for anchor in item["anchors"]:
        line = f"{indent}  {anchor['status']:<8} {where(anchor)}"
        if anchor["status"] != "orphaned" and where(anchor["now"]) != where(anchor):
            line += f" -> {where(anchor['now'])}"
        if anchor.get("reason"):
            line += f" ({anchor['reason']})"
        out.append(line)
        if anchor["status"] == "drifted":
            out += [f"{indent}    - {text}" for text in anchor["old_lines"]
                    or ["(the old lines are not in this repository)"]]
            out += [f"{indent}    + {text}" for text in anchor["new_lines"]]
    return out


def run(args: Any) -> int:
    from memstack.api.anchors import anchors_document  # lazy: --help stays quick

    document = anchors_document(open_store(args.store), subject=args.subject, status=args.status, rev=args.rev,
                                repo=args.repo, limit=args.limit, cursor=args.cursor)
    emit_page(args, document, lambda: "\n".join(line for item in document["items"] for line in _lines(item))
              or "no anchored memory" + (f" of status {args.status}" if args.status else ""))
    return 0


def run_reverify(args: Any) -> int:
    from memstack.api.anchors import reverify_document  # lazy: --help stays quick

    entry = reverify_document(open_store(args.store), id=args.id, by=args.by, note=args.note, repo=args.repo)
    emit(args, entry, lambda: f"reverified {entry['reverified']} by {entry['by']}: anchors now "
         + ", ".join(where(a) for a in entry["anchors"]))
    return 0


def _checked(document: dict[str, Any]) -> str:
    out = []
    for changed in document["files"]:
        to = f" to {changed['to']}" if changed.get("to") else ""
        out.append(f"{changed['path']} ({changed['change']}{to}): {plural(len(changed['records']), 'record')}"
                   " made stale")
        for record in changed["records"]:
            out += _lines(record, "  ")
    stale = document["stale"]
    out.append(f"{plural(stale, 'record') if stale else 'nothing'} made stale by {document['range']}"
               f" ({plural(document['changed_files'], 'changed file')},"
               f" {document['anchored_files']} of them anchored)")
    return "\n".join(out)


def run_check(args: Any) -> int:
    from memstack.api.anchors import check_document  # lazy: --help stays quick

    document = check_document(open_store(args.store), range=args.range, repo=args.repo, limit=args.limit,
                              cursor=args.cursor)
    emit_page(args, document, lambda: _checked(document))
    return 1 if document["stale"] else 0
