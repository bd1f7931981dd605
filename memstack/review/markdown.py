"""The review as Markdown to paste in a pull request, written line by line from the workspace.

Long sections are bounded (FACTS_SHOWN rows of each facts table, SHOWN records per
agent and Binder items) with a count of the rest; each bounded section asks the
workspace for its first rows only.
"""

import sys
from collections.abc import Callable, Iterable
from typing import Any, TextIO

import orjson

from memstack.base.output import plural
from memstack.base.times import iso
from memstack.repo.textconv import window
from memstack.review.gather import Review

SHOWN = 20  # records shown per agent (and Binder items) in the Markdown; the rest are counted
CONTENT = 280  # characters of a record's content shown in the Markdown
FACTS_SHOWN = 100  # rows of each facts table in the Markdown; the JSON report lists every one

_n = plural  # `1 fact`, `2 facts`


class _Lines:
    """Writes lines as `"\\n".join(lines)` would read, then one final newline: a last empty line adds none."""

    def __init__(self, out: TextIO) -> None:
        self.out = out
        self.blank = 0  # empty lines not written yet

    def add(self, *lines: str) -> None:
        for line in lines:
            if not line:
                self.blank += 1
                continue
            self.out.write("\n" * self.blank + line + "\n")
            self.blank = 0

    def close(self) -> None:
        self.out.write("\n" * max(self.blank - 1, 0))


def _cell(value: Any) -> str:
    return str(value).replace("|", "\\|").replace("\n", " ")


def _more(count: int, word: str) -> list[str]:
    """After a bounded table: how many rows were left out, and where they all are."""
    if count <= FACTS_SHOWN:
        return [""]
    return ["", f"… and {_n(count - FACTS_SHOWN, 'more ' + word)}"
                " (`memstack review RANGE --format json` lists all)", ""]


def _text(record: dict[str, Any]) -> str:
    content = " ".join(str(record.get("content") or "").split())
    return content if len(content) <= CONTENT else content[:CONTENT - 1] + "…"


def _when(value: Any) -> Any:
    return iso(value) if isinstance(value, int) and not isinstance(value, bool) else value


def _record_line(record: dict[str, Any]) -> str:
    title = f"**{_cell(record['title'])}**: " if record.get("title") else ""
    return (f"- `{record.get('id')}` {record.get('tier')} {record.get('confidence')}, {record.get('created_at')}:"
            f" {title}{_cell(_text(record))}")


def _loads(rows: Iterable[tuple[bytes]]) -> list[Any]:
    return [orjson.loads(data) for data, in rows]


def _facts(review: Review, out: _Lines) -> None:
    db = review.workspace.db
    added = review.workspace.count("facts")
    if added:
        out.add(f"### Facts added ({added})", "", "| subject | predicate | object | valid | table | agent |",
                "|---|---|---|---|---|---|")
        for f in _loads(db.execute("SELECT data FROM facts ORDER BY subject, id LIMIT ?", (FACTS_SHOWN,))):
            out.add(f"| {_cell(f.get('subject'))} | {_cell(f.get('predicate'))} | {_cell(f.get('object'))} |"
                    f" {window(f)} | {f.get('table')} | {f.get('agent')} |")
        out.add(*_more(added, "fact"))
    superseded = review.workspace.count("superseded")
    if superseded:
        out.add(f"### Facts superseded ({superseded})", "",
                "| subject | predicate | before | window now | after | window |", "|---|---|---|---|---|---|")
        for item in review.superseded(FACTS_SHOWN):
            before, after, successor = item["before"], item["after"], item["successor"] or {}
            out.add(f"| {_cell(before.get('subject'))} | {_cell(before.get('predicate'))} |"
                    f" {_cell(before.get('object'))} | {window(after)} |"
                    f" {_cell(successor.get('object', '(closed, no successor here)'))} |"
                    f" {window(successor) if successor else ''} |")
        out.add(*_more(superseded, "superseded fact"))


def _intake(review: Review, out: _Lines, total: int) -> None:
    """Each agent's new records with their content, at most SHOWN each, the rest counted."""
    db = review.workspace.db
    review.workspace.index("intake_by_agent", "intake (agent, created, id, seq)")
    out.add(f"### Intake ({_n(total, 'record')})", "")
    for agent, count in sorted(db.execute("SELECT agent, count(*) FROM intake GROUP BY agent").fetchall()):
        tiers = ", ".join(f"{n} {tier}" for tier, n in review.intake.get(agent, {}).items())
        out.add(f"#### {agent}: {_n(count, 'record')} ({tiers})", "")
        rows = db.execute("SELECT data FROM intake WHERE agent = ? ORDER BY created, id, seq LIMIT ?", (agent, SHOWN))
        out.add(*(_record_line(r) for r in _loads(rows)))
        if count > SHOWN:
            out.add(f"- … and {_n(count - SHOWN, 'more record')} from {agent}"
                    f" (`memstack intake list --agent {agent}`)")
        out.add("")


def _binder(review: Review, out: _Lines) -> None:
    """What waits for a human decision and what was decided, with the records' content."""
    workspace = review.workspace

    def item(intake_id: str, head: str) -> str:
        row = workspace.db.execute("SELECT data FROM intake WHERE rid = ? ORDER BY created DESC, id DESC, seq DESC"
                               " LIMIT 1", (intake_id,)).fetchone()
        record = orjson.loads(row[0]) if row else None
        what = f"{record.get('agent')}: {_cell(_text(record))}" if record else "(recorded before this range)"
        return f"- {head}`{intake_id}` {what}"

    waiting = workspace.count("items", "WHERE section = ?", "binder_waiting")
    decided = workspace.count("items", "WHERE section = ?", "binder")
    if waiting or decided:
        workspace.index("intake_by_id", "intake (rid, created, id, seq)")
    if waiting:
        out.add(f"### Waiting in the Binder for a human ({_n(waiting, 'record')})", "")
        out.add(*[item(i, "") for i in list(workspace.items("binder_waiting", SHOWN))])
        if waiting > SHOWN:
            out.add(f"- … and {_n(waiting - SHOWN, 'more record')} (`memstack binder list`)")
        out.add("")
    if decided:
        out.add(f"### Binder decisions ({_n(decided, 'decision')})", "")
        for d in list(workspace.items("binder", SHOWN)):
            note = f" — {_cell(d['note'])}" if d.get("note") else ""
            head = f"{d.get('decision')} by {d.get('by')} at {_when(d.get('decided_at'))}: "
            out.add(item(str(d.get("intake_id")), head) + note)
        if decided > SHOWN:
            out.add(f"- … and {_n(decided - SHOWN, 'more decision')}")
        out.add("")
    _confirmed(review, out)


def _confirmed(review: Review, out: _Lines) -> None:
    """The relations and documents a human confirmed in the Binder (`binder edge`, `binder file`)."""
    lines: tuple[tuple[str, str, Callable[[dict[str, Any]], str]], ...] = (
        ("binder_edges", "Binder edges confirmed",
         lambda e: f"- {_cell(e.get('from'))} —{_cell(e.get('relation'))}→ {_cell(e.get('to'))}"),
        ("binder_files", "Binder documents filed",
         lambda e: f"- `{e.get('path')}` ({_cell(e.get('name'))})"))
    for section, title, line in lines:
        count = review.workspace.count("items", "WHERE section = ?", section)
        if not count:
            continue
        out.add(f"### {title} ({count})", "")
        for e in list(review.workspace.items(section, SHOWN)):
            note = f" — {_cell(e['note'])}" if e.get("note") else ""
            out.add(f"{line(e)} by {_cell(e.get('by'))} at {_when(e.get('decided_at'))}{note}")
        if count > SHOWN:
            out.add(f"- … and {count - SHOWN} more")
        out.add("")


def write(review: Review, out: TextIO | None = None) -> None:
    lines = _Lines(out or sys.stdout)
    workspace = review.workspace
    n_intake = workspace.count("intake")
    counts = {section: workspace.count("items", "WHERE section = ?", section) for section in ("handoffs", "soil")}
    lines.add(f"## memstack review of `{review.range}` ({_n(review.commits, 'commit')})", "")
    if review.secrets:
        lines.add(f"### 🔑 Credentials in this range ({len(review.secrets)}): rotate them, then rewrite the"
                  " history (README, Secrets); they are not shown here", "", "```text")
        lines.add(*(f"{s['commit'][:12] if s['commit'] else ''} {s['path']}:{s['line']}: {s['what']}"
                    for s in review.secrets))
        lines.add("```", "")
    violations = review.violations
    lines.add(f"{_n(n_intake, 'intake record')}, {_n(workspace.count('facts'), 'fact')} added,"
              f" {workspace.count('superseded')} superseded, {_n(sum(review.promotions.values()), 'promotion')},"
              f" {_n(counts['handoffs'], 'handoff')} sealed, {_n(counts['soil'], 'SOIL change')},"
              f" {_n(len(violations), 'invariant violation') if violations else 'no invariant violations'}.", "")
    if violations:
        lines.add("### ❌ Invariant violations", "", "```text")
        lines.add(*(f"{v['commit'][:12] if v['commit'] else ''} {v['path']}:{v['line']}: {v['rule']} {v['what']}"
                    for v in violations))
        lines.add("```", "")
    _facts(review, lines)
    if n_intake:
        _intake(review, lines, n_intake)
    if review.promotions:
        lines.add("### Promotions", "", "| sub-tier | records |", "|---|---|")
        lines.add(*(f"| {tier} | {n} |" for tier, n in review.promotions.items()), "")
    _binder(review, lines)
    if counts["handoffs"]:
        lines.add("### Handoffs sealed", "", *(f"- `{h['path']}`" for h in workspace.items("handoffs")), "")
    if counts["soil"]:
        lines.add("### SOIL", "", *(f"- {s['change']} `{s['path']}`" for s in workspace.items("soil")), "")
    if workspace.count("items", "WHERE section = ?", "derived"):
        lines.add("Derived files refreshed: " + ", ".join(f"`{p}`" for p in workspace.items("derived")), "")
    lines.close()
