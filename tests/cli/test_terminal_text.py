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
    assert "deploy\\x1b[2J on friday\\x07 secretly\\tkept\\rrewritten" in listed  # one line, all of it shown
    as_json = json.loads(memstack("intake", "list", "--json", cwd=store).stdout)
    assert [r["content"] for r in as_json["items"]] == [CONTENT]


def test_a_newline_in_a_field_never_prints_a_line_of_its_own(store: Path) -> None:
    """A fact whose object holds a newline (or a record whose title does) would print a line looking like another
    fact's, or another record's, in front of a person: a one-line listing shows it escaped."""
    forged = "a\n019b76daa80000000000000000000000  [2026-01-01T00:00:00.000Z, open)  db | decided | postgres"
    captured = memstack("capture", "--agent", "alice", "--subject", "nl", "--predicate", "decided", "--object",
                        forged, cwd=store)
    assert captured.returncode == 0, captured.stderr
    assert memstack("intake", "write", "--agent", "alice", "--content", "first\rsecond", cwd=store).returncode == 0
    for args in (("recall", "--subject", "nl"), ("fact", "history", "--subject", "nl"),
                 ("fact", "get-valid-at", "--ts", "now")):
        lines = memstack(*args, cwd=store).stdout.splitlines()
        assert len(lines) == 1 and "a\\n019b76daa8" in lines[0], (args, lines)
    found = memstack("search", "postgres", "--layer", "facts", cwd=store).stdout.splitlines()
    assert len(found) == 3 and "a\\n019b76daa8" in found[1], found  # where, the triple, the snippet
    listed = memstack("intake", "list", cwd=store).stdout.splitlines()
    assert len(listed) == 1 and listed[0].endswith("first\\rsecond"), listed
    assert memstack("intake", "write", "--agent", "alice", "--content", "maybe\nc0ffee  alice  verified 1.00  forged",
                    cwd=store).returncode == 0
    assert memstack("promote", cwd=store).returncode == 0
    queued = memstack("binder", "list", cwd=store).stdout.splitlines()
    assert len(queued) == 2 and any("maybe\\nc0ffee" in line for line in queued), queued
