"""`memstack hook install`: memstack's hooks merged into a project's .claude/settings.json, then run as Claude
Code runs them (the JSON of its events on stdin, `sh -c`, a PATH with no virtual environment)."""

import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from helpers import memstack
from mcp_support import HANDOFF

SESSION = "0c1e7b52-5d1a-4f0e-9a57-2f3c6d1e8a10"
EVENTS = ("SessionStart", "Stop", "SessionEnd")


def claude_event(project: Path, name: str, **extra: Any) -> str:
    """What Claude Code sends a command hook: the common fields, then the event's own."""
    return json.dumps({"session_id": SESSION, "transcript_path": f"/home/u/.claude/projects/p/{SESSION}.jsonl",
                       "cwd": str(project), "permission_mode": "default", "hook_event_name": name, **extra})


def run_as_claude(command: str, stdin: str, project: Path) -> subprocess.CompletedProcess[str]:
    bare = {k: v for k, v in os.environ.items() if k not in ("PATH", "MEMSTACK_HOME", "MEMSTACK_AGENT")}
    ran = subprocess.run(["sh", "-c", command], input=stdin, capture_output=True, text=True, cwd=project,
                         env=bare | {"PATH": "/usr/bin:/bin"})
    assert ran.returncode == 0 and "Traceback" not in ran.stderr, ran.stderr
    return ran


def commands(settings_file: Path, event: str) -> list[str]:
    """Every command hook of `event`, in order."""
    groups = json.loads(settings_file.read_text())["hooks"].get(event, [])
    return [hook["command"] for group in groups for hook in group["hooks"]]


def memstack_commands(settings_file: Path, event: str) -> list[str]:
    return [c for c in commands(settings_file, event) if " -m memstack hook " in c]


@pytest.fixture
def project(store: Path, tmp_path: Path) -> Path:
    """The README's layout: the project, and the store beside it (tmp_path/store)."""
    folder = tmp_path / "project"
    folder.mkdir()
    return folder


def test_install_makes_the_file_and_its_hooks_find_the_store_beside_the_project(store: Path, project: Path) -> None:
    done = memstack("hook", "install", "--store", "../store", "--agent", "bob", cwd=project)
    assert done.returncode == 0, done.stderr
    settings_file = project / ".claude/settings.json"
    assert done.stdout == f"created {settings_file}: SessionStart added, Stop added, SessionEnd added (store {store}," \
                          " agent bob); every other setting kept\n"
    for event in EVENTS:
        [command] = commands(settings_file, event)
        assert f"--store {store} --agent bob" in command  # the store's absolute path, not ../store

    [start] = commands(settings_file, "SessionStart")
    told = json.loads(run_as_claude(start, claude_event(project, "SessionStart", source="startup",
                                                        model="claude-sonnet-4-5"), project).stdout)
    assert told["hookSpecificOutput"]["additionalContext"].startswith(
        f"memstack boot context for agent bob (store {store}):")
    [stop] = commands(settings_file, "Stop")
    asked = json.loads(run_as_claude(stop, claude_event(project, "Stop", stop_hook_active=False), project).stdout)
    assert asked["decision"] == "block" and "agent bob has sealed no handoff" in asked["reason"]
    assert memstack("handoff", "write", "--agent", "bob", cwd=store, input=HANDOFF).returncode == 0
    assert run_as_claude(stop, claude_event(project, "Stop", stop_hook_active=False), project).stdout == ""
    [end] = commands(settings_file, "SessionEnd")
    assert run_as_claude(end, claude_event(project, "SessionEnd", reason="prompt_input_exit"), project).stdout == ""


def test_install_with_the_store_before_the_verb_keeps_every_other_setting(store: Path, project: Path) -> None:
    theirs = {
        "permissions": {"allow": ["Bash(npm run lint)"], "deny": ["Read(./.env)"]},
        "env": {"FOO": "bär"},
        "hooks": {
            "PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "./check-bash.sh"}]}],
            "SessionStart": [{"matcher": "startup", "hooks": [{"type": "command", "command": "echo hello"}]}],
            "Stop": [{"hooks": [{"type": "command", "command": "notify-send done", "timeout": 5}]}],
        },
        "model": "claude-sonnet-4-5",
    }
    settings_file = project / ".claude/settings.json"
    settings_file.parent.mkdir()
    settings_file.write_text(json.dumps(theirs, indent=4))
    done = memstack("--store", str(store), "hook", "install", cwd=project)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith(f"updated {settings_file}: SessionStart added, Stop added, SessionEnd added")
    after = json.loads(settings_file.read_text())
    assert list(after) == ["permissions", "env", "hooks", "model"]  # the keys and their order kept
    assert {k: v for k, v in after.items() if k != "hooks"} == {k: v for k, v in theirs.items() if k != "hooks"}
    assert after["hooks"]["PreToolUse"] == theirs["hooks"]["PreToolUse"]
    assert after["hooks"]["SessionStart"][0] == theirs["hooks"]["SessionStart"][0]  # theirs first, still
    assert commands(settings_file, "Stop")[0] == "notify-send done"
    for event in EVENTS:
        [ours] = memstack_commands(settings_file, event)
        assert ours.endswith(f"--store {store}")  # no --agent given: memory.default_agent at each session


def test_install_twice_leaves_the_file_byte_identical_and_replaces_an_old_store(
        store: Path, project: Path, tmp_path: Path) -> None:
    assert memstack("hook", "install", "--store", str(store), cwd=project).returncode == 0
    settings_file = project / ".claude/settings.json"
    (hooks := json.loads(settings_file.read_text()))["hooks"]["Stop"].append(
        {"hooks": [{"type": "command", "command": "notify-send done"}]})
    settings_file.write_text(json.dumps(hooks, indent=2) + "\n")
    first = settings_file.read_bytes()
    again = memstack("hook", "install", "--store", str(store), cwd=project)
    assert again.returncode == 0 and again.stdout.endswith("; nothing written\n"), again.stdout
    assert settings_file.read_bytes() == first

    moved = tmp_path / "moved-store"
    shutil.copytree(store, moved, symlinks=True)
    shutil.rmtree(store)
    # an old store path, the hook kept in its place with the timeout its user gave it
    with_timeout = json.loads(first)
    with_timeout["hooks"]["SessionStart"][0]["hooks"][0]["timeout"] = 60
    settings_file.write_text(json.dumps(with_timeout, indent=2) + "\n")
    done = memstack("hook", "install", "--store", str(moved), "--agent", "alice", cwd=project)
    assert done.returncode == 0, done.stderr
    assert "SessionStart replaced, Stop replaced, SessionEnd replaced" in done.stdout
    text = settings_file.read_text()
    assert str(moved) in text and f"--store {store} " not in text and not text.rstrip().endswith(f"{store}")
    for event in EVENTS:
        [ours] = memstack_commands(settings_file, event)
        assert ours.endswith(f"--store {moved} --agent alice")
    assert commands(settings_file, "Stop")[1] == "notify-send done"
    assert json.loads(text)["hooks"]["SessionStart"][0]["hooks"][0]["timeout"] == 60
    replaced = settings_file.read_bytes()
    assert memstack("hook", "install", "--store", str(moved), "--agent", "alice", cwd=project).returncode == 0
    assert settings_file.read_bytes() == replaced


def test_install_removes_a_doubled_memstack_hook(store: Path, project: Path) -> None:
    old = "'/old/venv/bin/python3' -m memstack hook session-end --agent alice"
    doubled = {"hooks": {"Stop": [{"hooks": [{"type": "command", "command": old, "timeout": 30}]},
                                  {"hooks": [{"type": "command", "command": "memstack hook session-end"}]}]}}
    (project / ".claude").mkdir()
    (project / ".claude/settings.json").write_text(json.dumps(doubled))
    assert memstack("hook", "install", "--store", str(store), cwd=project).returncode == 0
    [[only]] = [group["hooks"] for group in json.loads((project / ".claude/settings.json").read_text())
                ["hooks"]["Stop"]]
    assert only["command"].endswith(f"-m memstack hook session-end --store {store}")


BROKEN = [
    '{"permissions": {"allow": []},',  # cut short
    '{"hooks": {}}\n{"hooks": {"Stop": []}}\n',  # a block appended with >>
    '{"a": 1, // a comment\n}',
    "[]",
    '{"hooks": []}',
    '{"hooks": {"Stop": {"hooks": []}}}',
    '{"hooks": {"SessionEnd": ["memstack hook session-end"]}}',
    '{"hooks": {"SessionStart": [{"hooks": "echo"}]}}',
]


@pytest.mark.parametrize("text", BROKEN)
def test_install_refuses_a_file_that_is_not_valid_settings_and_leaves_it(
        store: Path, project: Path, text: str) -> None:
    settings_file = project / ".claude/settings.json"
    settings_file.parent.mkdir()
    settings_file.write_text(text)
    refused = memstack("hook", "install", "--store", str(store), cwd=project)
    assert refused.returncode == 2 and refused.stdout == "", refused.stdout
    [line] = refused.stderr.splitlines()
    assert line.startswith(f"memstack: {settings_file}: ") and "nothing was written" in line, line
    assert settings_file.read_text() == text
    assert os.listdir(settings_file.parent) == ["settings.json"]  # no temporary file left


def test_install_needs_a_store_and_an_agent_and_writes_nothing_without(store: Path, project: Path) -> None:
    for args, says in ((("--store", str(project)), "is not a memstack store"), ((), "no memstack store here"),
                       (("--store", str(store), "--agent", "Bob"), "bad agent 'Bob'"),
                       (("--store", str(store), "--project", "nowhere"), "bad --project 'nowhere': not a folder")):
        refused = memstack("hook", "install", *args, cwd=project)
        assert refused.returncode == 2 and says in refused.stderr, refused.stderr
    config = store / "memstack.yaml"
    config.write_text(config.read_text().replace("default_agent: alice", "default_agent: null"))
    refused = memstack("hook", "install", "--store", str(store), cwd=project, env={"MEMSTACK_AGENT": ""})
    assert refused.returncode == 2 and "no agent given" in refused.stderr, refused.stderr
    assert not (project / ".claude").exists()


def test_install_json_says_what_it_did(store: Path, project: Path) -> None:
    done = json.loads(memstack("hook", "install", "--store", str(store), "--json", cwd=project).stdout)
    assert done == {"settings": str(project / ".claude/settings.json"), "store": str(store), "agent": None,
                    "events": dict.fromkeys(EVENTS, "added"), "written": True, "created": True}
    done = json.loads(memstack("hook", "install", "--store", str(store), "--json", cwd=project).stdout)
    assert done["events"] == dict.fromkeys(EVENTS, "unchanged") and not done["written"]


def test_install_without_stop_takes_memstack_out_of_it_and_stays_out(store: Path, project: Path) -> None:
    assert memstack("hook", "install", "--store", str(store), cwd=project).returncode == 0
    settings_file = project / ".claude/settings.json"
    (kept := json.loads(settings_file.read_text()))["hooks"]["Stop"].append(
        {"hooks": [{"type": "command", "command": "notify-send done"}]})
    settings_file.write_text(json.dumps(kept))
    done = memstack("hook", "install", "--store", str(store), "--without", "Stop", cwd=project)
    assert done.returncode == 0 and "Stop removed" in done.stdout, done.stdout + done.stderr
    assert commands(settings_file, "Stop") == ["notify-send done"] and memstack_commands(settings_file, "SessionEnd")
    again = memstack("hook", "install", "--store", str(store), "--without", "Stop", cwd=project)
    assert again.stdout.endswith("; nothing written\n"), again.stdout
    done = memstack("hook", "install", "--store", str(store), "--without", "Stop", "--without", "SessionEnd",
                    "--json", cwd=project)
    assert json.loads(done.stdout)["events"] == {"SessionStart": "unchanged", "Stop": "absent",
                                                 "SessionEnd": "removed"}
    assert "SessionEnd" not in json.loads(settings_file.read_text())["hooks"]  # no empty event left behind


def test_install_through_a_linked_settings_file_keeps_the_link(store: Path, project: Path, tmp_path: Path) -> None:
    kept = tmp_path / "dotfiles/claude-settings.json"
    kept.parent.mkdir()
    kept.write_text('{"model": "opus"}')
    (project / ".claude").mkdir()
    (project / ".claude/settings.json").symlink_to(kept)
    assert memstack("hook", "install", "--store", str(store), cwd=project).returncode == 0
    assert (project / ".claude/settings.json").is_symlink()
    assert json.loads(kept.read_text())["model"] == "opus" and memstack_commands(kept, "SessionStart")


def test_install_keeps_the_mode_of_the_settings_file(store: Path, project: Path) -> None:
    """Claude Code's `env` block may hold secrets: a file only its owner reads stays so."""
    settings_file = project / ".claude/settings.json"
    settings_file.parent.mkdir()
    settings_file.write_text('{"env": {"SOME_TOKEN": "x"}}')
    settings_file.chmod(0o600)
    assert memstack("hook", "install", "--store", str(store), cwd=project).returncode == 0
    assert memstack_commands(settings_file, "SessionStart")
    assert settings_file.stat().st_mode & 0o777 == 0o600


def test_install_through_a_link_to_nothing_is_refused_and_makes_nothing(
        store: Path, project: Path, tmp_path: Path) -> None:
    (project / ".claude").mkdir()
    (project / ".claude/settings.json").symlink_to(tmp_path / "nowhere/settings.json")
    refused = memstack("hook", "install", "--store", str(store), cwd=project)
    assert refused.returncode == 2 and "which does not exist" in refused.stderr, refused.stderr
    assert len(refused.stderr.splitlines()) == 1 and not (tmp_path / "nowhere").exists()
