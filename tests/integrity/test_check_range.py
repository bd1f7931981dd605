"""`memstack check --range`, `--all` and the default work-tree check: what a clone without hooks let through."""

import json
from pathlib import Path

import pytest

from check_support import (
    DAY,
    JAN,
    append,
    closed,
    committed,
    copy_store,
    fact,
    fid,
    handoff_text,
    head,
    intake,
    jsonl,
    run_check,
    sneak,
    write,
)
from helpers import git, memstack

LOG = "intake/alice/2026-01-01.jsonl"
FACTS = "kb/facts/alice/2026-01.jsonl"


def test_a_no_verify_commit_is_caught_by_the_range_check(repo: Path) -> None:
    write(repo, LOG, jsonl(intake(1), intake(2)))
    base = committed(repo)
    write(repo, LOG, jsonl(intake(2), intake(1)))
    bad = sneak(repo)
    proc = run_check(repo, "--range", f"{base}..HEAD")
    assert proc.returncode == 1
    assert f"commit {bad[:12]} 'sneaked past the hook' (against {base[:12]}):" in proc.stdout
    assert f"{LOG}:1: I1 line 1 was moved" in proc.stdout
    assert "1 violation (I1) in 1 of 1 commit" in proc.stdout
    assert run_check(repo, "--range", f"{base}..{base}").returncode == 0  # an empty range is clean


def test_the_range_lists_every_violation_of_every_commit(repo: Path) -> None:
    base = head(repo)
    write(repo, LOG, jsonl(intake(1, tier="bad")))
    write(repo, "kb/stray.txt", "x\n")
    first = sneak(repo, "one")
    (repo / "willow.md").write_text("# mine\n")
    second = sneak(repo, "two")
    proc = run_check(repo, "--range", f"{base}..{second}", "--format", "json")
    assert proc.returncode == 1
    document = json.loads(proc.stdout)
    assert document["ok"] is False and document["mode"] == "range"
    found = {(v["commit"], v["path"], v["rule"]) for v in document["violations"]}
    assert found == {(first, LOG, "I5"), (first, "kb/stray.txt", "I5"), (second, "willow.md", "I4")}
    assert json.loads(memstack("--json", "check", "--range", f"{base}..{second}", cwd=repo).stdout) == document


def _history(root: Path) -> None:
    """A month of valid work through the hook: intake, facts and a closing, handoffs and boot files, SOIL."""
    write(root, LOG, jsonl(intake(1), intake(2)))
    committed(root, "intake")
    append(root, LOG, jsonl(intake(3)))
    write(root, "intake/bob/2026-01-02.jsonl", jsonl(intake(4, agent="bob", day="2026-01-02")))
    write(root, FACTS, jsonl(fact("fact-aaaa-0001")))
    committed(root, "more intake, a fact")
    write(root, FACTS, jsonl(closed(fact("fact-aaaa-0001"), valid_to=JAN + DAY, expired_at=JAN + DAY,
                                    superseded_by=fid("fact-aaaa-0002")),
                             fact("fact-aaaa-0002", obj="use git and memstack", valid_from=JAN + DAY)))
    write(root, "handoffs/alice/session_handoff-2026-01-02_alice.md", handoff_text())
    committed(root, "supersede, handoff")
    assert memstack("boot", "rebuild", cwd=root).returncode == 0
    assert memstack("soil", "put", "tasks", "today", "--value", '{"n": 1}', cwd=root).returncode == 0
    committed(root, "boot files, SOIL")
    assert memstack("soil", "update", "tasks", "today", "--value", '{"n": 2}', cwd=root).returncode == 0
    write(root, "handoffs/bob/session_handoff-2026-01-02_bob.md", handoff_text(agent="bob"))
    assert memstack("boot", "rebuild", cwd=root).returncode == 0
    committed(root, "bob's handoff")


@pytest.fixture
def worked(states, tmp_path: Path) -> Path:  # type: ignore[no-untyped-def]
    return copy_store(states("worked", _history), tmp_path)


def test_valid_work_is_never_refused_over_the_whole_history(worked: Path) -> None:
    proc = run_check(worked, "--range", "HEAD")
    assert proc.returncode == 0, proc.stdout
    assert "memstack check: ok — the commits of HEAD, 6 commits" in proc.stdout
    assert run_check(worked, "--all").returncode == 0


def test_all_audits_every_file_at_head(worked: Path) -> None:
    append(worked, "intake/bob/2026-01-02.jsonl", jsonl(intake(9, agent="alice", day="2026-01-02")))
    write(worked, "identity/bob.md", "# bob\n\npassword: hunter2\n")  # pragma: allowlist secret
    sneak(worked)
    proc = run_check(worked, "--all")
    assert proc.returncode == 1
    assert "intake/bob/2026-01-02.jsonl:2: I5 agent 'alice' is not the folder's agent 'bob'" in proc.stdout
    assert "identity/bob.md:3: I6 matches forbidden pattern" in proc.stdout
    assert "every file at HEAD" in proc.stdout


def test_the_default_check_is_the_work_tree_against_head(worked: Path) -> None:
    assert run_check(worked).returncode == 0
    lines = (worked / LOG).read_bytes().splitlines(keepends=True)
    (worked / LOG).write_bytes(lines[0] + lines[2])  # unstaged
    write(worked, "store/notes.txt", "untracked stray\n")
    write(worked, "handoffs/alice/session_handoff-2026-01-05_alice.md", "# unfinished\n")
    proc = run_check(worked)
    assert proc.returncode == 1
    assert f"{LOG}:2: I1 line 2 was edited or deleted" in proc.stdout
    assert "store/notes.txt: I5 stray file" in proc.stdout
    assert "handoffs/alice/session_handoff-2026-01-05_alice.md: I3 incomplete handoff" in proc.stdout
    assert "the work tree (against HEAD)" in proc.stdout


def test_a_work_tree_symlink_is_reported(worked: Path) -> None:
    (worked / "kb" / "link.json").symlink_to("../willow.md")
    proc = run_check(worked)
    assert proc.returncode == 1
    assert "kb/link.json: I7 is a symlink" in proc.stdout


# ---- merges -----------------------------------------------------------------------------------------

def _branches(root: Path) -> tuple[str, str]:
    """main and topic both append to alice's log from a common base; returns their heads."""
    write(root, LOG, jsonl(intake(1)))
    committed(root, "base")
    git(root, "checkout", "-q", "-b", "topic")
    append(root, LOG, jsonl(intake(3)))
    topic = committed(root, "topic appends")
    git(root, "checkout", "-q", "main")
    append(root, LOG, jsonl(intake(2)))
    return committed(root, "main appends"), topic


def _merge_resolved(root: Path, resolution: bytes) -> str:
    """`git merge topic`, resolving the log's conflict with `resolution`; committed without the hook."""
    # Both appended; with memstack's merge driver disabled that is a conflict, resolved by hand here.
    assert git(root, "-c", "merge.memstack.driver=false", "merge", "-q", "topic", check=False).returncode != 0
    write(root, LOG, resolution)
    return sneak(root, "merge topic")


def test_a_merge_keeping_both_sides_records_is_clean(repo: Path) -> None:
    main, _ = _branches(repo)
    _merge_resolved(repo, jsonl(intake(1), intake(2), intake(3)))
    proc = run_check(repo, "--range", f"{main}..HEAD")
    assert proc.returncode == 0, proc.stdout
    assert "2 commits" in proc.stdout  # topic's commit and the merge


def test_a_merge_that_drops_the_other_sides_record_is_caught(repo: Path) -> None:
    main, topic = _branches(repo)
    merge = _merge_resolved(repo, jsonl(intake(1), intake(2)))
    proc = run_check(repo, "--range", f"{main}..HEAD")
    assert proc.returncode == 1
    assert f"commit {merge[:12]} 'merge topic' (against {main[:12]}, {topic[:12]}):" in proc.stdout
    assert f"{LOG}:2: I1 line 2 of the other side is lost" in proc.stdout


def test_a_merge_that_rewrites_the_first_parents_log_is_caught(repo: Path) -> None:
    main, _ = _branches(repo)
    _merge_resolved(repo, jsonl(intake(1), intake(3), intake(2)))  # main's line 2 moved below topic's
    proc = run_check(repo, "--range", f"{main}..HEAD")
    assert proc.returncode == 1
    assert f"{LOG}:2: I1 line 2 was moved" in proc.stdout


def test_two_branches_closing_one_fact_differently_cannot_both_win(repo: Path) -> None:
    original = fact("fact-bbbb-0001")
    write(repo, FACTS, jsonl(original))
    committed(repo, "fact")
    git(repo, "checkout", "-q", "-b", "topic")
    write(repo, FACTS, jsonl(closed(original, valid_to=JAN + 5, expired_at=JAN + 5000, superseded_by=None)))
    committed(repo, "topic closes it")
    git(repo, "checkout", "-q", "main")
    write(repo, FACTS, jsonl(closed(original, valid_to=JAN + 9, expired_at=JAN + 9000, superseded_by=None)))
    main = committed(repo, "main closes it")
    merged = git(repo, "merge", "-q", "topic", check=False)
    assert merged.returncode != 0 and original["id"] in merged.stderr  # memstack's driver: a real conflict
    git(repo, "checkout", "--ours", "--", FACTS)  # a careless resolution: ours wins, theirs' closing lost
    sneak(repo, "merge topic")
    proc = run_check(repo, "--range", f"{main}..HEAD")
    assert proc.returncode == 1
    assert f"{FACTS}:1: I2 superseded fact {original['id']} changed (expired_at, valid_to)" in proc.stdout


def test_a_merge_taking_one_sides_boot_files_unchanged_is_not_a_hand_edit(repo: Path) -> None:
    """Derived files may lag: a merge that takes a parent's checked boot files is not refused."""
    git(repo, "checkout", "-q", "-b", "topic")
    write(repo, "handoffs/alice/session_handoff-2026-01-02_alice.md", handoff_text())
    assert memstack("boot", "rebuild", cwd=repo).returncode == 0
    committed(repo, "alice's handoff, rebuilt")
    git(repo, "checkout", "-q", "main")
    write(repo, "handoffs/bob/session_handoff-2026-01-02_bob.md", handoff_text(agent="bob"))
    main = committed(repo, "bob's handoff, boot files lag")
    assert git(repo, "merge", "-q", "--no-edit", "topic", check=False).returncode == 0
    assert run_check(repo, "--range", f"{main}..HEAD").returncode == 0
    # An evil merge, hand-editing willow.md inside the merge commit, is still caught.
    git(repo, "reset", "-q", "--hard", main)
    assert git(repo, "merge", "-q", "--no-commit", "topic", check=False).returncode == 0
    (repo / "willow.md").write_text((repo / "willow.md").read_text() + "\nhand-written\n")
    sneak(repo, "evil merge")
    proc = run_check(repo, "--range", f"{main}..HEAD")
    assert proc.returncode == 1
    assert "willow.md:" in proc.stdout and "I4 differs from what a rebuild makes" in proc.stdout


# ---- usage -------------------------------------------------------------------------------------------

@pytest.mark.parametrize(("args", "message"), [
    (["--range", "no-such-branch..HEAD"], "bad --range 'no-such-branch..HEAD': no commit 'no-such-branch'"),
    (["--range=--all"], "bad --range"),
    (["--range", "A..B..C"], "bad --range"),
    (["--range", ""], "bad --range"),
    (["--staged", "--all"], "not allowed with argument"),
    (["--pre-push"], "--pre-push runs in pre-commit's pre-push stage"),
    (["--format", "yaml"], "invalid choice"),
])
def test_bad_usage_exits_2_with_a_message(repo: Path, args: list[str], message: str) -> None:
    proc = run_check(repo, *args)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert message in proc.stderr
    assert proc.stdout == ""


def test_outside_a_repository_is_bad_usage(tmp_path: Path) -> None:
    proc = memstack("check", "--staged", cwd=tmp_path)
    assert proc.returncode == 2
    assert "is not in a git repository" in proc.stderr
    proc = memstack("check", "--store", str(tmp_path / "nowhere"), cwd=tmp_path)
    assert proc.returncode == 2
    assert "nowhere" in proc.stderr


def test_store_option_and_memstack_home_name_the_store_to_check(repo: Path, tmp_path: Path) -> None:
    write(repo, "kb/stray.txt", "x\n")
    proc = memstack("check", "--store", str(repo), cwd=tmp_path)
    assert proc.returncode == 1 and "kb/stray.txt: I5 stray file" in proc.stdout
    proc = memstack("check", cwd=tmp_path, env={"MEMSTACK_HOME": str(repo)})
    assert proc.returncode == 1 and "kb/stray.txt" in proc.stdout


def test_a_merge_meeting_a_new_pattern_with_a_matching_identity_is_caught(repo: Path) -> None:
    start = head(repo)
    git(repo, "checkout", "-q", "-b", "cfg")
    config = (repo / "memstack.yaml").read_text()
    write(repo, "memstack.yaml",
          config.replace("  forbidden_patterns:\n", "  forbidden_patterns:\n    - '(?i)secret'\n"))
    committed(repo, "forbid secrets")
    git(repo, "checkout", "-q", "main")
    write(repo, "identity/alice.md", "# alice\n\nmy secret sauce\n")
    committed(repo, "identity")
    assert git(repo, "merge", "-q", "--no-edit", "cfg", check=False).returncode == 0
    proc = run_check(repo, "--range", f"{start}..HEAD")
    assert proc.returncode == 1
    assert "identity/alice.md:3: I6 matches forbidden pattern '(?i)secret'" in proc.stdout
