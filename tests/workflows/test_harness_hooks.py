"""`memstack hook session-start|session-end|settings`: fed the JSON Claude Code sends on stdin, as it runs them."""

import json
import os
import subprocess
from pathlib import Path
from typing import Any

from helpers import git, memstack, tree_snapshot
from mcp_support import HANDOFF


def event(store: Path, name: str, session: str = "5f1c2a9e-0001", **extra: Any) -> str:
    """The object Claude Code sends a command hook (common fields, then the event's own)."""
    return json.dumps({"session_id": session, "transcript_path": f"/home/u/.claude/projects/p/{session}.jsonl",
                       "cwd": str(store), "permission_mode": "default", "hook_event_name": name, **extra})


def hook(tmp_path: Path, verb: str, stdin: str, *args: str) -> subprocess.CompletedProcess[str]:
    """Run from a folder outside the store: the event's cwd is how the hook finds it."""
    result = memstack("hook", verb, *args, cwd=tmp_path, input=stdin)
    assert result.returncode == 0 and "Traceback" not in result.stderr, result.stderr
    return result


def context(result: subprocess.CompletedProcess[str]) -> str:
    answer = json.loads(result.stdout)
    assert answer["hookSpecificOutput"]["hookEventName"] == "SessionStart"
    text: str = answer["hookSpecificOutput"]["additionalContext"]
    return text


def test_session_start_prints_the_boot_context_and_writes_no_memory(store: Path, tmp_path: Path) -> None:
    before = tree_snapshot(store)
    first = context(hook(tmp_path, "session-start", event(store, "SessionStart", source="startup")))
    assert first.startswith(f"memstack boot context for agent alice (store {store}):")
    assert "No handoff sealed yet" in first and "`handoff_write`" in first and "`recall`" in first
    assert tree_snapshot(store) == before  # only .memstack/sessions/ (per clone, ignored) is written
    assert git(store, "status", "--porcelain").stdout == ""

    assert memstack("handoff", "write", cwd=store, input=HANDOFF).returncode == 0
    told = context(hook(tmp_path, "session-start", event(store, "SessionStart", source="resume")))
    assert "No boot anchor yet, but handoffs/alice/" in told and "`boot_rebuild`" in told
    assert memstack("boot", "rebuild", cwd=store).returncode == 0
    told = context(hook(tmp_path, "session-start", event(store, "SessionStart", source="startup"), "--agent", "alice"))
    assert "Open threads:\n- wire the fact tools into the MCP server\n" in told
    assert "- capability: mcp, status: partial" in told


def test_session_start_never_fails_the_session(store: Path, tmp_path: Path) -> None:
    for stdin in ("", "not json", "[1, 2]", json.dumps({"cwd": str(tmp_path)})):
        told = context(hook(tmp_path, "session-start", stdin))
        assert told.startswith("memstack: no boot context (no memstack store here"), told
    told = context(hook(tmp_path, "session-start", event(store, "SessionStart"), "--agent", "../x"))
    assert told.startswith("memstack: no boot context (bad agent '../x'")


def test_stop_asks_once_for_a_handoff_until_one_is_sealed(store: Path, tmp_path: Path) -> None:
    hook(tmp_path, "session-start", event(store, "SessionStart", source="startup"))
    stop = hook(tmp_path, "session-end", event(store, "Stop", stop_hook_active=False))
    answer = json.loads(stop.stdout)
    assert answer["decision"] == "block" and "`handoff_write`" in answer["reason"]
    assert "agent alice has sealed no handoff this session" in answer["reason"]
    again = hook(tmp_path, "session-end", event(store, "Stop", stop_hook_active=True))
    assert again.stdout == ""  # never a loop: the agent may stop

    assert memstack("handoff", "write", cwd=store, input=HANDOFF).returncode == 0
    assert hook(tmp_path, "session-end", event(store, "Stop", stop_hook_active=False)).stdout == ""
    assert hook(tmp_path, "session-end", event(store, "SessionEnd", reason="prompt_input_exit")).stdout == ""
    assert len(list((store / "handoffs/alice").iterdir())) == 1  # sealed by the agent: nothing carried over

    # another session: the handoff sealed before it began does not count for it
    hook(tmp_path, "session-start", event(store, "SessionStart", session="second", source="startup"))
    assert json.loads(hook(tmp_path, "session-end", event(store, "Stop", session="second")).stdout)["decision"] == \
        "block"


def test_session_end_without_a_handoff_writes_a_carry_over_that_commits(store: Path, tmp_path: Path) -> None:
    assert memstack("handoff", "write", cwd=store, input=HANDOFF).returncode == 0
    hook(tmp_path, "session-start", event(store, "SessionStart", source="startup"))
    ended = hook(tmp_path, "session-end", event(store, "SessionEnd", reason="logout"))
    path = json.loads(ended.stdout)["memstack"].rsplit(" ", 1)[1]
    text = (store / path).read_text()
    assert "- wire the fact tools into the MCP server\n" in text  # the open threads, carried over
    assert "- session 5f1c2a9e-0001 ended (logout) without sealing a handoff" in text
    assert "/home/u/.claude/projects/p/5f1c2a9e-0001.jsonl" in text and "| mcp | partial |" in text
    shown = json.loads(memstack("boot", "show", "--json", cwd=store).stdout)
    assert shown["handoff"] == path  # the boot files were rebuilt from it
    git(store, "add", "-A")
    committed = git(store, "commit", "-q", "-m", "session end", check=False)  # through memstack's hooks
    assert committed.returncode == 0, committed.stdout + committed.stderr
    # the next session starts from it; and a second end of the same session writes nothing more
    assert "ended (logout)" in context(hook(tmp_path, "session-start", event(store, "SessionStart", session="n2")))
    assert hook(tmp_path, "session-end", event(store, "SessionEnd", reason="logout")).stdout == ""


def test_session_end_without_a_store_says_so_on_stderr_and_lets_the_agent_stop(tmp_path: Path) -> None:
    ended = hook(tmp_path, "session-end", json.dumps({"hook_event_name": "Stop", "cwd": str(tmp_path)}))
    assert ended.stdout == "" and ended.stderr.startswith("memstack hook: no memstack store here")


def test_settings_run_this_memstack_without_a_venv_on_path(store: Path, tmp_path: Path) -> None:
    settings = json.loads(memstack("hook", "settings", "--agent", "bob", cwd=tmp_path).stdout)
    assert set(settings["hooks"]) == {"SessionStart", "Stop", "SessionEnd"}
    [[start]] = [entry["hooks"] for entry in settings["hooks"]["SessionStart"]]
    assert start["type"] == "command" and start["command"].endswith("-m memstack hook session-start --agent bob")
    bare = {k: v for k, v in os.environ.items() if k != "PATH"} | {"PATH": "/usr/bin:/bin"}
    ran = subprocess.run(["sh", "-c", start["command"]], input=event(store, "SessionStart"), capture_output=True,
                         text=True, cwd=tmp_path, env=bare)
    assert ran.returncode == 0, ran.stderr
    assert context(ran).startswith("memstack boot context for agent bob")
