"""L1 boot files, derived (the seed's handoff_rebuild): `session_anchor_<agent>.json`, `willow.md`.

Each anchor is built from the agent's latest handoff and the knowledge view's shards
(`kb/knowledge/<agent>/YYYY-MM.json`, the derived view of valid knowledge); `willow.md` gathers every agent's anchor
into one Markdown file an agent can read with no tools at all, with the facts whose anchored code changed
(reverify.py: "To re-verify", against the code of the same state). Both are pure functions of the files:
no clock, sorted output, so a rebuild is byte-stable.
"""

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from memstack.base import jsonio, schemas
from memstack.base.disputed import disputed_with, marked
from memstack.base.errors import MemstackError, bad
from memstack.base.files import remove, write_changed
from memstack.base.forgotten import Forgotten
from memstack.base.names import NAME_RE, check_name
from memstack.base.output import shown
from memstack.base.times import iso
from memstack.boot import reverify
from memstack.boot.recent import BOOT_FACTS, Recent, recent_facts
from memstack.handoff import sealed as handoff
from memstack.repo.counts import CachedCounts, Counter, count_entries
from memstack.repo.sources import Source, WorktreeSource
from memstack.repo.traced import Trace, Traced

KNOWLEDGE_VIEW = "kb/knowledge"  # the knowledge view's shards: kb/knowledge/<agent>/YYYY-MM.json
WILLOW = "willow.md"


def anchor_name(agent: str) -> str:
    return f"session_anchor_{agent}.json"


def _shards(source: Source) -> list[tuple[str, str]]:
    """(month, path) of every shard of the knowledge view, newest month first."""
    found = [(name.removesuffix(".json"), f"{KNOWLEDGE_VIEW}/{agent}/{name}")
             for agent in source.listdir(KNOWLEDGE_VIEW) if NAME_RE.fullmatch(agent)
             for name in source.listdir(f"{KNOWLEDGE_VIEW}/{agent}") if name.endswith(".json")]
    return sorted(found, reverse=True)


def knowledge_summary(source: Source, counted: Counter = count_entries) -> tuple[list[dict[str, Any]], int]:
    """The BOOT_FACTS most recent facts of the knowledge view, and how many it holds. A shard holds the
    facts of one agent's month of `recorded_at`, so only the newest months are looked at (until they hold
    BOOT_FACTS facts), each shard's most recent facts kept by its blob id (recent.py: only a shard not
    seen before is parsed); the others are only counted (one entry a line, as views.py writes them), by
    `counted` (a rebuild of the work tree remembers the counts: repo/counts.py)."""
    kept = Recent(source)
    best: list[dict[str, Any]] = []
    count, done_before = 0, ""
    for month, relpath in _shards(source):
        if done_before and month < done_before:
            count += counted(relpath, source)  # "[", one line an entry, "]"
            continue
        recent, held = kept.of(source, relpath)
        count += held
        best += recent
        if count >= BOOT_FACTS and not done_before:
            done_before = month  # every fact of an older month is older than these
    kept.save()
    return recent_facts(best), count


def recent_knowledge(facts: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The BOOT_FACTS most recently recorded facts, in brief; a side of a disagreement among them carries
    `disputed_with` (the other sides' ids), as recall marks it."""
    recent = recent_facts(facts)
    others = disputed_with(recent)
    return [{**{k: f[k] for k in ("id", "subject", "predicate", "object", "valid_from")},
             **({"disputed_with": others[f["id"]]} if f["id"] in others else {})} for f in recent]


def knowledge_line(fact: Mapping[str, Any], subject: str = "{}") -> str:
    """A fact of the boot context on one line (control characters escaped), a side of a disagreement marked
    `DISPUTED with ...` as recall marks it; `subject`: how the subject is set (willow.md: `**{}**`)."""
    return (f"{subject.format(shown(fact['subject']))} {shown(fact['predicate'])} {shown(fact['object'])}"
            f" (since {iso(fact['valid_from'])}){marked(fact)}")


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


_LAST: list[tuple[Trace, dict[str, bytes]]] = []  # this process's last build, with what it read


def build(source: Source, counted: Counter = count_entries) -> dict[str, bytes]:
    """Every boot file, by store-relative path, as a rebuild writes it. A pure function of what `source`
    answers: the last build of this process is taken again when `source` answers every question it asked
    alike (repo/traced.py: a promotion's check reads the index it commits, which holds the files the
    promotion built from); a new process, or any input that differs, builds."""
    for trace, outputs in list(_LAST):
        if trace.holds(source, counted):
            return dict(outputs)
    trace = Trace()
    traced = Traced(source, trace)
    outputs = _build(traced, traced.counted(counted))
    _LAST[:] = [(trace, outputs)]
    return dict(outputs)


def _build(source: Source, counted: Counter) -> dict[str, bytes]:
    facts, count = knowledge_summary(source, counted)  # the most recent only: an anchor and willow.md show no more
    anchors = []
    forgotten = Forgotten.of(source)  # a forgotten handoff boots no one (docs/forgetting.md)
    for agent in source.listdir("handoffs"):
        if NAME_RE.fullmatch(agent):
            latest = latest_handoff(source, agent, forgotten)
            if latest is not None:
                anchors.append(build_anchor(agent, latest, facts))
    outputs = {anchor_name(a["agent"]): jsonio.dumps_pretty(a) for a in anchors}
    stale = reverify.to_reverify(source, forgotten)  # against this state's code: a function of it alone
    outputs[WILLOW] = render_willow(anchors, facts, count, stale).encode("utf-8")
    return outputs


def render_willow(anchors: list[dict[str, Any]], facts: list[dict[str, Any]], count: int | None = None,
                  stale: tuple[list[dict[str, Any]], int] | None = None) -> str:
    out = ["# Willow — boot context", "",
           "Derived by `memstack boot rebuild` from the latest handoffs and the knowledge base;",
           "never edit by hand. Start here: read your agent's section, then the knowledge.", ""]
    if not anchors:
        out += ["No agent has sealed a handoff yet.", ""]
    for anchor in anchors:  # every value copied in on one line, its control characters escaped (`\n`, `\x1b`)
        out += [f"## Agent {shown(anchor['agent'])}", "",
                f"Latest handoff: `{shown(anchor['handoff'])}` (session {shown(anchor['session'])},"
                f" {shown(anchor['date'])})", "", "### Open threads", ""]
        out += [f"- {shown(thread)}" for thread in anchor["open_threads"]]
        out += ["", "### Capabilities", ""]
        if anchor["capabilities"]:
            header = list(anchor["capabilities"][0])
            out += ["| " + " | ".join(map(shown, header)) + " |", "|" + "---|" * len(header)]
            out += ["| " + " | ".join(shown(row.get(h, "")) for h in header) + " |" for row in anchor["capabilities"]]
        else:
            out.append("(none listed)")
        out.append("")
    out += reverify.render(*stale) if stale is not None else []
    recent = recent_knowledge(facts)
    out += [f"## Knowledge ({len(recent)} most recent of {len(facts) if count is None else count} valid facts)",
            ""]
    out += [f"- {knowledge_line(f, '**{}**')}" for f in recent]
    if not recent:
        out.append("Nothing promoted to knowledge yet.")
    return "\n".join(out) + "\n"


def leftover(store: Path, outputs: Mapping[str, bytes]) -> list[str]:
    """The anchors in the store that a rebuild no longer makes: an agent whose every handoff is forgotten
    (its anchor would still show the forgotten handoff) or whose handoffs are gone."""
    return sorted(p.name for p in store.glob(anchor_name("*")) if p.is_file() and p.name not in outputs)


def rebuild(store: Path, agent: str | None = None, source: Source | None = None) -> list[str]:
    """Rewrite the anchors (all, or one agent's) and willow.md, and delete the anchors no rebuild makes
    (with every agent); returns the paths that changed. `source`: built from what it reads (the index a
    commit is made from) rather than from the work tree."""
    if source is None:
        counts = CachedCounts(store)
        outputs = build(WorktreeSource(store), counts)
        counts.save()
    else:
        outputs = build(source)
    if agent is not None:
        check_name(agent, "agent")
        if anchor_name(agent) not in outputs:
            raise bad("agent", repr(agent), "no handoff yet under handoffs/{agent}/ — write one first"
                      " (`{verb:memstack handoff write}`)", agent=agent)
        return write_changed(store, {k: v for k, v in outputs.items() if k in (anchor_name(agent), WILLOW)})
    removed = [name for name in leftover(store, outputs) if remove(store / name)]
    return sorted(write_changed(store, outputs) + removed)


def show(store: Path, agent: str) -> dict[str, Any]:
    """The agent's boot anchor, read from the file alone (no git needed)."""
    check_name(agent, "agent")
    path = store / anchor_name(agent)
    if not path.exists():
        raise MemstackError.marked("no boot anchor for agent {agent!r} ({file} is missing) — seal a handoff, then"
                                   " run `{verb:memstack boot rebuild}`", agent=agent, file=anchor_name(agent))
    anchor: dict[str, Any] = jsonio.loads(path.read_bytes(), anchor_name(agent))
    return anchor
