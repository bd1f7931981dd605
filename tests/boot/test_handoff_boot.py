"""L5 handoffs (sealed, complete, never overwritten) and the L1 boot files derived from them."""

import json
import shutil
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from helpers import HANDOFF, git, memstack, tree_snapshot
from memstack.boot import context as boot


def test_write_seals_a_handoff_with_front_matter(store: Path) -> None:
    result = memstack("handoff", "write", "--agent", "bob", "--json", input=HANDOFF, cwd=store)
    assert result.returncode == 0, result.stderr
    sealed = json.loads(result.stdout)
    assert sealed["path"] == f"handoffs/bob/session_handoff-{sealed['date']}_bob.md"
    text = (store / sealed["path"]).read_text()
    assert text.startswith(f"---\nagent: bob\ndate: {sealed['date']}\nsession: ")
    assert text.endswith(HANDOFF)
    assert sealed["open_threads"] == ["finish the lexer", "review PR 12"]


def test_a_second_handoff_on_the_same_day_never_overwrites_the_first(store: Path, tmp_path: Path) -> None:
    first = tmp_path / "first.md"
    first.write_text("---\nagent: alice\ndate: 2026-02-03\nsession: s1\n---\n" + HANDOFF)
    second = tmp_path / "second.md"
    second.write_text("---\nagent: alice\ndate: 2026-02-03\nsession: s2\n---\n" + HANDOFF.replace("PR 12", "PR 13"))
    assert memstack("handoff", "write", "--file", str(first), cwd=store).returncode == 0
    assert memstack("handoff", "write", "--file", str(second), cwd=store).returncode == 0
    folder = store / "handoffs/alice"
    assert sorted(p.name for p in folder.iterdir()) == ["session_handoff-2026-02-03_alice-2.md",
                                                        "session_handoff-2026-02-03_alice.md"]
    assert (folder / "session_handoff-2026-02-03_alice.md").read_text() == first.read_text()
    shown = json.loads(memstack("handoff", "show", "--json", cwd=store).stdout)
    assert shown["front_matter"]["session"] == "s2"


@pytest.mark.parametrize(("text", "why"), [
    (HANDOFF.replace("## Open threads", "## Threads"), "Open threads"),
    (HANDOFF.replace("- finish the lexer\n- review PR 12\n", ""), "Open threads"),
    (HANDOFF.replace("|---|---|\n", ""), "Capability table"),
    (HANDOFF.split("## Capability table")[0], "Capability table"),
    ("---\nagent: alice\nsession: s\n---\n" + HANDOFF, "date"),
    ("---\nagent: bob\ndate: 2026-01-01\nsession: s\n---\n" + HANDOFF, "agent"),
    ("---\nagent: alice\ndate: someday\nsession: s\n---\n" + HANDOFF, "date"),
    ("", "empty"),
    ("---\nagent: alice\ndate: 2099-01-01\nsession: s\n---\n" + HANDOFF, "lies in the future"),  # stays latest
    ("---\nagent: alice\n" + HANDOFF, "not closed by a --- line"),  # was sealed under a second front matter
])
def test_an_incomplete_handoff_is_refused_and_writes_nothing(store: Path, text: str, why: str) -> None:
    before = tree_snapshot(store)
    result = memstack("handoff", "write", "--agent", "alice", input=text, cwd=store)
    assert result.returncode == 2
    assert why in result.stderr and "Traceback" not in result.stderr
    assert tree_snapshot(store) == before


def test_a_handoff_dated_tomorrow_somewhere_is_sealed_and_stays_the_latest_by_date(store: Path) -> None:
    """Today in the time zone furthest ahead may be tomorrow in UTC: that date is taken."""
    tomorrow = (datetime.now(UTC) + timedelta(days=1)).date().isoformat()
    text = f"---\nagent: alice\ndate: {tomorrow}\nsession: s\n---\n" + HANDOFF
    result = memstack("handoff", "write", "--agent", "alice", "--json", input=text, cwd=store)
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["date"] == tomorrow


def test_a_hand_committed_handoff_dated_far_ahead_is_refused_by_the_hook_and_check_all(store: Path) -> None:
    """The check applies `handoff write`'s date rule: a handoff dated 2099 would shadow every later one; one
    dated tomorrow (a time zone ahead of UTC) passes, as the write takes it."""
    tomorrow = (datetime.now(UTC) + timedelta(days=1)).date().isoformat()
    for date in (tomorrow, "2099-01-01"):
        path = store / "handoffs" / "alice" / f"session_handoff-{date}_alice.md"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f"---\nagent: alice\ndate: {date}\nsession: s\n---\n" + HANDOFF, encoding="utf-8")
        git(store, "add", "-A")
        committed = git(store, "commit", "-m", f"handoff {date}", check=False)
        if date == tomorrow:
            assert committed.returncode == 0, committed.stdout + committed.stderr
            continue
        assert committed.returncode != 0
        assert f"session_handoff-{date}_alice.md: I3 date {date} lies in the future" in committed.stderr
        git(store, "commit", "-qm", "past the hook", "--no-verify")
    checked = memstack("check", "--all", cwd=store)
    assert checked.returncode == 1
    assert [line for line in checked.stdout.splitlines() if ": I3 " in line] == [
        f"handoffs/alice/session_handoff-2099-01-01_alice.md: I3 date 2099-01-01 lies in the future (today is"
        f" {datetime.now(UTC).date().isoformat()} in UTC): a handoff is dated the day it is sealed; a later one would"
        " stay the latest until then — seal it with `memstack handoff write`, which dates it today"]


def test_boot_rebuild_derives_anchor_and_willow_from_the_latest_handoff(store: Path) -> None:
    memstack("handoff", "write", "--agent", "alice", input=HANDOFF, cwd=store)
    (store / "kb/knowledge/alice").mkdir(parents=True)
    (store / "kb/knowledge/alice/1970-01.json").write_text(json.dumps([
        {"id": "f1aaaaaaaa", "subject": "build", "predicate": "uses", "object": "make", "valid_from": 0,
         "recorded_at": 5}]))
    result = memstack("boot", "rebuild", "--json", cwd=store)
    assert sorted(json.loads(result.stdout)["changed"]) == ["session_anchor_alice.json", "willow.md"]
    anchor = json.loads((store / "session_anchor_alice.json").read_text())
    assert anchor["open_threads"] == ["finish the lexer", "review PR 12"]
    assert anchor["capabilities"] == [{"capability": "parse", "status": "done"},
                                      {"capability": "lex", "status": "partial"}]
    assert anchor["knowledge"][0]["object"] == "make"
    willow = (store / "willow.md").read_text()
    assert "## Agent alice" in willow and "- finish the lexer" in willow and "**build** uses make" in willow
    again = memstack("boot", "rebuild", "--json", cwd=store)
    assert json.loads(again.stdout)["changed"] == []  # deterministic: nothing to rewrite


def test_boot_show_needs_only_the_files(store: Path, tmp_path: Path) -> None:
    memstack("handoff", "write", "--agent", "alice", input=HANDOFF, cwd=store)
    memstack("boot", "rebuild", cwd=store)
    copy = tmp_path / "plain"
    shutil.copytree(store, copy, ignore=shutil.ignore_patterns(".git"))
    result = memstack("boot", "show", "--agent", "alice", "--store", str(copy), "--json",
                      env={"PATH": "/nonexistent-no-git"} | {})
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["open_threads"] == ["finish the lexer", "review PR 12"]


def test_boot_show_before_any_handoff_says_what_to_do(store: Path) -> None:
    result = memstack("boot", "show", "--agent", "bob", cwd=store)
    assert result.returncode == 2 and "handoff" in result.stderr


def test_handoffs_boot_files_and_soil_commit_through_the_hook(store: Path) -> None:
    memstack("handoff", "write", input=HANDOFF, cwd=store)
    memstack("boot", "rebuild", cwd=store)
    memstack("soil", "put", "session", "s", "--value", "1", cwd=store)
    git(store, "add", "-A")
    assert git(store, "commit", "-m", "session end", check=False).returncode == 0
    assert git(store, "status", "--porcelain").stdout == ""


def test_boot_build_is_byte_stable(store: Path) -> None:
    memstack("handoff", "write", input=HANDOFF, cwd=store)
    from memstack.repo.sources import WorktreeSource

    assert boot.build(WorktreeSource(store)) == boot.build(WorktreeSource(store))


@pytest.mark.parametrize("times", ["distinct", "tied", "mixed"])
def test_the_boot_summary_read_from_the_newest_shards_is_the_whole_views(tmp_path: Path, times: str) -> None:
    """boot.knowledge_summary parses only the knowledge view's newest months (a shard holds one agent's
    month of recorded_at) and counts the rest: over three agents and twelve months, ties in recorded_at
    broken by id, it picks exactly what parsing every shard picks, and counts every entry."""
    import random
    from collections import defaultdict
    from datetime import UTC, datetime

    from memstack.kb import views
    from memstack.repo.sources import WorktreeSource

    rng = random.Random(7)
    shards: dict[str, list[dict[str, object]]] = defaultdict(list)
    for n in range(3_000):
        month = 1_700_000_000_000 + (n % 12) * 31 * 86_400_000
        recorded = {"distinct": month + n, "tied": month, "mixed": month + rng.randrange(30)}[times]
        agent = ("alice", "bob", "carol")[n % 3]
        fact = {"id": f"{rng.getrandbits(64):016x}", "subject": f"s{n}", "predicate": "decided",
                "object": "x" * 150, "valid_from": n, "recorded_at": recorded, "distilled_at": recorded}
        name = datetime.fromtimestamp(recorded / 1000, UTC).strftime("%Y-%m")
        shards[f"{boot.KNOWLEDGE_VIEW}/{agent}/{name}.json"].append(fact)
    every = [fact for entries in shards.values() for fact in entries]
    for relpath, entries in shards.items():
        (tmp_path / relpath).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / relpath).write_bytes(views.render(sorted(views.line(f) for f in entries)) or b"")
    source = WorktreeSource(tmp_path)
    expected = boot.recent_facts(every)
    assert len(expected) == boot.BOOT_FACTS
    assert boot.knowledge_summary(source) == (expected, len(every))
    for relpath in shards:
        (tmp_path / relpath).unlink()
    assert boot.knowledge_summary(source) == ([], 0)
