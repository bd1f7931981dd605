"""Session hooks for an agent harness (Claude Code's hook events; docs/agents.md).

The harness runs a command at an event and sends it one JSON object on stdin
(`session_id`, `transcript_path`, `cwd`, `hook_event_name`, and per event
`source`, `stop_hook_active` or `reason`). Two hooks:

- `session_start(event)`: the boot context for the agent, as the text the
  harness adds to the model's context (SessionStart's `additionalContext`),
  and a note in `.memstack/sessions/` of which handoff was the latest when the
  session began.
- `session_end(event)`: whether this session sealed a handoff since it began.
  If not: at `Stop` the agent is asked once to seal one (the harness's
  `decision: block` with the reason, never twice in a row: `stop_hook_active`);
  at `SessionEnd`, when the model can no longer act, a carry-over handoff is
  written (the last handoff's open threads and capabilities, and a thread
  naming the session and its transcript) and the boot files are rebuilt, so
  the next session starts from it.

A hook never stops the harness: a store that cannot be found or read becomes a
line of context (start) or a note on stderr (end), and the exit code is 0. An
event the hooks cannot read is never acted on (`memstack/cli/commands/hook.py`
notes it on stderr); here too only a `Stop` event is ever answered with a block.
"""

from pathlib import Path
from typing import Any

from memstack.anchors.used import to_reverify
from memstack.base import files, jsonio
from memstack.base.errors import MemstackError
from memstack.base.forgotten import Forgotten
from memstack.base.output import shown
from memstack.base.patterns import lazy
from memstack.base.shown import Shown
from memstack.boot import context as boot
from memstack.handoff import sealed as handoff
from memstack.repo.sources import WorktreeSource
from memstack.repo.store import Store, open_store, resolve_agent

SESSIONS = "sessions"  # .memstack/sessions/<session id>.json: what the session began with
_SAFE_ID = lazy(r"^[A-Za-z0-9._-]{1,128}$")

GUIDE = (
    "memstack is your persistent memory (a git repository). Before planning work on a subject, recall the"
    " decisions about it (MCP tool `recall` or prompt `frame`; `memstack recall --subject S`) and plan within"
    " them. Record decisions with `capture` (contradicts=true when one replaces a prior) and observations with"
    " `intake_write`. Before you stop, seal a handoff (`handoff_write`: '## Open threads' and '## Capability"
    " table'), then `boot_rebuild`."
)


def _store(event: dict[str, Any], store: str | None) -> Store:
    cwd = event.get("cwd")
    return open_store(store, Path(cwd) if isinstance(cwd, str) and cwd else None)


def _latest(store: Store, agent: str) -> str | None:
    found = boot.latest_handoff(WorktreeSource(store.root), agent)
    return found[0] if found else None


def _session_file(store: Store, event: dict[str, Any]) -> Path | None:
    session = event.get("session_id")
    if not isinstance(session, str) or not _SAFE_ID.fullmatch(session):
        return None
    return files.local_dir(store.root, SESSIONS) / f"{session}.json"


def _anchor_text(anchor: dict[str, Any]) -> str:
    """The anchor as the model reads it, each value on one line (control characters escaped, as willow.md)."""
    lines = [f"Your last sealed handoff: {shown(str(anchor['handoff']))} (session {shown(str(anchor['session']))},"
             f" {shown(str(anchor['date']))}).", "Open threads:"]
    lines += [f"- {shown(thread)}" for thread in anchor["open_threads"]]
    lines.append("Capabilities:")
    lines += ["- " + ", ".join(f"{shown(k)}: {shown(v)}" for k, v in row.items()) for row in anchor["capabilities"]]
    lines.append("Knowledge (most recent):")
    lines += [f"- {boot.knowledge_line(f)}" for f in anchor["knowledge"]] or ["- nothing promoted to knowledge yet"]
    return "\n".join(lines)


def _reverify_text(store: Path, who: str) -> str:
    """The agent's open facts whose code anchors drifted or are orphaned in the work tree (as `boot show`'s
    `to_reverify`); "" when there are none or no code repository to follow them into."""
    found = to_reverify(store, who)
    if not found or not found[0]:
        return ""
    facts, more = found
    lines = ["To re-verify (the code these facts are about changed since; `memstack anchors` shows how,"
             " `memstack anchors reverify ID` records that one still holds):"]
    lines += [f"- {shown(f['subject'])} {shown(f['predicate'])} {shown(f['object'])} [code:"
              f" {f['code_status']['status']}] ({f['id']})"
              for f in Shown.in_store(store).records(facts)]
    if more:
        lines.append(f"- and {more} more: `memstack anchors --status drifted`, `--status orphaned`")
    return "\n\n" + "\n".join(lines)


def session_start(event: dict[str, Any], store: str | None = None, agent: str | None = None) -> str:
    """The context to give the agent at the start of a session."""
    try:
        found = _store(event, store)
        who = resolve_agent(found, agent)
    except MemstackError as exc:
        return f"memstack: no boot context ({exc.message})."
    head = f"memstack boot context for agent {who} (store {found.root}):"
    try:
        body = _anchor_text(boot.show(found.root, who))
    except MemstackError:
        latest = _latest(found, who)
        body = (f"No boot anchor yet, but {latest} is sealed: call `boot_rebuild` (or `memstack boot rebuild`),"
                " then `boot_show`." if latest else "No handoff sealed yet: this is your first session here.")
    body += _reverify_text(found.root, who)
    note = _session_file(found, event)
    if note is not None:
        files.write_atomic(note, jsonio.dumps_pretty({"agent": who, "handoff": _latest(found, who),
                                                      "handoffs": _sealed(found, who), "source": event.get("source")}))
    return f"{head}\n{body}\n\n{GUIDE}"


def _sealed(store: Store, agent: str) -> list[str]:
    """The agent's sealed handoff files, oldest first."""
    return handoff.ordered(agent, WorktreeSource(store.root).listdir(f"handoffs/{agent}"))


def _sealed_since_start(found: Store, who: str, event: dict[str, Any]) -> bool:
    """Whether a handoff file appeared since the session began: a new file, not a new latest (a handoff
    dated a day ahead by an agent east of UTC stays the latest by date while a later one is sealed)."""
    note = _session_file(found, event)
    began = jsonio.loads(note.read_bytes(), str(note)) if note is not None and note.is_file() else None
    if began is None:  # no start hook ran: only a handoff at all says anything
        return False
    if not isinstance(began.get("handoffs"), list):  # a note written before the list was kept
        return _latest(found, who) not in (None, began.get("handoff"))
    return bool(set(_sealed(found, who)) - set(began["handoffs"]))


def _carry_over(found: Store, who: str, event: dict[str, Any], now: int) -> dict[str, Any]:
    source = WorktreeSource(found.root)  # a forgotten handoff is carried over by no one (docs/forgetting.md)
    previous = boot.latest_handoff(source, who, Forgotten.in_store(found.root))
    threads = list(previous[1].open_threads) if previous else []
    capabilities = list(previous[1].capabilities) if previous else []
    session = event.get("session_id") if isinstance(event.get("session_id"), str) else "unknown"
    why = event.get("reason") or event.get("hook_event_name") or "end"
    threads.append(f"session {session} ended ({why}) without sealing a handoff; these threads are carried over"
                   + (f" from {previous[0]}" if previous else "")
                   + (f"; its transcript: {event['transcript_path']}" if event.get("transcript_path") else ""))
    header = list(capabilities[0]) if capabilities else ["capability", "status"]
    rows = [[row.get(h, "") for h in header] for row in capabilities] or [["(none recorded)", "-"]]
    table = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    table += ["| " + " | ".join(cells) + " |" for cells in rows]
    text = "## Open threads\n\n" + "".join(f"- {t}\n" for t in threads) + "\n## Capability table\n\n" \
        + "\n".join(table) + "\n"
    sealed = handoff.write(found.root, who, text, now)
    boot.rebuild(found.root, who)
    return sealed


def session_end(event: dict[str, Any], now: int, store: str | None = None,
                agent: str | None = None) -> dict[str, Any] | None:
    """What to answer the harness (a JSON object for stdout), or None for nothing."""
    found = _store(event, store)
    who = resolve_agent(found, agent)
    if _sealed_since_start(found, who, event):
        return None
    if event.get("hook_event_name") == "SessionEnd":
        sealed = _carry_over(found, who, event, now)
        return {"memstack": f"no handoff sealed this session: wrote the carry-over {sealed['path']}"}
    if event.get("hook_event_name") != "Stop" or event.get("stop_hook_active"):
        return None  # not a Stop, or asked once already: never keep the agent from stopping
    return {"decision": "block",
            "reason": f"memstack: agent {who} has sealed no handoff this session. Before stopping, seal one with"
                      " the MCP tool `handoff_write` (or `memstack handoff write`): a '## Open threads' list of"
                      " what is unfinished and a '## Capability table'; capture the decisions made (`capture`,"
                      " contradicts=true for one that replaces a prior); then call `boot_rebuild`."}
