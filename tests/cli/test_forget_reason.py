"""A reason stands in for what was forgotten: `forget` refuses one that shares text of 8 characters or more with
the record (a run of whole words, case and spacing aside; one ordinary word is not such text), for a handoff
too, and the hooks refuse such a tombstone written by hand."""

import json
import subprocess
from pathlib import Path
from typing import Any

from helpers import MEMSTACK, git, memstack, tree_snapshot

DAY = "2026-03-02T10:00:00Z"
CONTENT = "Zebediah Quackenbush, a customer, lives at 12 Marmalade Lane"
HANDOFF = """## Open threads
- call Zebediah Quackenbush at 555-0142

## Capability table
| capability | status |
|---|---|
| parse | partial |
"""


def ok(store: Path, *args: str, input: str | None = None) -> Any:
    done = memstack(*args, "--json", cwd=store, input=input)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout) if done.stdout.strip() else {}


def commit(store: Path, message: str = "memory") -> subprocess.CompletedProcess[str]:
    git(store, "add", "-A")
    return git(store, "commit", "-q", "-m", message, check=False)


def noted(store: Path) -> tuple[str, str]:
    """An intake record holding CONTENT and a sealed handoff holding HANDOFF, committed: (record id, handoff path)."""
    record = ok(store, "intake", "write", "--content", CONTENT, "--created-at", DAY)["record"]
    handoff = ok(store, "handoff", "write", "-", input=HANDOFF)["path"]
    assert commit(store).returncode == 0
    return record["id"], handoff


def test_forget_refuses_a_reason_sharing_eight_characters_of_words_with_the_record_or_the_handoff(
        store: Path) -> None:
    record_id, handoff = noted(store)
    before = tree_snapshot(store)
    for name, reason in ((record_id, "Zebediah Quackenbush asked, 12 Marmalade Lane"),
                         (record_id, "ZEBEDIAH   quackenbush wrote in"),  # case and spacing are not compared
                         (record_id, "the one at 12 marmalade"),
                         (handoff, "- call Zebediah Quackenbush at 555-0142"),  # the handoff's very line
                         (handoff, "the number 555-0142"),  # one word with a digit: "555-0142" is 8 characters
                         (handoff, "parse partial")):
        refused = memstack("forget", name, "--reason", reason, cwd=store)
        assert refused.returncode == 2, (name, reason, refused.stdout)
        assert refused.stderr.count("\n") == 1 and "repeats the content of the record it forgets" in refused.stderr
        assert "Traceback" not in refused.stderr and tree_snapshot(store) == before
    # ordinary words alone, short runs and the sections every handoff has are not the record's text
    ok(store, "forget", record_id, "--reason", "a customer asked us to erase their home address")
    ok(store, "forget", handoff, "--reason", "its open threads named a person; capability table kept short")
    assert commit(store, "forget").returncode == 0
    shown = memstack("intake", "list", cwd=store).stdout
    assert "Quackenbush" not in shown and "[forgotten: a customer asked us" in shown


def test_the_hooks_refuse_a_hand_written_tombstone_whose_reason_repeats_part_of_the_record(store: Path) -> None:
    record_id, handoff = noted(store)
    path = store / "kb/forgotten/alice/2026-03.jsonl"
    path.parent.mkdir(parents=True)
    for name, kind, reason in ((record_id, "intake", "Zebediah Quackenbush asked"),
                               (handoff, "handoff", "call zebediah quackenbush")):
        tombstone = {"agent": "alice", "by": "Grace Hopper", "forgets": name, "forgotten_at": 1772445600000,
                     "kind": kind, "reason": reason}
        path.write_text(json.dumps(tombstone) + "\n")
        done = commit(store, "forget by hand")
        assert done.returncode != 0 and "I5 the tombstone's reason repeats the forgotten record's content" \
            in done.stdout + done.stderr, done.stdout + done.stderr
        git(store, "reset", "-q")
    path.write_text(json.dumps({**tombstone, "reason": "a person's phone number"}) + "\n")
    done = commit(store, "forget by hand")
    assert done.returncode == 0, done.stdout + done.stderr


def test_a_reason_and_a_record_of_one_word_repeated_are_compared_in_one_pass(store: Path) -> None:
    """A shared run is read once, not from every pair of its words: a record and a reason that are one word
    said thousands of times (a tombstone anyone may push to a guarded remote) are answered at once; read
    pair by pair, as before, 3,000 x 400 words took a minute, 8,000 several, holding the hook and the
    remote's pre-receive."""
    record = ok(store, "intake", "write", "--content", "a " * 8000 + "end", "--created-at", DAY)["record"]
    assert commit(store).returncode == 0
    done = subprocess.run([MEMSTACK, "forget", record["id"], "--reason", "a " * 400 + "request"], cwd=store,
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr  # "a" is a little word: no text of the record is repeated
    assert commit(store, "forget").returncode == 0
