"""L5 sealed session handoffs: `handoffs/<agent>/session_handoff-YYYY-MM-DD_<agent>.md`.

A handoff is Markdown with YAML front matter (agent, date, session) and at least
`## Open threads` (non-empty) and `## Capability table` (a Markdown table). Once
written it is never overwritten: a second handoff for the same agent and day is
sealed as `session_handoff-YYYY-MM-DD_<agent>-2.md`, then `-3`, and so on.
"""

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from memstack.base import clock, config, limits, schemas
from memstack.base.errors import MemstackError, bad
from memstack.base.files import create_exclusive, refuse_symlinks
from memstack.base.names import check_name
from memstack.base.patterns import lazy
from memstack.base.secrets import refuse_secrets
from memstack.base.times import day, iso, parse_ts

_FRONT = lazy(r"\A---[ \t]*\n(.*?\n)---[ \t]*\n", re.DOTALL)
DAY_MS = 86_400_000
_OPENED = lazy(r"\A---[ \t]*\n")  # a first line that opens front matter
SECTION = lazy(r"^##[ \t]+(.+?)[ \t]*#*[ \t]*$", re.MULTILINE)
_TABLE_SEPARATOR = lazy(r"^\s*\|?\s*:?-{3,}:?\s*(\|\s*:?-{3,}:?\s*)*\|?\s*$")
_ITEM = lazy(r"^\s*(?:[-*+]|\d+[.)])\s+(.*\S)\s*$")


AHEAD = ("lies in the future (today is {today} in UTC): a handoff is dated the day it is sealed; a later one"
         " would stay the latest until then")


def dated_ahead(date: str, now: clock.Clock) -> bool:
    """Whether a handoff's date lies beyond today (UTC) by more than a day, a time zone's, and the clock's skew:
    write and check refuse it alike (a handoff dated 2099 would shadow every later one until then)."""
    return now.too_late(parse_ts(date, "date") - DAY_MS)


@dataclass(frozen=True)
class Handoff:
    front: dict[str, str]
    open_threads: list[str]
    capabilities: list[dict[str, str]]
    text: str


def _front_matter(text: str) -> tuple[dict[str, str] | None, str]:
    match = _FRONT.match(text)
    if not match:
        return None, text
    from ruamel.yaml import YAML  # deferred: ~20-30 ms to import, needed only to read or edit YAML
    from ruamel.yaml.error import YAMLError  # deferred with YAML above

    try:
        front = YAML(typ="base").load(match.group(1))  # every scalar a string: dates stay text
    except YAMLError as exc:
        raise MemstackError(f"handoff: front matter is not valid YAML ({exc})".replace("\n", " ")) from None
    except RecursionError:  # thousands of nested brackets: the parser is recursive
        raise MemstackError(f"handoff: front matter is not valid YAML ({config.YAML_TOO_DEEP})") from None
    if not isinstance(front, dict):
        raise MemstackError("handoff: front matter must be a YAML mapping of agent, date, session")
    return front, text[match.end():]


def _sections(body: str) -> dict[str, str]:
    found: dict[str, str] = {}
    heads = list(SECTION.finditer(body))
    for index, head in enumerate(heads):
        end = heads[index + 1].start() if index + 1 < len(heads) else len(body)
        found.setdefault(head.group(1).strip().lower(), body[head.end():end])
    return found


def _table(section: str) -> list[dict[str, str]] | None:
    lines = [line.strip() for line in section.splitlines() if line.strip()]
    for index in range(len(lines) - 1):
        if lines[index].startswith("|") and _TABLE_SEPARATOR.match(lines[index + 1]):
            header = [cell.strip() for cell in lines[index].strip("|").split("|")]
            rows = []
            for line in lines[index + 2:]:
                if not line.startswith("|"):
                    break
                cells = [cell.strip() for cell in line.strip("|").split("|")]
                rows.append({name: cells[i] if i < len(cells) else "" for i, name in enumerate(header)})
            return rows
    return None


def parse(text: str, where: str = "handoff") -> Handoff:
    """Parse and validate a complete handoff; raises MemstackError saying what is missing."""
    front, body = _front_matter(text)
    if front is None:
        raise MemstackError(f"{where}: I3 incomplete handoff: no YAML front matter (--- agent, date, session ---)")
    problems = schemas.problems("handoff", front)
    if problems:
        field = ".".join(map(str, problems[0].absolute_path)) or "(record)"
        if problems[0].validator == "not":  # the schema's `not`: a control character (a value copied into willow.md)
            raise MemstackError(f"{where}: I3 front matter {field} holds a control character (newline,"
                                " carriage return, tab, escape, ...): write each front-matter value on one line")
        raise MemstackError(f"{where}: I3 incomplete handoff: front matter {field}: {problems[0].message}")
    sections = _sections(body)
    threads_text = sections.get("open threads")
    if threads_text is None or not threads_text.strip():
        raise MemstackError(f"{where}: I3 incomplete handoff: needs a non-empty '## Open threads' section")
    lines = [line.strip() for line in threads_text.splitlines() if line.strip()]
    items = [m.group(1) for m in map(_ITEM.match, lines) if m]
    table_text = sections.get("capability table")
    table = _table(table_text) if table_text is not None else None
    if table is None:
        raise MemstackError(f"{where}: I3 incomplete handoff: needs a '## Capability table' section holding a"
                            " Markdown table (| header | ... | then | --- | ... |)")
    return Handoff(front=dict(front), open_threads=items or lines, capabilities=table, text=text)


def file_re(agent: str) -> re.Pattern[str]:
    return re.compile(rf"session_handoff-(\d{{4}}-\d{{2}}-\d{{2}})_{re.escape(agent)}(?:-(\d+))?\.md")


def ordered(agent: str, names: list[str]) -> list[str]:
    """The agent's handoff file names among `names`, oldest first (by date, then sequence)."""
    pattern = file_re(agent)
    keyed = []
    for name in names:
        match = pattern.fullmatch(name)
        if match:
            keyed.append(((match.group(1), int(match.group(2) or 1)), name))
    return [name for _, name in sorted(keyed)]


def _dated(store: Path, agent: str, now_ms: int) -> str:
    """The date of a handoff written without front matter: today in UTC, or the agent's latest handoff's date
    when that is later (and allowed): one dated by its local day east of UTC. The latest is the last by date,
    so a handoff sealed after it must not be dated earlier."""
    today = day(now_ms)
    folder = store / "handoffs" / agent
    names = ordered(agent, sorted(p.name for p in folder.iterdir())) if folder.is_dir() else []
    match = file_re(agent).fullmatch(names[-1]) if names else None
    if match is None or match.group(1) <= today or dated_ahead(match.group(1), clock.for_store(store)):
        return today
    return match.group(1)


def write(store: Path, agent: str, text: str, now_ms: int, origin: str = "--agent") -> dict[str, Any]:
    """Seal a new handoff; a document without front matter gets one (agent, today, a session id). `origin`:
    where the agent came from (repo/store.py `agent_origin`), for the message when the front matter names
    another."""
    check_name(agent, "agent")
    if not text.strip():
        raise bad("handoff", None, "the document is empty")
    limits.check_text(store, "handoff", text, "handoff_bytes")  # every boot context carries it: before the scan
    text = text.replace("\r\n", "\n").replace("\r", "\n")  # memory files end their lines with LF alone (I7)
    refuse_secrets(text, "handoff", store)
    if _FRONT.match(text) is None:
        if _OPENED.match(text):
            raise bad("handoff", None, "its front matter (opened by --- on the first line) is not closed by a ---"
                                       " line: close it, or leave the front matter out and one is written")
        session = f"{agent}-{iso(now_ms).replace(':', '').replace('-', '')[:15]}Z"
        text = f"---\nagent: {agent}\ndate: {_dated(store, agent, now_ms)}\nsession: {session}\n---\n\n{text}"
    if not text.endswith("\n"):
        text += "\n"
    limits.check_text(store, "handoff", text, "handoff_bytes")  # as sealed, its front matter too (as I3 checks)
    handoff = parse(text)
    if handoff.front["agent"] != agent and origin == "--agent":
        raise bad("handoff", None, "front matter agent {theirs!r} is not {arg:--agent} {agent!r}",
                  theirs=handoff.front["agent"], agent=agent)
    if handoff.front["agent"] != agent:  # the agent no option named: say where it came from
        raise bad("handoff", None, "front matter agent {theirs!r} is not {agent!r}, the agent {origin} names"
                  " (no {arg:--agent} given): pass {arg:--agent} {theirs}, or write the front matter for {agent}",
                  theirs=handoff.front["agent"], agent=agent, origin=origin)
    date = handoff.front["date"]
    if dated_ahead(date, clock.for_store(store)):
        raise bad("handoff", None, "front matter date {date} " + AHEAD, date=date, today=day(now_ms))
    folder = store / "handoffs" / agent
    folder.mkdir(parents=True, exist_ok=True)
    refuse_symlinks(store, folder)
    for sequence in range(1, 10_000):
        suffix = "" if sequence == 1 else f"-{sequence}"
        path = folder / f"session_handoff-{date}_{agent}{suffix}.md"
        if create_exclusive(path, text.encode("utf-8")):
            return {"path": str(path.relative_to(store)), "agent": agent, "date": date,
                    "session": handoff.front["session"], "open_threads": handoff.open_threads}
    raise MemstackError(f"handoffs/{agent}: too many handoffs on {date}")  # pragma: no cover
