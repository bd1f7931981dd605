"""`memstack hook session-start|session-end|settings`: fed the JSON Claude Code sends on stdin, as it runs them."""

import json
import os
import subprocess
from pathlib import Path
from typing import Any

from helpers import MEMSTACK, git, memstack, tree_snapshot
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
    told = context(hook(tmp_path, "session-start", json.dumps({"hook_event_name": "SessionStart",
                                                                "cwd": str(tmp_path)})))
    assert told.startswith("memstack: no boot context (no memstack store here"), told
    told = context(hook(tmp_path, "session-start", event(store, "SessionStart"), "--agent", "../x"))
    assert told.startswith("memstack: no boot context (bad agent '../x'")


# What a hook may be handed that is not an event it answers: nothing, junk, another event's JSON.
JUNK = ["", "\n", "not json", "[1, 2]", "null", "{}", '{"hook_event_name": 7}',
        '{"hook_event_name": "SubagentStop", "session_id": "s", "stop_hook_active": false}',
        '{"hook_event_name": "UserPromptSubmit", "session_id": "s", "prompt": "hi"}']


def run_raw(verb: str, stdin: bytes | None, cwd: Path, shell: str = "") -> subprocess.CompletedProcess[bytes]:
    command = [MEMSTACK, "hook", verb] if not shell else ["sh", "-c", f"'{MEMSTACK}' hook {verb} {shell}"]
    return subprocess.run(command, input=stdin, capture_output=True, cwd=cwd,
                          stdin=subprocess.DEVNULL if stdin is None and not shell else None)


def test_session_end_never_blocks_on_an_event_it_cannot_read(store: Path) -> None:
    """Run inside the store (so a store is found): an unread event must still never say "block"."""
    hook(store, "session-start", event(store, "SessionStart", source="startup"))
    cases = [(text.encode(), "") for text in JUNK] + [(b"\xff\xfe{", ""), (None, ""), (b"", "<&-")]
    for stdin, shell in cases:
        ran = run_raw("session-end", stdin, store, shell)
        assert ran.returncode == 0 and ran.stdout == b"", (stdin, ran.stdout, ran.stderr)
        [line] = ran.stderr.decode().splitlines()
        assert line.startswith("memstack hook session-end: ") and line.endswith("; nothing done"), line
    assert not (store / "handoffs/alice").exists()  # and no carry-over written either
    told = run_raw("session-end", b'{"hook_event_name": "SubagentStop"}', store).stderr.decode()
    assert "unknown event 'SubagentStop' (memstack hook session-end answers Stop and SessionEnd)" in told
    # the same event, read: asked for its handoff
    assert json.loads(hook(store, "session-end", event(store, "Stop")).stdout)["decision"] == "block"


def test_session_start_gives_no_context_for_an_event_it_cannot_read(store: Path) -> None:
    for stdin, shell in [(text.encode(), "") for text in JUNK] + [(b"\xff{", ""), (b"", "<&-")]:
        ran = run_raw("session-start", stdin, store, shell)
        assert ran.returncode == 0 and ran.stdout == b"", (stdin, ran.stdout, ran.stderr)
        assert ran.stderr.decode().startswith("memstack hook session-start: "), ran.stderr
    answer = json.loads(hook(store, "session-start", event(store, "SessionStart", source="clear")).stdout)
    assert answer["hookSpecificOutput"]["hookEventName"] == "SessionStart"


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


def test_session_end_never_carries_over_a_forgotten_handoff(store: Path, tmp_path: Path) -> None:
    """A handoff forgotten on purpose (personal data) is not copied into the carry-over: it starts from the
    latest handoff that is not forgotten, as the boot files do."""
    assert memstack("handoff", "write", cwd=store, input=HANDOFF).returncode == 0
    private = HANDOFF.replace("wire the fact tools into the MCP server", "call Jane Doe at +1 555 0100")
    sealed = json.loads(memstack("handoff", "write", "--json", cwd=store, input=private).stdout)["path"]
    git(store, "add", "-A")
    git(store, "commit", "-q", "-m", "handoffs")
    forgot = memstack("forget", sealed, "--reason", "personal data", cwd=store)
    assert forgot.returncode == 0, forgot.stderr
    git(store, "add", "-A")
    git(store, "commit", "-q", "-m", "forget")
    hook(tmp_path, "session-start", event(store, "SessionStart", source="startup"))
    ended = hook(tmp_path, "session-end", event(store, "SessionEnd", reason="exit"))
    path = json.loads(ended.stdout)["memstack"].rsplit(" ", 1)[1]
    text = (store / path).read_text()
    assert "Jane Doe" not in text and sealed not in text
    assert "- wire the fact tools into the MCP server\n" in text  # the handoff before it, carried over
    assert "Jane Doe" not in memstack("boot", "show", cwd=store).stdout


def test_session_end_without_a_store_says_so_on_stderr_and_lets_the_agent_stop(tmp_path: Path) -> None:
    ended = hook(tmp_path, "session-end", json.dumps({"hook_event_name": "Stop", "cwd": str(tmp_path)}))
    assert ended.stdout == "" and ended.stderr.startswith("memstack hook session-end: no memstack store here")


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


def test_settings_honour_the_store_named_before_the_verb(store: Path, tmp_path: Path) -> None:
    """The README's layout: the store beside the project; the session starts in the project."""
    project = tmp_path / "project"
    project.mkdir()
    for args in (("--store", str(store), "hook", "settings"), ("hook", "settings", "--store", "../store")):
        settings = json.loads(memstack(*args, cwd=project).stdout)
        [[start]] = [entry["hooks"] for entry in settings["hooks"]["SessionStart"]]
        assert f"--store {store}" in start["command"], start["command"]
        ran = subprocess.run(["sh", "-c", start["command"]], input=event(project, "SessionStart"),
                             capture_output=True, text=True, cwd=project)
        assert context(ran).startswith(f"memstack boot context for agent alice (store {store}):"), ran.stdout


def test_hook_help_points_at_install_not_at_appending_to_the_file() -> None:
    told = memstack("hook", "--help").stdout
    assert ">>" not in told and "memstack hook install" in told
