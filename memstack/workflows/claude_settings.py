"""memstack's session hooks in Claude Code's `.claude/settings.json` (docs/agents.md, "Configuration").

`hooks_block` is the `hooks` object that runs this memstack (`memstack hook settings` prints it);
`install` merges it into a project's settings file (`memstack hook install`):

- the file and its folder are made when missing; every other key, every other event and every other
  hook entry is kept, in its order;
- a memstack hook already there (a command running `memstack ... hook session-start|session-end`) is
  replaced in place by the new one, whatever store, agent or Python it named, and a second one in the
  same event is removed: installing twice leaves one entry per event, and the file byte for byte as the
  first run left it (nothing is written when nothing changes);
- a file that is not JSON, or not the shape Claude Code reads, is refused and left as it is;
- the file is replaced atomically.
"""

import os
import shlex
import stat
import sys
from pathlib import Path
from typing import Any

from memstack.base import files, jsonio
from memstack.base.errors import MemstackError, bad

# Claude Code's event -> the memstack hook verb that answers it.
EVENTS = {"SessionStart": "session-start", "Stop": "session-end", "SessionEnd": "session-end"}
VERBS = frozenset(EVENTS.values())
TIMEOUT = 30
SETTINGS = Path(".claude") / "settings.json"


def hook_command(verb: str, store: Path | None = None, agent: str | None = None,
                 python: str | None = None) -> str:
    """The shell command running `memstack hook VERB` by its Python's full path (no venv needed on PATH)."""
    words = [python or sys.executable, "-m", "memstack", "hook", verb]
    words += ["--store", str(store)] if store is not None else []
    words += ["--agent", agent] if agent else []
    return " ".join(shlex.quote(w) for w in words)


def hooks_block(store: Path | None = None, agent: str | None = None, python: str | None = None) -> dict[str, Any]:
    """The `hooks` object of `.claude/settings.json`: one command hook per event."""
    return {event: [{"hooks": [_entry(verb, store, agent, python)]}] for event, verb in EVENTS.items()}


def _entry(verb: str, store: Path | None, agent: str | None, python: str | None) -> dict[str, Any]:
    return {"type": "command", "command": hook_command(verb, store, agent, python), "timeout": TIMEOUT}


def is_memstack_hook(entry: object) -> bool:
    """Whether a hook entry runs memstack's session hooks (`... memstack [options] hook session-start|end`)."""
    if not isinstance(entry, dict) or not isinstance(entry.get("command"), str):
        return False
    try:
        words = shlex.split(entry["command"])
    except ValueError:
        words = entry["command"].split()
    named = [i for i, w in enumerate(words) if w.rsplit("/", 1)[-1] == "memstack"]
    return any(words[j] == "hook" and words[j + 1] in VERBS
               for i in named[:1] for j in range(i + 1, len(words) - 1))


def _refuse(path: Path, what: str) -> MemstackError:
    return MemstackError(f"{path}: {what} — fix or move the file, then run `memstack hook install` again"
                         " (nothing was written)")


def read_settings(path: Path) -> dict[str, Any]:
    """The settings object of `path` ({} when the file is missing or empty); refused unless a JSON object."""
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return {}
    except IsADirectoryError:
        raise _refuse(path, "a folder, not a settings file") from None
    if not data.strip():
        return {}
    try:
        settings = jsonio.loads(data, str(path))
    except MemstackError as exc:
        raise _refuse(path, exc.message[len(str(path)) + 2:]) from None  # the message without the path
    if not isinstance(settings, dict):
        raise _refuse(path, "not a JSON object (Claude Code reads an object of settings)")
    return settings


def _groups(path: Path, settings: dict[str, Any], event: str) -> list[Any]:
    """The matcher groups of `event`, checked to be the shape Claude Code reads."""
    hooks = settings.get("hooks", {})
    if not isinstance(hooks, dict):
        raise _refuse(path, "\"hooks\" is not a JSON object")
    groups = hooks.get(event, [])
    if not isinstance(groups, list):
        raise _refuse(path, f"\"hooks\".\"{event}\" is not a list")
    for n, group in enumerate(groups):
        if not isinstance(group, dict) or not isinstance(group.get("hooks", []), list):
            raise _refuse(path, f"\"hooks\".\"{event}\"[{n}] is not an object with a \"hooks\" list")
    return groups


def _memstack_at(groups: list[Any]) -> list[tuple[int, int]]:
    """Where the memstack hooks of an event's groups stand: (group, entry) pairs, in order."""
    return [(g, n) for g, kept in enumerate(groups) for n, entry in enumerate(kept.get("hooks", []))
            if is_memstack_hook(entry)]


def _drop(groups: list[Any], at: list[tuple[int, int]]) -> None:
    """Remove the entries `at` (from `_memstack_at`), and a group they leave empty."""
    for g, n in reversed(at):
        del groups[g]["hooks"][n]
        if not groups[g]["hooks"]:
            del groups[g]


def merge(path: Path, settings: dict[str, Any], block: dict[str, Any],
          without: tuple[str, ...] = ()) -> dict[str, str]:
    """Merge `block` (from `hooks_block`) into `settings` in place, and take memstack's hooks out of the
    events `without`; says per event "added", "replaced", "unchanged", "removed" or "absent". A memstack
    hook already there is replaced where it stands (its matcher group, and any key of its own such as a
    longer `timeout`, kept); a second one in the same event is removed."""
    for event in (*block, *without):
        _groups(path, settings, event)  # check every event before changing any
    done = {}
    for event, [group] in block.items():
        [ours] = group["hooks"]
        groups = _groups(path, settings, event)
        found = _memstack_at(groups)
        if not found:
            settings.setdefault("hooks", {}).setdefault(event, []).append({"hooks": [ours]})
            done[event] = "added"
            continue
        g, n = found[0]
        old = groups[g]["hooks"][n]
        new = {**ours, **old, "type": "command", "command": ours["command"]}
        groups[g]["hooks"][n] = new
        _drop(groups, found[1:])
        done[event] = "unchanged" if new == old and len(found) == 1 else "replaced"
    for event in without:
        groups = _groups(path, settings, event)
        found = _memstack_at(groups)
        _drop(groups, found)
        if found and not groups:
            del settings["hooks"][event]
        done[event] = "removed" if found else "absent"
    return done


def install(project: Path, store: Path, agent: str | None = None, without: tuple[str, ...] = (),
            python: str | None = None) -> dict[str, Any]:
    """Merge memstack's hooks for `store` (and `agent`) into `project`/.claude/settings.json, at every event
    but those `without`; the document says what was done to each event and whether the file was written."""
    if not project.is_dir():
        raise bad("--project", repr(str(project)), "not a folder")
    path = (project / SETTINGS).absolute()
    if path.is_symlink():  # a settings file kept elsewhere stays a link
        target = path.resolve()
        if not target.exists():
            raise _refuse(path, f"a symlink to {target}, which does not exist")
        path = target
    existed = path.is_file()
    if existed and not os.access(path, os.W_OK):
        raise _refuse(path, "read-only")
    mode = stat.S_IMODE(path.stat().st_mode) if existed else 0o644  # a 0600 file may hold secrets (`env`)
    settings = read_settings(path)
    block = {k: v for k, v in hooks_block(store, agent, python).items() if k not in without}
    done = merge(path, settings, block, without)
    write = not existed or any(what not in ("unchanged", "absent") for what in done.values())
    if write:
        files.write_atomic(path, jsonio.dumps_kept(settings), mode=mode)
    return {"settings": str(path), "store": str(store), "agent": agent, "events": done, "written": write,
            "created": not existed}
