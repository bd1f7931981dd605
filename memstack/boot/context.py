"""L1 boot files, derived (the seed's handoff_rebuild): `session_anchor_<agent>.json`, `willow.md`.

Each anchor is built from the agent's latest handoff and `kb/knowledge.json`
(the derived view of valid knowledge); `willow.md` gathers every agent's anchor
into one Markdown file an agent can read with no tools at all. Both are pure
functions of the files: no clock, sorted output, so a rebuild is byte-stable.
"""

import re
from pathlib import Path
from typing import Any

from memstack.base import jsonio, schemas
from memstack.base.errors import MemstackError, bad
from memstack.base.files import write_changed
from memstack.base.forgotten import Forgotten
from memstack.base.jsonio import line_runs
from memstack.base.names import NAME_RE, check_name
from memstack.base.times import iso
from memstack.handoff import sealed as handoff
from memstack.repo.sources import Source, WorktreeSource

KNOWLEDGE_VIEW = "kb/knowledge.json"
BOOT_FACTS = 20  # the most recent valid knowledge facts an anchor carries
WILLOW = "willow.md"


def anchor_name(agent: str) -> str:
    return f"session_anchor_{agent}.json"


def knowledge_facts(source: Source) -> list[dict[str, Any]]:
    """The facts of the knowledge view (empty before the first promotion)."""
    data = source.read(KNOWLEDGE_VIEW)
    if data is None:
        return []
    view = jsonio.loads(data, KNOWLEDGE_VIEW)
    facts = view.get("facts", []) if isinstance(view, dict) else view
    return [f for f in facts if isinstance(f, dict)]


_RECORDED = re.compile(rb'"recorded_at":(-?[0-9]+)(?=[,}])')


def knowledge_summary(source: Source) -> tuple[list[dict[str, Any]], int]:
    """The BOOT_FACTS most recent facts of the knowledge view, and how many it holds. A view as
    `views.py` writes it is read a piece at a time (`_streamed_summary`); any other shape (one written
    by hand, a torn last line among them) is parsed whole."""
    try:
        summary = _streamed_summary(source)
    except MemstackError:  # a torn last line (WorktreeSource.stream refuses it): read whole, as before
        summary = None
    if summary is None:
        every = knowledge_facts(source)
        return recent_facts(every), len(every)
    return summary


def _streamed_summary(source: Source) -> tuple[list[dict[str, Any]], int] | None:
    """The summary of a view as `views.py` writes it (one fact a line, keys sorted), read a piece at a
    time (the view of a million records is 88 MB) without parsing every line: each line's `recorded_at`
    is found by one pattern over the bytes (a JSON string holds no bare quote, so it is the fact's own),
    and only a line as recent as the BOOT_FACTS-th so far is parsed. None: no view, or not that shape."""

    best: list[tuple[tuple[int, str], dict[str, Any]]] = []  # (recency, fact), pruned to BOOT_FACTS
    count = found = 0
    worst: tuple[int, str] | None = None  # the BOOT_FACTS-th best recency once that many are kept
    shaped, last, read = True, False, False
    for number, run in line_runs(source.stream(KNOWLEDGE_VIEW)):  # read to its end, also when not shaped
        read, at = True, 0
        if number == 1:
            first = run[:run.find(b"\n") + 1]
            shaped = first.startswith(b'{"count": ') and first.endswith(b'"facts": [\n')
            if shaped:
                count, at = int(first[len(b'{"count": '):first.index(b",")]), len(first)
        if not shaped:
            continue
        last = run.endswith(b"]}\n")
        for match in _RECORDED.finditer(run, at):
            found += 1
            if worst is not None and -int(match.group(1)) > worst[0]:
                continue  # older than the BOOT_FACTS-th kept
            start, end = run.rfind(b"\n", 0, match.start()) + 1, run.find(b"\n", match.start())
            line = run[start:end]
            fact = jsonio.loads(line[:-1] if line.endswith(b",") else line, KNOWLEDGE_VIEW)
            if not isinstance(fact, dict):
                shaped = False
                break
            key = _recency(fact)
            if worst is None or key < worst:
                best.append((key, fact))
                if len(best) >= 2 * BOOT_FACTS:
                    best = sorted(best, key=lambda kept: kept[0])[:BOOT_FACTS]
                    worst = best[-1][0]
    if not read or not shaped or not last or found != count:  # not one recorded_at a line
        return None
    return [fact for _, fact in sorted(best, key=lambda kept: kept[0])[:BOOT_FACTS]], count


def _recency(fact: dict[str, Any]) -> tuple[int, str]:
    return (-int(fact.get("recorded_at", 0)), str(fact.get("id")))


def recent_facts(facts: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return sorted(facts, key=_recency)[:BOOT_FACTS]


def recent_knowledge(facts: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The BOOT_FACTS most recently recorded facts, in brief."""
    recent = recent_facts(facts)
    return [{k: f[k] for k in ("id", "subject", "predicate", "object", "valid_from")} for f in recent]


def build_anchor(agent: str, latest: tuple[str, handoff.Handoff] | None,
                 facts: list[dict[str, Any]]) -> dict[str, Any]:
    anchor: dict[str, Any] = {
        "agent": agent, "handoff": None, "session": None, "date": None, "open_threads": [], "capabilities": [],
        "knowledge": recent_knowledge(facts),
    }
    if latest is not None:
        relpath, parsed = latest
        anchor.update(handoff=relpath, session=parsed.front["session"], date=parsed.front["date"],
                      open_threads=parsed.open_threads, capabilities=parsed.capabilities)
    schemas.validate("anchor", anchor)
    return anchor


def latest_handoff(source: Source, agent: str, forgotten: Forgotten | None = None
                   ) -> tuple[str, handoff.Handoff] | None:
    """The agent's latest sealed handoff (with `forgotten`, the state's tombstones: the latest not forgotten)."""
    names = [n for n in handoff.ordered(agent, source.listdir(f"handoffs/{agent}"))
             if forgotten is None or f"handoffs/{agent}/{n}" not in forgotten]
    if not names:
        return None
    relpath = f"handoffs/{agent}/{names[-1]}"
    data = source.read(relpath) or b""
    return relpath, handoff.parse(data.decode("utf-8"), relpath)


def build(source: Source) -> dict[str, bytes]:
    """Every boot file, by store-relative path, as a rebuild writes it."""
    facts, count = knowledge_summary(source)  # the most recent only: an anchor and willow.md show no more
    anchors = []
    forgotten = Forgotten.of(source)  # a forgotten handoff boots no one (docs/forgetting.md)
    for agent in source.listdir("handoffs"):
        if NAME_RE.fullmatch(agent):
            latest = latest_handoff(source, agent, forgotten)
            if latest is not None:
                anchors.append(build_anchor(agent, latest, facts))
    outputs = {anchor_name(a["agent"]): jsonio.dumps_pretty(a) for a in anchors}
    outputs[WILLOW] = render_willow(anchors, facts, count).encode("utf-8")
    return outputs


def render_willow(anchors: list[dict[str, Any]], facts: list[dict[str, Any]], count: int | None = None) -> str:
    out = ["# Willow — boot context", "",
           "Derived by `memstack boot rebuild` from the latest handoffs and the knowledge base;",
           "never edit by hand. Start here: read your agent's section, then the knowledge.", ""]
    if not anchors:
        out += ["No agent has sealed a handoff yet.", ""]
    for anchor in anchors:
        out += [f"## Agent {anchor['agent']}", "",
                f"Latest handoff: `{anchor['handoff']}` (session {anchor['session']}, {anchor['date']})", "",
                "### Open threads", ""]
        out += [f"- {thread}" for thread in anchor["open_threads"]]
        out += ["", "### Capabilities", ""]
        if anchor["capabilities"]:
            header = list(anchor["capabilities"][0])
            out += ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
            out += ["| " + " | ".join(row.get(h, "") for h in header) + " |" for row in anchor["capabilities"]]
        else:
            out.append("(none listed)")
        out.append("")
    recent = recent_knowledge(facts)
    out += [f"## Knowledge ({len(recent)} most recent of {len(facts) if count is None else count} valid facts)",
            ""]
    out += [f"- **{f['subject']}** {f['predicate']} {f['object']} (since {iso(f['valid_from'])})" for f in recent]
    if not recent:
        out.append("Nothing promoted to knowledge yet.")
    return "\n".join(out) + "\n"


def rebuild(store: Path, agent: str | None = None) -> list[str]:
    """Rewrite the anchors (all, or one agent's) and willow.md; returns the paths that changed."""
    outputs = build(WorktreeSource(store))
    if agent is not None:
        check_name(agent, "agent")
        if anchor_name(agent) not in outputs:
            raise bad("agent", repr(agent), "no handoff yet under handoffs/{agent}/ — write one first"
                      " (`{verb:memstack handoff write}`)", agent=agent)
        outputs = {k: v for k, v in outputs.items() if k in (anchor_name(agent), WILLOW)}
    return write_changed(store, outputs)


def show(store: Path, agent: str) -> dict[str, Any]:
    """The agent's boot anchor, read from the file alone (no git needed)."""
    check_name(agent, "agent")
    path = store / anchor_name(agent)
    if not path.exists():
        raise MemstackError.marked("no boot anchor for agent {agent!r} ({file} is missing) — seal a handoff, then"
                                   " run `{verb:memstack boot rebuild}`", agent=agent, file=anchor_name(agent))
    anchor: dict[str, Any] = jsonio.loads(path.read_bytes(), anchor_name(agent))
    return anchor
