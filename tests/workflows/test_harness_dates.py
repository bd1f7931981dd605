"""The session hooks and boot after a handoff dated a day ahead of UTC (an agent east of UTC dates its handoff by
its local day, which `handoff write` allows): what the session seals next still counts, and is the latest."""

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

from test_harness_hooks import event, hook

from helpers import memstack
from mcp_support import HANDOFF


def dated(day: str, session: str, thread: str) -> str:
    return f"---\nagent: alice\ndate: {day}\nsession: {session}\n---\n\n" + HANDOFF.replace(
        "wire the fact tools into the MCP server", thread)


def sealed(store: Path, text: str) -> str:
    result = memstack("handoff", "write", cwd=store, input=text)
    assert result.returncode == 0, result.stderr
    return result.stdout.split()[-1]


def ahead(store: Path) -> str:
    """Seal the handoff of an agent in UTC+9 after its local midnight: dated tomorrow in UTC; returns that date."""
    tomorrow = (datetime.now(tz=UTC) + timedelta(days=1)).date().isoformat()
    assert sealed(store, dated(tomorrow, "tokyo-1", "what the tokyo session left open")).endswith(
        f"session_handoff-{tomorrow}_alice.md")
    return tomorrow


def test_a_handoff_sealed_this_session_counts_though_an_earlier_one_is_dated_later(store: Path,
                                                                                   tmp_path: Path) -> None:
    ahead(store)
    hook(tmp_path, "session-start", event(store, "SessionStart", source="startup"))
    today = datetime.now(tz=UTC).date().isoformat()
    sealed(store, dated(today, "utc-1", "what this session left open"))  # dated today: not the latest by date
    assert hook(tmp_path, "session-end", event(store, "Stop", stop_hook_active=False)).stdout == ""
    assert hook(tmp_path, "session-end", event(store, "SessionEnd", reason="logout")).stdout == ""
    assert len(list((store / "handoffs/alice").iterdir())) == 2  # nothing carried over

    # a session that seals nothing is still asked to, and carried over at its end
    hook(tmp_path, "session-start", event(store, "SessionStart", session="second", source="startup"))
    assert json.loads(hook(tmp_path, "session-end", event(store, "Stop", session="second")).stdout)["decision"] \
        == "block"
    assert "carry-over" in hook(tmp_path, "session-end", event(store, "SessionEnd", session="second")).stdout


def test_a_handoff_without_front_matter_sealed_after_one_dated_tomorrow_is_the_latest(store: Path,
                                                                                     tmp_path: Path) -> None:
    tomorrow = ahead(store)
    hook(tmp_path, "session-start", event(store, "SessionStart", source="startup"))
    path = sealed(store, HANDOFF)  # dated by the latest handoff's day, so that it sorts after it
    assert path == f"handoffs/alice/session_handoff-{tomorrow}_alice-2.md"
    assert hook(tmp_path, "session-end", event(store, "Stop", stop_hook_active=False)).stdout == ""
    assert memstack("boot", "rebuild", cwd=store).returncode == 0
    shown = json.loads(memstack("boot", "show", "--json", cwd=store).stdout)
    assert shown["handoff"] == path and shown["open_threads"] == ["wire the fact tools into the MCP server"]
    assert "wire the fact tools into the MCP server" in (store / "willow.md").read_text()
    told = hook(tmp_path, "session-start", event(store, "SessionStart", session="next", source="startup")).stdout
    assert path in json.loads(told)["hookSpecificOutput"]["additionalContext"]
