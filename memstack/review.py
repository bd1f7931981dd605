"""`memstack review A..B`: what a range changes in memory, for the person reviewing a pull request.

The net change from A to B (one tree diff, only the changed blobs read) read as
memory: facts added, facts superseded (old and new side by side with their
windows), intake per agent and tier, promotions per sub-tier, Binder decisions,
handoffs sealed, SOIL changes; plus every invariant violation of the range's
commits (`check --range`). Credentials found (I8) come first, by file, line and
kind; no credential is ever printed: every string of the report that holds one is
redacted. Markdown to paste as a pull-request comment, or JSON
with a stable shape for tools.
"""

from collections import Counter
from pathlib import Path
from typing import Any

import orjson

from memstack import check, git, layout, secrets
from memstack.errors import MemstackError
from memstack.output import plural
from memstack.textconv import window
from memstack.times import iso


def _records(data: bytes | None) -> list[dict[str, Any]]:
    found = []
    for line in (data or b"").splitlines():
        try:
            record = orjson.loads(line)
        except orjson.JSONDecodeError:
            continue  # the violations section reports it
        if isinstance(record, dict):
            found.append(record)
    return found


def _new_lines(old: bytes | None, new: bytes | None) -> list[dict[str, Any]]:
    before = set((old or b"").splitlines())
    return _records(b"\n".join(line for line in (new or b"").splitlines() if line not in before))


SHOWN = 20  # records shown per agent (and Binder items) in the Markdown; the rest are counted
CONTENT = 280  # characters of a record's content shown in the Markdown
FACTS_SHOWN = 100  # rows of each facts table in the Markdown; the JSON report lists every one


def review(repo: Path, spec: str, folder: str = "") -> dict[str, Any]:
    ends = spec.split("..")
    if len(ends) != 2 or not all(ends) or spec.startswith("-"):
        raise MemstackError(f"bad range {spec!r}: expected A..B")
    for end in ends:
        if git.rev_parse(repo, f"{end}^{{commit}}") is None:
            raise MemstackError(f"bad range {spec!r}: no commit {end!r} in {repo}")
    # What the range brings, as a pull request shows it: from the merge base, not from A's tip.
    base = git.run(repo, "merge-base", ends[0], ends[1], ok=(0, 1)).stdout.decode().strip() or git.EMPTY_TREE
    changes = git.tree_diffs(repo, [(git.rev_parse(repo, f"{base}^{{tree}}") or git.EMPTY_TREE,
                                     git.rev_parse(repo, f"{ends[1]}^{{tree}}") or git.EMPTY_TREE)],
                             folder)[0]
    report: dict[str, Any] = {"range": spec, "secrets": [], "commits": 0, "facts_added": [], "facts_superseded": [],
                              "intake": {}, "intake_records": [], "promotions": {}, "binder": [], "binder_waiting": [],
                              "binder_edges": [], "binder_files": [],
                              "handoffs": [], "soil": [], "derived": [], "violations": []}
    intake_counts: dict[str, Counter[str]] = {}
    promotions: Counter[str] = Counter()
    added_facts: dict[str, dict[str, Any]] = {}
    with git.CatFile(repo) as blobs:
        def read(sha: str) -> bytes | None:
            return None if git.is_zero(sha) else blobs.read(sha)

        for change in changes:
            place = layout.classify(change.path)
            old, new = read(change.old_sha), read(change.new_sha)
            if place.kind == layout.INTAKE:
                for record in _new_lines(old, new):
                    intake_counts.setdefault(str(record.get("agent")), Counter())[str(record.get("tier"))] += 1
                    report["intake_records"].append({k: record.get(k) for k in ("id", "agent", "tier", "confidence",
                                                                                "title", "created_at", "content")})
            elif place.kind == layout.PROMOTIONS:
                routed = _new_lines(old, new)
                promotions.update(str(line.get("sub_tier")) for line in routed)
                report["binder_waiting"] += [str(line.get("intake_id")) for line in routed
                                             if line.get("sub_tier") == "binder"]
            elif place.kind == layout.BINDER:
                entries = _new_lines(old, new)
                report["binder"] += [{k: d.get(k) for k in ("intake_id", "decision", "by", "decided_at", "note")}
                                     for d in entries if d.get("kind") is None]
                report["binder_edges"] += [d for d in entries if d.get("kind") == "edge"]
                report["binder_files"] += [d for d in entries if d.get("kind") == "file"]
            elif place.kind == layout.FACTS:
                before = {f["id"]: f for f in _records(old) if isinstance(f.get("id"), str)}
                for fact in _records(new):
                    if not isinstance(fact.get("id"), str):
                        continue  # a malformed fact: the violations section names it
                    prior = before.get(fact["id"])
                    if prior is None:
                        added_facts[fact["id"]] = fact
                    elif prior.get("valid_to") is None and fact.get("valid_to") is not None:
                        report["facts_superseded"].append({"before": prior, "after": fact})
            elif place.kind == layout.HANDOFF and change.added:
                report["handoffs"].append({"path": change.path, "agent": place.agent, "date": place.date})
            elif place.kind == layout.SOIL:
                what = "added" if change.added else "deleted" if change.deleted else "changed"
                report["soil"].append({"path": change.path, "change": what})
            elif place.kind in layout.DERIVED:
                report["derived"].append(change.path)
    for item in report["facts_superseded"]:
        item["successor"] = added_facts.get(item["after"].get("superseded_by"))
    report["facts_added"] = sorted(added_facts.values(), key=lambda f: (str(f.get("subject")), f["id"]))
    report["facts_superseded"].sort(key=lambda i: (str(i["before"].get("subject")), i["before"]["id"]))
    report["intake"] = {agent: dict(sorted(c.items())) for agent, c in sorted(intake_counts.items())}
    report["intake_records"].sort(key=lambda r: (str(r["created_at"]), str(r["id"])))
    report["promotions"] = dict(sorted(promotions.items()))
    checked = check.check_range(repo, spec, folder)
    report["commits"] = len(checked.results)
    report["violations"] = checked.to_dict()["violations"]
    report["secrets"] = [{k: v[k] for k in ("commit", "path", "line", "what")}
                         for v in report["violations"] if v["rule"] == "I8"]
    try:
        policy = secrets.for_store(repo / folder)  # its extra patterns redact too
    except MemstackError:
        policy = secrets.DEFAULT  # a broken memstack.yaml: the range's check reports it
    return secrets.redact(report, policy)  # type: ignore[no-any-return]


def _cell(value: Any) -> str:
    return str(value).replace("|", "\\|").replace("\n", " ")


_n = plural  # `1 fact`, `2 facts`


def _more(count: int, word: str) -> list[str]:
    """After a bounded table: how many rows were left out, and where they all are."""
    if count <= FACTS_SHOWN:
        return [""]
    return ["", f"… and {_n(count - FACTS_SHOWN, 'more ' + word)} (`memstack review RANGE --format json` lists all)", ""]


def _text(record: dict[str, Any]) -> str:
    content = " ".join(str(record.get("content") or "").split())
    return content if len(content) <= CONTENT else content[:CONTENT - 1] + "…"


def _record_line(record: dict[str, Any]) -> str:
    title = f"**{_cell(record['title'])}**: " if record.get("title") else ""
    return (f"- `{record.get('id')}` {record.get('tier')} {record.get('confidence')}, {record.get('created_at')}:"
            f" {title}{_cell(_text(record))}")


def _intake_md(report: dict[str, Any]) -> list[str]:
    """Each agent's new records with their content, at most SHOWN each, the rest counted."""
    by_agent: dict[str, list[dict[str, Any]]] = {}
    for record in report["intake_records"]:
        by_agent.setdefault(str(record.get("agent")), []).append(record)
    out = [f"### Intake ({_n(len(report['intake_records']), 'record')})", ""]
    for agent, records in sorted(by_agent.items()):
        tiers = ", ".join(f"{n} {tier}" for tier, n in report["intake"].get(agent, {}).items())
        out += [f"#### {agent}: {_n(len(records), 'record')} ({tiers})", ""]
        out += [_record_line(r) for r in records[:SHOWN]]
        if len(records) > SHOWN:
            out.append(f"- … and {_n(len(records) - SHOWN, 'more record')} from {agent}"
                       f" (`memstack intake list --agent {agent}`)")
        out.append("")
    return out


def _binder_md(report: dict[str, Any]) -> list[str]:
    """What waits for a human decision and what was decided, with the records' content."""
    known = {str(r.get("id")): r for r in report["intake_records"]}
    out: list[str] = []

    def item(intake_id: str, head: str) -> str:
        record = known.get(intake_id)
        what = f"{record.get('agent')}: {_cell(_text(record))}" if record else "(recorded before this range)"
        return f"- {head}`{intake_id}` {what}"

    waiting = report["binder_waiting"]
    if waiting:
        out += [f"### Waiting in the Binder for a human ({_n(len(waiting), 'record')})", ""]
        out += [item(i, "") for i in waiting[:SHOWN]]
        if len(waiting) > SHOWN:
            out.append(f"- … and {_n(len(waiting) - SHOWN, 'more record')} (`memstack binder list`)")
        out.append("")
    decided = report["binder"]
    if decided:
        out += [f"### Binder decisions ({_n(len(decided), 'decision')})", ""]
        for d in decided[:SHOWN]:
            when = d.get("decided_at")
            when = iso(when) if isinstance(when, int) and not isinstance(when, bool) else when
            note = f" — {_cell(d['note'])}" if d.get("note") else ""
            out.append(item(str(d.get("intake_id")), f"{d.get('decision')} by {d.get('by')} at {when}: ")
                       + note)
        if len(decided) > SHOWN:
            out.append(f"- … and {_n(len(decided) - SHOWN, 'more decision')}")
        out.append("")
    return out + _confirmed_md(report)


def _confirmed_md(report: dict[str, Any]) -> list[str]:
    """The relations and documents a human confirmed in the Binder (`binder edge`, `binder file`)."""
    out: list[str] = []
    for key, title, line in (
            ("binder_edges", "Binder edges confirmed",
             lambda e: f"- {_cell(e.get('from'))} —{_cell(e.get('relation'))}→ {_cell(e.get('to'))}"),
            ("binder_files", "Binder documents filed",
             lambda e: f"- `{e.get('path')}` ({_cell(e.get('name'))})")):
        entries = report[key]
        if not entries:
            continue
        out += [f"### {title} ({len(entries)})", ""]
        for e in entries[:SHOWN]:
            when = e.get("decided_at")
            when = iso(when) if isinstance(when, int) and not isinstance(when, bool) else when
            note = f" — {_cell(e['note'])}" if e.get("note") else ""
            out.append(f"{line(e)} by {_cell(e.get('by'))} at {when}{note}")
        if len(entries) > SHOWN:
            out.append(f"- … and {len(entries) - SHOWN} more")
        out.append("")
    return out


def markdown(report: dict[str, Any]) -> str:
    n_intake = len(report["intake_records"])
    out = [f"## memstack review of `{report['range']}` ({_n(report['commits'], 'commit')})", ""]
    if report["secrets"]:
        out += [f"### 🔑 Credentials in this range ({len(report['secrets'])}): rotate them, then rewrite the"
                " history (README, Secrets); they are not shown here", "", "```text"]
        out += [f"{s['commit'][:12] if s['commit'] else ''} {s['path']}:{s['line']}: {s['what']}"
                for s in report["secrets"]]
        out += ["```", ""]
    out += [f"{_n(n_intake, 'intake record')}, {_n(len(report['facts_added']), 'fact')} added,"
           f" {len(report['facts_superseded'])} superseded, {_n(sum(report['promotions'].values()), 'promotion')},"
           f" {_n(len(report['handoffs']), 'handoff')} sealed, {_n(len(report['soil']), 'SOIL change')},"
           f" {_n(len(report['violations']), 'invariant violation') if report['violations'] else 'no invariant violations'}.",
           ""]
    if report["violations"]:
        out += ["### ❌ Invariant violations", "", "```text"]
        out += [f"{v['commit'][:12] if v['commit'] else ''} {v['path']}:{v['line']}: {v['rule']} {v['what']}"
                for v in report["violations"]]
        out += ["```", ""]
    if report["facts_added"]:
        out += [f"### Facts added ({len(report['facts_added'])})", "",
                "| subject | predicate | object | valid | table | agent |", "|---|---|---|---|---|---|"]
        out += [f"| {_cell(f.get('subject'))} | {_cell(f.get('predicate'))} | {_cell(f.get('object'))} |"
                f" {window(f)} | {f.get('table')} | {f.get('agent')} |" for f in report["facts_added"][:FACTS_SHOWN]]
        out += _more(len(report["facts_added"]), "fact")
    if report["facts_superseded"]:
        out += [f"### Facts superseded ({len(report['facts_superseded'])})", "",
                "| subject | predicate | before | window now | after | window |", "|---|---|---|---|---|---|"]
        for item in report["facts_superseded"][:FACTS_SHOWN]:
            before, after = item["before"], item["after"]
            successor = item.get("successor") or {}
            out.append(f"| {_cell(before.get('subject'))} | {_cell(before.get('predicate'))} |"
                       f" {_cell(before.get('object'))} | {window(after)} |"
                       f" {_cell(successor.get('object', '(closed, no successor here)'))} |"
                       f" {window(successor) if successor else ''} |")
        out += _more(len(report["facts_superseded"]), "superseded fact")
    if report["intake_records"]:
        out += _intake_md(report)
    if report["promotions"]:
        out += ["### Promotions", "", "| sub-tier | records |", "|---|---|"]
        out += [f"| {tier} | {n} |" for tier, n in report["promotions"].items()] + [""]
    out += _binder_md(report)
    if report["handoffs"]:
        out += ["### Handoffs sealed", ""] + [f"- `{h['path']}`" for h in report["handoffs"]] + [""]
    if report["soil"]:
        out += ["### SOIL", ""] + [f"- {s['change']} `{s['path']}`" for s in report["soil"]] + [""]
    if report["derived"]:
        out += ["Derived files refreshed: " + ", ".join(f"`{p}`" for p in report["derived"]), ""]
    return "\n".join(out)
