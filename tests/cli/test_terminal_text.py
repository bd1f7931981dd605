"""What a record holds reaches the reader's terminal as text, never as commands: an escape sequence, a bell or a
carriage return in a record is printed escaped by every verb's text output (`--json` keeps it as written)."""

import json
from pathlib import Path

from helpers import memstack

CONTENT = "deploy\x1b[2J on friday\x07 secretly\tkept\rrewritten"


def test_list_and_recall_print_a_record_s_control_characters_escaped(store: Path) -> None:
    wrote = memstack("intake", "write", "--agent", "alice", "--content", CONTENT, cwd=store)
    assert wrote.returncode == 0, wrote.stderr
    captured = memstack("capture", "--agent", "alice", "--subject", "deploy\x1b]0;owned\x07", "--predicate",
                        "decided", "--object", "friday\x1b[31m", cwd=store)
    assert captured.returncode == 0, captured.stderr
    for args in (("intake", "list"), ("recall", "--subject", "deploy\x1b]0;owned\x07"), ("search", "friday")):
        text = memstack(*args, cwd=store)
        assert text.returncode == 0, text.stderr
        assert not set(text.stdout) & {"\x1b", "\x07", "\r"}, (args, text.stdout)
    listed = memstack("intake", "list", cwd=store).stdout
    assert "deploy\\x1b[2J on friday\\x07 secretly\tkept" in listed  # a tab stays one
    as_json = json.loads(memstack("intake", "list", "--json", cwd=store).stdout)
    assert [r["content"] for r in as_json["items"]] == [CONTENT]
