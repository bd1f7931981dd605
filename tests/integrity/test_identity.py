"""Identity files against memstack.yaml's forbidden patterns (I6)."""

import json
import subprocess
from pathlib import Path

from check_support import committed, publish, refused, refused_everywhere, with_remotes
from helpers import git, memstack


def test_clean_identities_pass(store: Path) -> None:
    result = memstack("identity", "check", cwd=store)
    assert result.returncode == 0, result.stdout + result.stderr


def test_a_forbidden_pattern_is_reported_with_file_and_line(store: Path) -> None:
    (store / "identity/bob.md").write_text("# bob\n\nmy api_key: sk-123\n")  # pragma: allowlist secret
    result = memstack("identity", "check", cwd=store)
    assert result.returncode == 1
    assert result.stdout.startswith("identity/bob.md:3: I6 matches forbidden pattern")
    data = json.loads(memstack("identity", "check", "--agent", "bob", "--json", cwd=store).stdout)
    assert data["violations"][0]["line"] == 3
    assert memstack("identity", "check", "--agent", "alice", cwd=store).returncode == 0


def test_a_bad_pattern_in_the_config_is_bad_input(store: Path) -> None:
    config = store / "memstack.yaml"
    config.write_text(config.read_text().replace("- '(?i)password\\s*[:=]'", "- '(unclosed'"))
    result = memstack("identity", "check", cwd=store)
    assert result.returncode == 2 and "forbidden_patterns" in result.stderr


# ---- a pattern that backtracks without bound ---------------------------------------------------------

BACKTRACKS = "(a|aa)+$"  # on a line of 40 a's and a '!': ~2^28 paths before it gives up, minutes under re
LINE = "a" * 40 + "!\n"


def with_pattern(root: Path, pattern: str) -> None:
    """Commit `pattern` (alone: a reviewable change, accepted) into memstack.yaml's forbidden patterns."""
    config = root / "memstack.yaml"
    listed = f"  forbidden_patterns:\n    - '{pattern}'\n"
    config.write_text(config.read_text().replace("  forbidden_patterns:\n", listed))
    committed(root, "identity pattern")


def test_a_pattern_that_backtracks_without_bound_is_refused_by_every_gate_within_seconds(
        repo: Path, bare: Path, tmp_path: Path) -> None:
    store = with_remotes(repo, bare, tmp_path)
    with_pattern(store, BACKTRACKS)
    publish(store)
    (store / "identity/alice.md").write_text((store / "identity/alice.md").read_text() + LINE)
    expected = f"identity/alice.md: I6 forbidden pattern '{BACKTRACKS}' did not finish within 1 s"
    git(store, "add", "-A")
    proc = subprocess.run(["git", "commit", "-qm", "identity"], cwd=store, capture_output=True, text=True,
                          timeout=30)  # re held this commit for minutes
    assert proc.returncode == 1 and expected in proc.stdout + proc.stderr, proc.stdout + proc.stderr
    refused_everywhere(store, expected)  # then --range, pre-push and pre-receive
    result = memstack("identity", "check", cwd=store)
    assert result.returncode == 1, result.stdout + result.stderr
    lines = result.stdout.splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"{expected} on this file (it backtracks without bound)"), lines


def test_many_backtracking_patterns_over_many_files_share_one_time_bound(repo: Path) -> None:
    """Four such patterns over three identity files would be twelve time-outs one after another: the patterns
    of one check share a bound, and those it leaves no time for are named as not checked (refused all the
    same), so a commit of many cannot hold a hook or a remote for their sum."""
    patterns = [BACKTRACKS, "(aa|a)+$", "(a|aa)+b?$", "(a|aa|aaa)+$"]
    for pattern in patterns:
        with_pattern(repo, pattern)
    for name in ("alice", "bob", "carol"):
        path = repo / f"identity/{name}.md"
        path.write_text((path.read_text() if path.exists() else f"# {name}\n") + LINE)
    result = memstack("identity", "check", cwd=repo)
    assert result.returncode == 1, result.stdout + result.stderr
    lines = result.stdout.splitlines()
    assert all(": I6 forbidden pattern " in line for line in lines), lines  # each pattern's own line (the store's too)
    named = {(line.split(":")[0], p) for line in lines for p in patterns if f"pattern {p!r}" in line}
    assert named == {(f"identity/{n}.md", p) for n in ("alice", "bob", "carol") for p in patterns}, lines
    assert sum("was not checked: the patterns took the 2 s a check gives them all" in line for line in lines) >= 8


def test_a_nested_quantifier_keeps_its_meaning_and_finishes(repo: Path) -> None:
    with_pattern(repo, "(a+)+$")  # what re took minutes on: the same answer (no match on `aaa…!`), at once
    (repo / "identity/alice.md").write_text((repo / "identity/alice.md").read_text() + LINE)
    committed(repo, "identity with a long line")
    (repo / "identity/bob.md").write_text((repo / "identity/bob.md").read_text() + "aaaa\n")
    refused(repo, "identity/bob.md:", "I6 matches forbidden pattern '(a+)+$'")
