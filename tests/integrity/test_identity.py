"""Identity files against memstack.yaml's forbidden patterns (I6)."""

import json
from pathlib import Path

from helpers import memstack


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
