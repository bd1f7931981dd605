"""`memstack blame ID`: the chain behind a belief (a fact id or an intake id)."""

from typing import Any

from memstack.base.output import emit, shown
from memstack.base.times import iso
from memstack.cli.commands import doc
from memstack.repo.store import open_store


def register(sub: Any, common: Any) -> None:
    p = sub.add_parser(
        "blame", parents=[common], help="where a fact or intake record came from: records, commits, decisions",
        **doc("The chain behind a belief: the fact's line and the commit that added it (author, date, message),"
              " the intake record it was promoted from and its commit, the merge that brought each into the"
              " current branch, the promotion, the Binder decisions and who made them, the facts it closed and"
              " the fact that closed it, and its code anchors. Reads only the files the records live in and"
              " those files' own history.",
              "memstack blame 0193c2a1b2c3d4e5f6a7b8c9d0e1f2a3-f",
              "memstack blame 0193c2a1b2c3d4e5f6a7b8c9d0e1f2a3 --json"))
    p.add_argument("id", metavar="ID", help="a fact id or an intake record's id")
    p.set_defaults(func=run_blame)


def _commit(label: str, commit: dict[str, Any] | None) -> list[str]:
    if commit is None:
        return []
    return [shown(f"  {label:<10} {commit['commit'][:12]}  {commit['date']}  {commit['author']} <{commit['email']}>"),
            shown(f"  {'':<10} {commit['message']}")]


def _placed(entry: dict[str, Any]) -> list[str]:
    lines = _commit("added in", entry["added"]) or ["  not committed on this branch yet"]
    return lines + _commit("merged by", entry["merge"])


def _fact(title: str, entry: dict[str, Any], history: bool = True) -> list[str]:
    f = entry["record"]
    window = f"{iso(f['valid_from'])} .. {iso(f['valid_to']) if f.get('valid_to') is not None else 'open'}"
    head = [shown(f"{title} {f['id']}  {entry['path']}:{entry['line']}"),
            shown(f"  {f['subject']} {f['predicate']} {f['object']}"),
            shown(f"  valid {window}  confidence {f['confidence']}  {f.get('table', 'knowledge')}"
                  f"  by {f.get('agent') or '?'}")]
    return head + (_placed(entry) if history else [])


def text(doc: dict[str, Any]) -> str:
    out: list[str] = []
    if doc["fact"]:
        out += _fact("fact", doc["fact"])
    intake = doc["intake"]
    if intake:
        r = intake["record"]
        out += [shown(f"intake {r['id']}  {intake['path']}:{intake['line']}"),
                shown(f"  {r.get('title') or r['content'][:80]}"),
                shown(f"  {r['tier']}  confidence {r['confidence']}  by {r['agent']}  at {r['created_at']}"
                      + (f"  source {r['source']}" if r.get("source") else ""))] + _placed(intake)
    for p in doc["promotions"]:
        made = f"fact {p['fact_id']}" if p.get("fact_id") else "no fact"
        out.append(shown(f"promoted {iso(p['promoted_at'])} to {p['sub_tier']} ({made}) via {p.get('via', '?')}"))
    for d in doc["decisions"]:
        r = d["record"]
        what = f"intake {r['intake_id']}" if "intake_id" in r else f"fact {r['fact_id']}"
        out += [shown(f"binder {r['decision']} of {what} by {r['by']}" + (f" (via {r['via']})" if r.get("via") else "")
                      + f" at {iso(r['decided_at'])}  {d['path']}:{d['line']}")]
        out += ([shown(f"  note: {r['note']}")] if r.get("note") else []) + _placed(d)
    for c in doc["closed"]:
        out += _fact("closed", c, history=False)
    if doc["closed_by"]:
        out += _fact("closed by", doc["closed_by"])
    elif doc["fact"] and doc["fact"]["record"].get("valid_to") is not None:
        out.append(f"no successor: invalidated, valid until {iso(doc['fact']['record']['valid_to'])}")
    if doc["anchors"]:
        out.append("code anchors")
        for a in doc["anchors"]:
            where = f"{a['path']}:{a['start']}-{a['end']}" if a.get("start") is not None else a["path"]
            status = f"  {a['status']}" if a.get("status") else ""
            out.append(shown(f"  {where}  at {str(a.get('commit', '?'))[:12]}{status}"))
    return "\n".join(out)


def run_blame(args: Any) -> int:
    from memstack.api.blame import blame_document  # lazy: --help stays quick

    document = blame_document(open_store(args.store), id=args.id)
    emit(args, document, lambda: text(document))
    return 0
