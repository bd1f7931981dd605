"""The review as Markdown to paste in a pull request, written line by line from the workspace.

Each section is bounded (its first LIMIT rows: each facts table, each agent's
records, each Binder section, the violations) and followed by a count of the rest;
it asks the workspace for its first rows only. `--full` lists every row.
"""

import sys
from collections.abc import Callable, Iterable, Iterator
from typing import Any, TextIO

import orjson

from memstack.base.output import plural, shown
from memstack.base.times import iso
from memstack.repo.textconv import window
from memstack.review import binder
from memstack.review.gather import Review

LIMIT = 50  # items of each section (per agent for intake) a report shows unless asked for all; the rest counted
CONTENT = 280  # characters of a record's content shown in the Markdown

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
    """A value on one line of the report: control characters escaped as `shown` does (a line written into a
    note or a record is no command to the reader's terminal), `|` too (a Markdown table's column)."""
    return shown(str(value)).replace("|", "\\|")


class _Bound:
    """A report's bound: the rows each section shows (`n`, -1 for all) and the words for the rest."""

    def __init__(self, review: Review, limit: int | None) -> None:
        self.limit, self.n = limit, -1 if limit is None else limit
        self.full = f"`memstack review {review.range} --full` lists all"

    def rest(self, count: int, word: str, where: str = "", of: str = "") -> str:
        """`… and 39950 more facts (where they all are)`, or "" when every one was shown."""
        if self.limit is None or count <= self.limit:
            return ""
        return f"… and {_n(count - self.limit, 'more ' + word)}{of} ({where or self.full})"

    def more(self, count: int, word: str) -> list[str]:
        """After a bounded table: how many rows were left out, and where they all are."""
        rest = self.rest(count, word)
        return ["", rest, ""] if rest else [""]

    def bullet(self, count: int, word: str, where: str = "", of: str = "") -> list[str]:
        rest = self.rest(count, word, where, of)
        return [f"- {rest}"] if rest else []


def _text(record: dict[str, Any]) -> str:
    content = " ".join(str(record.get("content") or "").split())
    return content if len(content) <= CONTENT else content[:CONTENT - 1] + "…"


def _when(value: Any) -> Any:
    return iso(value) if isinstance(value, int) and not isinstance(value, bool) else value


def _record_line(record: dict[str, Any]) -> str:
    title = f"**{_cell(record['title'])}**: " if record.get("title") else ""
    return (f"- `{record.get('id')}` {record.get('tier')} {record.get('confidence')}, {record.get('created_at')}:"
            f" {title}{_cell(_text(record))}")


def _loads(rows: Iterable[tuple[bytes]]) -> Iterator[Any]:
    return (orjson.loads(data) for data, in rows)  # row by row: with --full a section may be the whole range


def _facts(review: Review, out: _Lines, bound: _Bound, counts: dict[str, int]) -> None:
    db = review.workspace.db
    added = counts["facts_added"]
    if added:
        out.add(f"### Facts added ({added})", "", "| subject | predicate | object | valid | table | agent |",
                "|---|---|---|---|---|---|")
        for f in _loads(db.execute("SELECT data FROM facts ORDER BY subject, id LIMIT ?", (bound.n,))):
            out.add(f"| {_cell(f.get('subject'))} | {_cell(f.get('predicate'))} | {_cell(f.get('object'))} |"
                    f" {window(f)} | {f.get('table')} | {f.get('agent')} |")
        out.add(*bound.more(added, "fact"))
    superseded = counts["facts_superseded"]
    if superseded:
        out.add(f"### Facts superseded ({superseded})", "",
                "| subject | predicate | before | window now | after | window |", "|---|---|---|---|---|---|")
        for item in review.superseded(bound.n):  # `before` is None for a fact the range added already closed
            after, successor = item["after"], item["successor"] or {}
            out.add(f"| {_cell(after.get('subject'))} | {_cell(after.get('predicate'))} |"
                    f" {_cell(after.get('object'))} | {window(after)} |"
                    f" {_cell(successor.get('object', '(closed, no successor here)'))} |"
                    f" {window(successor) if successor else ''} |")
        out.add(*bound.more(superseded, "superseded fact"))


def _place(place: dict[str, Any] | None) -> str:
    if place is None:
        return "-"
    lines = "" if place["start"] is None else f":{place['start']}" if place["start"] == place["end"] \
        else f":{place['start']}-{place['end']}"
    return f"`{place['path']}{lines}`"


def _stale_anchors(review: Review, out: _Lines, bound: _Bound, counts: dict[str, int]) -> None:
    """The records whose code anchors the range made stale, per changed file (`anchors check`), with the
    old and new lines of each drifted anchor; at most the bound of files."""
    files, records = counts["code_anchors_stale"], counts["code_anchors_stale_records"]
    if not files:
        return
    out.add(f"### Code anchors made stale ({_n(records, 'record')} in {_n(files, 'file')})", "",
            f"The code this range changes no longer says what this memory says of it. If a fact still holds,"
            f" `memstack anchors reverify ID --by NAME`; else capture what holds now (`capture --contradicts`)."
            f" `memstack anchors check {review.range}` lists the same.", "")
    for changed in review.stale_files()[:bound.limit]:
        to = f" to `{changed['to']}`" if changed.get("to") else ""
        out.add(f"#### `{_cell(changed['path'])}` ({changed['change']}{to})", "")
        for record in changed["records"]:
            about = " ".join(_cell(record[k]) for k in ("subject", "predicate", "object") if k in record) \
                or _cell(record.get("title", ""))
            out.add(f"- {record['status']} {record['kind']} `{record['id']}` {record.get('agent')}: {about}")
            for anchor in record["anchors"]:
                now = f" → {_place(anchor['now'])}" if anchor["status"] != "orphaned" else ""
                reason = f" ({anchor['reason']})" if anchor.get("reason") else ""
                out.add(f"  - {anchor['status']} {_place(anchor)}{now}{reason}")
                if anchor["status"] == "drifted":
                    out.add("", "    ```diff")
                    out.add(*(f"    - {text}" for text in anchor["old_lines"] or ["(the old lines are not here)"]))
                    out.add(*(f"    + {text}" for text in anchor["new_lines"]), "    ```")
        out.add("")
    out.add(*bound.bullet(files, "file", f"`memstack anchors check {review.range}` lists all"), "")


def _intake(review: Review, out: _Lines, bound: _Bound, total: int) -> None:
    """Each agent's new records with their content, at most the bound each, the rest counted."""
    db = review.workspace.db
    review.workspace.index("intake_by_agent", "intake (agent, created, id, seq)")
    out.add(f"### Intake ({_n(total, 'record')})", "")
    for agent, count in sorted(db.execute("SELECT agent, count(*) FROM intake GROUP BY agent").fetchall()):
        tiers = ", ".join(f"{n} {tier}" for tier, n in review.intake.get(agent, {}).items())
        out.add(f"#### {agent}: {_n(count, 'record')} ({tiers})", "")
        rows = db.execute("SELECT data FROM intake WHERE agent = ? ORDER BY created, id, seq LIMIT ?",
                          (agent, bound.n))
        for record in _loads(rows):
            out.add(_record_line(record))
        out.add(*bound.bullet(count, "record", f"`memstack intake list --agent {agent}`", f" from {agent}"), "")


def _about(item: dict[str, Any], tip: str) -> str:
    """What a Binder item names: the intake record's agent and content, or the fact's triple and window."""
    if "fact_id" in item:
        fact = item.get("fact")
        what = (f"{_cell(fact.get('agent'))}: {_cell(fact.get('subject'))} {_cell(fact.get('predicate'))}"
                f" {_cell(fact.get('object'))} {window(fact)}" if fact else f"(no such fact at {tip[:12]})")
        return f"fact `{item['fact_id']}` {what}"
    record = item.get("record")
    what = f"{record.get('agent')}: {_cell(_text(record))}" if record else f"(no such record at {tip[:12]})"
    return f"`{item.get('intake_id')}` {what}"


def _binder(review: Review, out: _Lines, bound: _Bound, counts: dict[str, int]) -> None:
    """What still waits for a human decision and what was decided, each with the content it is about."""
    waiting, decided = counts["binder_waiting"], counts["binder"]
    if waiting:
        out.add(f"### Waiting in the Binder for a human ({_n(waiting, 'record')})", "")
        for item in binder.waiting(review, bound.n):
            out.add(f"- {_about(item, review.tip)}")
        out.add(*bound.bullet(waiting, "record", "`memstack binder list`"), "")
    if decided:
        out.add(f"### Binder decisions ({_n(decided, 'decision')})", "")
        for d in binder.decisions(review, bound.n):
            note = f" — {_cell(d['note'])}" if d.get("note") else ""
            out.add(f"- {d.get('decision')} by {_who(d)} at {_when(d.get('decided_at'))}:"
                    f" {_about(d, review.tip)}{note}")
        out.add(*bound.bullet(decided, "decision"), "")
    _sections(review, out, bound, counts, _CONFIRMED)


def _who(line: dict[str, Any]) -> str:
    """Who made a Binder line; one an agent made over MCP says so (it is no person's decision)."""
    return _cell(line.get("by")) + (" (agent, over MCP)" if line.get("via") == "mcp" else "")


Section = tuple[str, str, Callable[[dict[str, Any]], str]]  # (workspace section, title, an item's line)


def _signed(e: dict[str, Any], at: str) -> str:
    """Who made a line and when, and its note."""
    return f" by {_who(e)} at {_when(e.get(at))}" + (f" — {_cell(e['note'])}" if e.get("note") else "")


def _sections(review: Review, out: _Lines, bound: _Bound, counts: dict[str, int], sections: tuple[Section, ...]
              ) -> None:
    """Each of `sections` that holds items: its title, count and first items, a line each."""
    for section, title, line in sections:
        if counts[section]:
            out.add(f"### {title} ({counts[section]})", "")
            out.add(*(line(item) for item in review.workspace.items(section, bound.n)))
            out.add(*bound.bullet(counts[section], "item"), "")


# The relations and documents a human confirmed in the Binder (`binder edge`, `binder file`).
_CONFIRMED: tuple[Section, ...] = (
    ("binder_edges", "Binder edges confirmed",
     lambda e: f"- {_cell(e.get('from'))} —{_cell(e.get('relation'))}→ {_cell(e.get('to'))}"
               + _signed(e, "decided_at")),
    ("binder_files", "Binder documents filed",
     lambda e: f"- `{e.get('path')}` ({_cell(e.get('name'))})" + _signed(e, "decided_at")))

# What the range forgot (tombstones), erased from history (erasure receipts) and re-checked against the code
# (`anchors reverify`): each line says who, when and why.
_FORGETS_AND_RECHECKS: tuple[Section, ...] = (
    ("forgotten", "Forgotten",
     lambda t: f"- {_cell(t.get('kind'))} `{_cell(t.get('forgets'))}`: {_cell(t.get('reason'))} —"
               + _signed(t, "forgotten_at")),
    ("erasures", "Erased from history",
     lambda e: f"- {len(e.get('records') or [])} record(s), receipt `{_cell(e.get('id'))}`:"
               f" {_cell(e.get('reason'))} —" + _signed(e, "excised_at")),
    ("reverified", "Re-verified against the code",
     lambda r: f"- fact `{_cell(r.get('reverified'))}` at "
               + ", ".join(f"`{_cell(a.get('path'))}`" for a in r.get("anchors") or [] if isinstance(a, dict))
               + " —" + _signed(r, "decided_at")))


def _found(review: Review, lines: _Lines, bound: _Bound) -> None:
    """Credentials found and invariant violations, each list bounded (`memstack check --range` lists all)."""
    where = f"`memstack check --range {review.range}` lists all"
    if review.secrets:
        lines.add(f"### 🔑 Credentials in this range ({len(review.secrets)}): rotate them, then rewrite the"
                  " history (README, Secrets); they are not shown here", "", "```text")
        lines.add(*(f"{s['commit'][:12] if s['commit'] else ''} {s['path']}:{s['line']}: {s['what']}"
                    for s in review.secrets[:bound.limit]))
        lines.add(*([rest] if (rest := bound.rest(len(review.secrets), "credential", where)) else []), "```", "")


def _migration(review: Review, lines: _Lines) -> None:
    """A range that converts the store's format (`memstack migrate`): what it moved is no promotion."""
    said = [f"The store's format converted from {review.formats[0]} to {review.formats[1]}"
            " (`memstack migrate`)."] if review.formats else []
    if review.moved:
        said.append(f"{_n(review.moved, 'ledger line')} of `kb/promotions.jsonl` moved unchanged to the ledger shards"
                    " of their intake files: no record promoted, none sent to the Binder.")
    if said:
        lines.add(" ".join(said), "")


def _violations(review: Review, lines: _Lines, bound: _Bound) -> None:
    violations = review.violations
    if violations:
        lines.add("### ❌ Invariant violations", "", "```text")
        lines.add(*(f"{v['commit'][:12] if v['commit'] else ''} {v['path']}:{v['line']}: {v['rule']} {v['what']}"
                    for v in violations[:bound.limit]))
        where = f"`memstack check --range {review.range}` lists all"
        lines.add(*([rest] if (rest := bound.rest(len(violations), "violation", where)) else []), "```", "")


def write(review: Review, out: TextIO | None = None, limit: int | None = LIMIT) -> None:
    """The report, each section showing its first `limit` rows (every row when `limit` is None)."""
    lines, bound, counts = _Lines(out or sys.stdout), _Bound(review, limit), review.counts()
    workspace = review.workspace
    lines.add(f"## memstack review of `{review.range}` ({_n(review.commits, 'commit')})", "")
    _found(review, lines, bound)
    violations = review.violations
    lines.add(f"{_n(counts['intake_records'], 'intake record')}, {_n(counts['facts_added'], 'fact')} added,"
              f" {counts['facts_superseded']} superseded, {_n(sum(review.promotions.values()), 'promotion')},"
              f" {_n(counts['handoffs'], 'handoff')} sealed, {_n(counts['soil'], 'SOIL change')},"
              + (f" {_n(counts['forgotten'], 'record')} forgotten," if counts["forgotten"] else "")
              + f" {_n(len(violations), 'invariant violation') if violations else 'no invariant violations'}.", "")
    _violations(review, lines, bound)
    _migration(review, lines)
    _facts(review, lines, bound, counts)
    _stale_anchors(review, lines, bound, counts)
    if counts["intake_records"]:
        _intake(review, lines, bound, counts["intake_records"])
    if review.promotions:
        lines.add("### Promotions", "", "| sub-tier | records |", "|---|---|")
        lines.add(*(f"| {tier} | {n} |" for tier, n in review.promotions.items()), "")
    if review.ledger_shards:  # where the ledger lines went: one shard per intake file
        shards = list(review.ledger_shards.items())
        lines.add("| ledger shard | lines added |", "|---|---|")
        lines.add(*(f"| `{path}` | {n} |" for path, n in (shards if bound.n < 0 else shards[:bound.n])))
        lines.add(*bound.more(len(shards), "ledger shards"))
    _binder(review, lines, bound, counts)
    _sections(review, lines, bound, counts, _FORGETS_AND_RECHECKS)
    for section, title, show in (("handoffs", "Handoffs sealed", lambda h: f"- `{h['path']}`"),
                                 ("soil", "SOIL", lambda s: f"- {s['change']} `{s['path']}`")):
        if counts[section]:
            lines.add(f"### {title}", "")
            for item in workspace.items(section, bound.n):
                lines.add(show(item))
            lines.add(*bound.bullet(counts[section], "item"), "")
    if counts["derived"]:
        lines.add("Derived files refreshed: " + ", ".join(f"`{p}`" for p in workspace.items("derived")), "")
    lines.close()
