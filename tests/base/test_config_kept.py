"""memstack.yaml's parse is kept per clone (`.memstack/config.json`, by the text's hash, as plain data): a
later command that reads the same text neither imports the YAML library nor parses it; an edited file is
parsed again; a command that changes the file still parses it round-trip, so its comments survive."""

import json
import os
import subprocess
import sys
from pathlib import Path

from helpers import memstack


def test_a_later_command_takes_the_kept_parse_and_imports_no_yaml_library(store: Path) -> None:
    assert memstack("status", cwd=store).returncode == 0
    assert (store / ".memstack/config.json").is_file()
    later = subprocess.run([sys.executable, "-X", "importtime", "-m", "memstack", "status"], cwd=store,
                           capture_output=True, text=True, env={**os.environ, "PYTHONWARNINGS": "ignore"})
    assert later.returncode == 0, later.stderr
    assert "ruamel" not in later.stderr


def test_an_edited_memstack_yaml_is_parsed_again(store: Path) -> None:
    assert memstack("status", cwd=store).returncode == 0
    config = store / "memstack.yaml"
    config.write_text(config.read_text().replace("format: 2", "format: 3"))
    refused = memstack("status", cwd=store)
    assert refused.returncode == 2
    assert "format 3" in refused.stderr


def test_a_broken_kept_parse_is_parsed_again(store: Path) -> None:
    (store / ".memstack").mkdir(exist_ok=True)
    (store / ".memstack/config.json").write_text("{not json")
    assert memstack("status", cwd=store).returncode == 0
    assert (store / ".memstack/config.json").read_text().startswith('{"document": ')


def test_a_command_that_changes_memstack_yaml_keeps_its_comments_after_a_kept_parse(store: Path) -> None:
    config = store / "memstack.yaml"
    config.write_text("# our team's store: ask Ann before changing the clock\n" + config.read_text())
    assert memstack("status", cwd=store).returncode == 0  # the parse kept as plain data, no comments in it
    added = memstack("agent", "add", "carol", cwd=store)
    assert added.returncode == 0, added.stderr
    text = config.read_text()
    assert text.startswith("# our team's store: ask Ann before changing the clock\n") and "carol" in text


def test_a_write_that_resolves_its_agent_from_memstack_yaml_imports_no_yaml_library(store: Path) -> None:
    assert memstack("status", cwd=store).returncode == 0
    later = subprocess.run([sys.executable, "-X", "importtime", "-m", "memstack", "intake", "write", "--content",
                            "the lexer is done"], cwd=store, capture_output=True, text=True,
                           env={**os.environ, "PYTHONWARNINGS": "ignore"})
    assert later.returncode == 0, later.stderr
    assert "ruamel" not in later.stderr
    listed = memstack("intake", "list", "--json", cwd=store)
    assert "the lexer is done" in listed.stdout  # written for the default agent memstack.yaml names


def test_a_later_read_takes_the_kept_verdict_and_loads_no_validator(store: Path) -> None:
    assert memstack("status", cwd=store).returncode == 0  # keeps the parse and its verdict
    assert json.loads((store / ".memstack/config.json").read_text())["valid"]
    later = subprocess.run([sys.executable, "-X", "importtime", "-m", "memstack", "recall", "--subject", "lexer"],
                           cwd=store, capture_output=True, text=True, env={**os.environ, "PYTHONWARNINGS": "ignore"})
    assert later.returncode == 0, later.stderr
    assert "fastjsonschema" not in later.stderr


def test_a_memstack_yaml_the_schema_refuses_is_refused_on_every_run(store: Path) -> None:
    config = store / "memstack.yaml"
    config.write_text(config.read_text().replace("recall_limit: 50", "recall_limit: many"))
    for _ in range(3):  # a refused text leaves no verdict for the next run to take
        refused = memstack("recall", "--subject", "lexer", cwd=store)
        assert refused.returncode == 2
        assert "invalid memstack.yaml" in refused.stderr and "recall_limit" in refused.stderr


def test_a_verdict_reached_against_another_schema_is_not_taken(store: Path) -> None:
    """A verdict kept by a memstack whose config schema differs (an upgrade) is checked again: here a text the
    schema refuses, kept as passed by "another schema", is refused."""
    config = store / "memstack.yaml"
    config.write_text(config.read_text().replace("recall_limit: 50", "recall_limit: many"))
    assert memstack("recall", "--subject", "lexer", cwd=store).returncode == 2
    kept_path = store / ".memstack/config.json"
    kept = json.loads(kept_path.read_text())
    assert "valid" not in kept  # nothing passed
    kept_path.write_text(json.dumps({**kept, "valid": "0" * 64}))
    refused = memstack("recall", "--subject", "lexer", cwd=store)
    assert refused.returncode == 2 and "recall_limit" in refused.stderr


def test_a_memstack_yaml_nested_thousands_deep_is_refused_in_one_line(store: Path) -> None:
    config = store / "memstack.yaml"
    config.write_text(config.read_text() + "extra: " + "[" * 5000 + "]" * 5000 + "\n")  # the YAML parser recurses
    refused = memstack("status", cwd=store)
    assert refused.returncode == 2 and "Traceback" not in refused.stderr, refused.stderr
    assert refused.stderr.strip() == f"memstack: {config}: not valid YAML (nested deeper than memstack reads)"
