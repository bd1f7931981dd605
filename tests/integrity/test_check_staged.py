"""The pre-commit hook: every rule I1-I7 through a real `git commit` in a store made by `memstack init`."""

import os
from pathlib import Path

import pytest

from check_support import (
    DAY,
    JAN,
    append,
    closed,
    commit,
    committed,
    copy_store,
    fact,
    fid,
    flagged,
    handoff_text,
    head,
    intake,
    jsonl,
    refused,
    run_check,
    write,
)
from helpers import git, memstack

LOG = "intake/alice/2026-01-01.jsonl"
FACTS = "kb/facts/alice/2026-01.jsonl"


def _logged(root: Path) -> None:
    write(root, LOG, jsonl(intake(1), intake(2), intake(3)))
    committed(root, "three records")


@pytest.fixture
def logged(states, tmp_path: Path) -> Path:  # type: ignore[no-untyped-def]
    """A store whose alice intake log holds three committed records."""
    return copy_store(states("logged", _logged), tmp_path)


# ---- I1: append-only logs --------------------------------------------------------------------------

def test_appending_whole_lines_is_accepted(logged: Path) -> None:
    append(logged, LOG, jsonl(intake(4), intake(5)))
    committed(logged)


def test_appending_through_the_cli_is_accepted(repo: Path) -> None:
    for n in range(3):
        proc = memstack("intake", "write", "--content", f"note {n}", "--created-at", "2026-01-03T09:00:00Z", cwd=repo)
        assert proc.returncode == 0, proc.stderr
    committed(repo)


@pytest.mark.parametrize(("mutate", "expected"), [
    (lambda ls: [ls[0], ls[1].replace(b"observation 2", b"observation two"), ls[2]], f"{LOG}:2: I1 line 2 was edited"),
    (lambda ls: [ls[0], ls[2]], f"{LOG}:2: I1 line 2 was edited or deleted"),
    (lambda ls: [ls[1], ls[0], ls[2]], f"{LOG}:1: I1 line 1 was moved"),
    (lambda ls: [ls[0], ls[1]], f"{LOG}:3: I1 lines 3-3 were removed (the log was truncated)"),
    (lambda ls: [], f"{LOG}:1: I1 lines 1-3 were removed"),
    (lambda ls: [ls[0], ls[1], ls[2][:-10]], f"{LOG}:3: I1 line 3 was edited"),
    (lambda ls: [b"{}", *ls], f"{LOG}:1: I1 line 1 was moved"),
], ids=["edit", "delete-line", "reorder", "truncate-line", "empty-the-file", "truncate-bytes", "insert-first"])
def test_rewriting_a_log_is_refused(logged: Path, mutate, expected: str) -> None:  # type: ignore[no-untyped-def]
    lines = (logged / LOG).read_bytes().splitlines()
    new = mutate(lines)
    write(logged, LOG, b"".join(line + b"\n" for line in new))
    flagged(logged, expected, "restore the committed lines")


def test_deleting_a_log_is_refused(logged: Path) -> None:
    (logged / LOG).unlink()
    refused(logged, f"{LOG}: I1 append-only log deleted or renamed")


def test_renaming_a_log_is_refused_even_to_a_valid_name(logged: Path) -> None:
    git(logged, "mv", LOG, "intake/alice/2026-01-02.jsonl")
    out = refused(logged, f"{LOG}: I1 append-only log deleted or renamed")
    # The new name holds records of another day: the moved lines are wrong there too.
    assert "intake/alice/2026-01-02.jsonl:1: I5 created_at 2026-01-01 is not on the file's day 2026-01-02" in out


@pytest.mark.parametrize("ledger", ["kb/promotions/alice/2026-01-01.jsonl", "kb/binder.jsonl"])
def test_the_ledgers_are_append_only_too(repo: Path, ledger: str) -> None:
    # the Binder's lines are edges: a decision must name an intake record the store holds (binderlog.py)
    line, other = ({"intake_id": "000000000001abababab", "agent": "alice", "sub_tier": "binder", "fact_id": None,
                    "promoted_at": JAN}, {"intake_id": "000000000002abababab"}) if ledger != "kb/binder.jsonl" \
        else ({"kind": "edge", "from": "parser", "relation": "uses", "to": "lexer", "decided_at": JAN, "by": "human"},
              {"to": "tokens"})
    write(repo, ledger, jsonl(line, {**line, **other}))
    committed(repo)
    write(repo, ledger, jsonl({**line, **other}))
    refused(repo, f"{ledger}:1: I1")


def test_a_torn_last_line_may_be_completed_but_never_extended(repo: Path) -> None:
    """NOTES trap: without a final newline, `startswith` lets an edit of the last line through."""
    write(repo, LOG, jsonl(intake(1)) + jsonl(intake(2))[:-1])  # no final newline
    assert commit(repo, "torn", verify=False).returncode == 0
    torn = (repo / LOG).read_bytes()
    write(repo, LOG, torn[:-3] + b'x"}\n')  # rewrites the end of the committed last line
    refused(repo, f"{LOG}:2: I1")
    write(repo, LOG, torn + b"x\n")  # extends the committed last line
    refused(repo, f"{LOG}:2: I1 line 2, committed without a final newline, was extended")
    write(repo, LOG, torn + b"\n" + jsonl(intake(3)))  # completes it, then appends
    committed(repo)


# ---- I2: facts -------------------------------------------------------------------------------------

OPEN = fact("fact-open-0001")
SUPERSEDED = closed(fact("fact-old-00001", obj="use svn", valid_from=JAN - DAY, recorded_at=JAN),
                    valid_to=JAN, expired_at=JAN + 1000, superseded_by=fid("fact-new-00001"))
SUCCESSOR = fact("fact-new-00001", recorded_at=JAN + 1000)


def _facts(root: Path) -> None:
    write(root, FACTS, jsonl(SUPERSEDED, SUCCESSOR, OPEN))
    committed(root, "facts")


@pytest.fixture
def facts(states, tmp_path: Path) -> Path:  # type: ignore[no-untyped-def]
    """A store with a committed fact file: a superseded fact, its successor and an open fact."""
    return copy_store(states("facts", _facts), tmp_path)


def test_appending_facts_and_closing_one_properly_is_accepted(facts: Path) -> None:
    successor = fact("fact-open-0002", obj="use git and memstack", valid_from=JAN + DAY, recorded_at=JAN + DAY)
    closing = closed(OPEN, valid_to=JAN + DAY, expired_at=JAN + DAY, superseded_by=successor["id"])
    write(facts, FACTS, jsonl(SUPERSEDED, SUCCESSOR, closing, successor))
    committed(facts)


def test_closing_without_a_successor_is_accepted(facts: Path) -> None:
    """`fact invalidate` closes a fact with no successor: superseded_by stays null."""
    closing = closed(OPEN, valid_to=JAN + DAY, expired_at=JAN + DAY, superseded_by=None)
    write(facts, FACTS, jsonl(SUPERSEDED, SUCCESSOR, closing))
    committed(facts)


@pytest.mark.parametrize("field", sorted(SUPERSEDED))
def test_any_field_of_a_superseded_fact_is_immutable(facts: Path, field: str) -> None:
    changed = dict(SUPERSEDED)
    value = changed[field]
    changed[field] = (value + 1 if isinstance(value, int) and not isinstance(value, bool) else
                      0.5 if isinstance(value, float) else
                      "fact-other-001" if field in ("id", "superseded_by") else
                      "jeles_atoms" if field == "table" else
                      "bob" if field == "agent" else "changed")
    write(facts, FACTS, jsonl(changed, SUCCESSOR, OPEN))
    flagged(facts, f"{FACTS}:1: I2")


def test_closing_a_fact_twice_is_refused(facts: Path) -> None:
    again = closed(SUPERSEDED, valid_to=JAN + 5, expired_at=JAN + 2000, superseded_by=SUCCESSOR["id"])
    write(facts, FACTS, jsonl(again, SUCCESSOR, OPEN))
    refused(facts, f"{FACTS}:1: I2 superseded fact {SUPERSEDED['id']} changed (expired_at, valid_to)")


def test_deleting_a_fact_is_refused(facts: Path) -> None:
    write(facts, FACTS, jsonl(SUPERSEDED, OPEN))
    refused(facts, f"{FACTS}:2: I2 fact {SUCCESSOR['id']} (line 2) was removed")


def test_deleting_the_fact_file_is_refused(facts: Path) -> None:
    (facts / FACTS).unlink()
    refused(facts, f"{FACTS}: I2 fact file deleted or renamed")


def test_reordering_facts_is_refused(facts: Path) -> None:
    write(facts, FACTS, jsonl(SUCCESSOR, SUPERSEDED, OPEN))
    refused(facts, f"{FACTS}:1: I2 facts were reordered")


@pytest.mark.parametrize(("change", "expected"), [
    ({"object": "use hg"}, f"open fact {OPEN['id']} changed object; only a closing may change it"),
    ({"confidence": 0.1}, f"open fact {OPEN['id']} changed confidence"),
    ({"expired_at": JAN + DAY}, "changed without being closed (valid_to is still null)"),
    ({"superseded_by": SUCCESSOR["id"]}, "changed without being closed"),
    ({"valid_to": JAN + DAY, "superseded_by": SUCCESSOR["id"]}, "expired_at must be set"),
    ({"valid_to": JAN, "expired_at": JAN + DAY}, "valid_to 1767225600000 must be an integer after valid_from"),
    ({"valid_to": JAN - 1, "expired_at": JAN + DAY}, "must be an integer after valid_from"),
    ({"valid_to": JAN + DAY, "expired_at": JAN + DAY, "superseded_by": OPEN["id"]},
     "superseded_by must be the successor's id"),
    ({"valid_to": JAN + DAY, "expired_at": JAN + DAY, "subject": "other"}, "changed subject"),
], ids=["object", "confidence", "expired-only", "successor-only", "no-expired-at", "empty-window",
        "negative-window", "self-successor", "closing-and-edit"])
def test_an_open_fact_changes_only_by_a_proper_closing(facts: Path, change: dict, expected: str) -> None:  # type: ignore[type-arg]
    write(facts, FACTS, jsonl(SUPERSEDED, SUCCESSOR, {**OPEN, **change}))
    flagged(facts, f"{FACTS}:3: I2", expected)


def test_a_new_fact_may_not_reuse_an_id(facts: Path) -> None:
    append(facts, FACTS, jsonl(fact("fact-open-0001", obj="again")))
    refused(facts, f"{FACTS}:4: I2 fact id {OPEN['id']} is already in the file")


def test_a_new_fact_is_validated(facts: Path) -> None:
    append(facts, FACTS, jsonl(fact("fact-bad-00001", confidence=7), fact("fact-feb-00001", recorded_at=JAN + 40 * DAY),
                               fact("fact-bob-00001", agent="bob")))
    refused(facts, f"{FACTS}:4: I5 invalid fact record: confidence: 7 is greater than the maximum of 1",
            f"{FACTS}:5: I5 recorded_at 2026-02-10 is not on the file's month 2026-01",
            f"{FACTS}:6: I5 agent 'bob' is not the folder's agent 'alice'")


def test_a_closing_is_validated_against_the_schema(facts: Path) -> None:
    closing = closed(OPEN, valid_to=JAN + DAY, expired_at=JAN + DAY, superseded_by=None)
    write(facts, FACTS, jsonl(SUPERSEDED, SUCCESSOR, {**closing, "tier": "rumour"}))
    refused(facts, f"{FACTS}:3: I2 open fact {OPEN['id']} changed tier", f"{FACTS}:3: I5 invalid fact record: tier")


# ---- I3: handoffs ----------------------------------------------------------------------------------

SEALED = "handoffs/alice/session_handoff-2026-01-02_alice.md"


def _sealed(root: Path) -> None:
    write(root, SEALED, handoff_text())
    committed(root, "handoff")


@pytest.fixture
def sealed(states, tmp_path: Path) -> Path:  # type: ignore[no-untyped-def]
    """A store with alice's handoff of 2026-01-02 committed (boot files not rebuilt)."""
    return copy_store(states("sealed", _sealed), tmp_path)


def test_a_new_complete_handoff_with_or_without_a_boot_rebuild_is_accepted(sealed: Path) -> None:
    write(sealed, "handoffs/alice/session_handoff-2026-01-02_alice-2.md", handoff_text(thread="second session"))
    committed(sealed, "second handoff, boot files lag")
    assert memstack("boot", "rebuild", cwd=sealed).returncode == 0
    committed(sealed, "boot rebuild")
    assert "second session" in (sealed / "willow.md").read_text()


@pytest.mark.parametrize("how", ["edit", "delete", "rename", "append"])
def test_a_sealed_handoff_is_immutable(sealed: Path, how: str) -> None:
    path = sealed / SEALED
    if how == "edit":
        path.write_text(handoff_text(thread="rewritten history"))
    elif how == "append":
        path.write_text(path.read_text() + "\nPostscript.\n")
    elif how == "delete":
        path.unlink()
    else:
        git(sealed, "mv", SEALED, "handoffs/alice/session_handoff-2026-01-02_alice-2.md")
    what = "sealed handoff edited" if how in ("edit", "append") else "sealed handoff deleted or renamed"
    flagged(sealed, f"{SEALED}: I3 {what}", "write a new one instead")


@pytest.mark.parametrize(("text", "expected"), [
    (handoff_text().split("## Capability table")[0], "needs a '## Capability table'"),
    (handoff_text().replace("- finish the check\n", ""), "needs a non-empty '## Open threads'"),
    ("# Session\n\n## Open threads\n\n- x\n", "no YAML front matter"),
    (handoff_text(agent="bob"), "front matter agent 'bob' is not the folder's agent 'alice'"),
    (handoff_text(date="2026-01-03"), "front matter date '2026-01-03' is not the file name's date 2026-01-02"),
], ids=["no-capability-table", "no-open-threads", "no-front-matter", "wrong-agent", "wrong-date"])
def test_an_incomplete_or_misplaced_handoff_is_refused(repo: Path, text: str, expected: str) -> None:
    write(repo, SEALED, text)
    flagged(repo, f"{SEALED}: I3", expected)


# ---- I4: derived files -----------------------------------------------------------------------------

def test_hand_editing_willow_is_refused(repo: Path) -> None:
    path = repo / "willow.md"
    path.write_text(path.read_text().replace("No agent has sealed a handoff yet.", "Alice is in charge."))
    refused(repo, "willow.md:6: I4 differs from what a rebuild makes", "memstack boot rebuild")


def test_hand_editing_an_anchor_is_refused(sealed: Path) -> None:
    assert memstack("boot", "rebuild", cwd=sealed).returncode == 0
    committed(sealed, "boot rebuild")
    path = sealed / "session_anchor_alice.json"
    path.write_text(path.read_text().replace("finish the check", "nothing to do"))
    refused(sealed, "session_anchor_alice.json:", "I4 differs from what a rebuild makes")


def test_a_derived_file_is_compared_with_the_rebuild_of_its_own_commit(sealed: Path) -> None:
    """Rebuilt from a work tree holding an unstaged handoff: the staged boot files are not this commit's."""
    second = "handoffs/alice/session_handoff-2026-01-03_alice.md"
    write(sealed, second, handoff_text(date="2026-01-03", thread="second session"))
    assert memstack("boot", "rebuild", cwd=sealed).returncode == 0
    git(sealed, "add", "session_anchor_alice.json", "willow.md")
    refused(sealed, "session_anchor_alice.json:9: I4 differs", add=False)
    git(sealed, "add", second)
    committed(sealed, "handoff and its boot files", add=False)


def test_deleting_or_inventing_a_derived_file_is_refused(sealed: Path) -> None:
    (sealed / "willow.md").unlink()
    refused(sealed, "willow.md: I4 derived file deleted, but a rebuild makes it")
    git(sealed, "checkout", "HEAD", "--", "willow.md")
    write(sealed, "session_anchor_bob.json", "{}\n")
    refused(sealed, "session_anchor_bob.json: I4 derived file that no rebuild makes")


def test_a_kb_view_must_be_what_a_rebuild_makes(repo: Path) -> None:
    write(repo, "kb/knowledge/alice/2026-01.json", '[]\n')  # a shard of no fact file
    refused(repo, "kb/knowledge/alice/2026-01.json: I4 derived file that no rebuild makes")
    (repo / "kb/knowledge/alice/2026-01.json").unlink()
    added = memstack("fact", "add", "--subject", "s", "--predicate", "p", "--object", "o", cwd=repo)
    assert added.returncode == 0, added.stderr
    assert memstack("rebuild", cwd=repo).returncode == 0
    [shard] = (repo / "kb/knowledge").glob("*/*.json")
    name, made = shard.relative_to(repo).as_posix(), shard.read_text()
    shard.write_text(made.replace('"object":"o"', '"object":"x"'))
    refused(repo, f"{name}:2: I4 differs from what a rebuild makes from the sources in this state")
    shard.write_text(made[:-2] + "\n")
    refused(repo, f"{name}:3: I4 differs from what a rebuild makes")
    shard.write_text(made)
    assert commit(repo, "views rebuilt").returncode == 0


# ---- I5: records and stray files -------------------------------------------------------------------

@pytest.mark.parametrize(("line", "expected"), [
    (jsonl(intake(1, tier="rumour")), "I5 invalid intake record: tier: 'rumour' is not one of"),
    (jsonl(intake(1, confidence=1.5)), "I5 invalid intake record: confidence: 1.5 is greater than the maximum"),
    (jsonl(intake(1, agent="bob")), "I5 agent 'bob' is not the folder's agent 'alice'"),
    (jsonl(intake(1, day="2026-01-02")), "I5 created_at 2026-01-02 is not on the file's day 2026-01-01"),
    (b'{"id": \n', "I5 line is not valid JSON"),
    (b"[1, 2]\n", "I5 line is not a JSON object"),
    (b"\n", "I5 empty line"),
    (jsonl(intake(1))[:-1] + b"\xff\n", "I7 is not UTF-8"),
    (jsonl(intake(1))[:-1], "I7 the last line has no final newline"),
], ids=["tier", "confidence", "agent", "day", "json", "object", "empty", "utf8", "newline"])
def test_a_bad_intake_line_is_refused(logged: Path, line: bytes, expected: str) -> None:
    append(logged, LOG, line)
    flagged(logged, f"{LOG}:4: {expected}")


def test_every_bad_line_is_listed_not_only_the_first(logged: Path) -> None:
    append(logged, LOG, jsonl(intake(4, tier="x"), intake(5), intake(6, agent="bob")))
    refused(logged, f"{LOG}:4: I5", f"{LOG}:6: I5 agent 'bob' is not the folder's agent 'alice'",
            f"{LOG}:6: I5 id", "does not carry agent 'alice'", "3 violations (I5)")


@pytest.mark.parametrize("stray", ["intake/notes.md", "intake/alice/2026-01-01.json", "kb/todo.txt",
                                   "kb/facts/alice/2026-1.jsonl", "store/loose.json", "store/c/k.txt",
                                   "handoffs/alice/notes.md", "identity/alice.txt", "intake/alice/.gitkeep"])
def test_a_stray_file_in_a_layer_folder_is_refused(repo: Path, stray: str) -> None:
    write(repo, stray, "something\n")
    flagged(repo, f"{stray}: I5 stray file")


def test_files_outside_the_layer_folders_are_free(repo: Path) -> None:
    write(repo, "docs/notes.md", "anything\n")
    write(repo, "docs/picture.bin", b"\x00\xff")
    committed(repo)


def test_soil_records_are_validated_and_may_change(repo: Path) -> None:
    for args in (("put", "tasks", "today", "--value", '{"a": 1}'), ("update", "tasks", "today", "--value", '{"b": 2}')):
        assert memstack("soil", *args, cwd=repo).returncode == 0
        committed(repo)
    assert memstack("soil", "expire", "tasks", "today", cwd=repo).returncode == 0
    committed(repo)
    (repo / "store/tasks/today.json").unlink()
    committed(repo, "a SOIL record may be removed")
    write(repo, "store/tasks/other.json", '{"key": "today"}\n')
    refused(repo, "store/tasks/other.json: I5 invalid soil record:", "I5 key 'today' does not match the path ('other')")


def test_a_broken_config_is_refused(repo: Path) -> None:
    path = repo / "memstack.yaml"
    path.write_text(path.read_text().replace("recall_limit: 50", "recall_limit: many"))
    refused(repo, "memstack.yaml: I5 invalid config: memory.recall_limit")
    path.write_text(path.read_text().replace("recall_limit: many", "recall_limit: 50\n  bad: [1"))
    refused(repo, "memstack.yaml: I5 not valid YAML")
    git(repo, "checkout", "HEAD", "--", "memstack.yaml")
    path.unlink()
    refused(repo, "memstack.yaml: I5 memstack.yaml deleted")


# ---- I6: identity ----------------------------------------------------------------------------------

def test_an_identity_matching_a_forbidden_pattern_is_refused(repo: Path) -> None:
    path = repo / "identity/alice.md"
    path.write_text(path.read_text() + "\nMy api_key: 1234\n")  # pragma: allowlist secret
    refused(repo, "identity/alice.md:5: I6 matches forbidden pattern")


def test_a_new_forbidden_pattern_is_checked_against_every_identity(repo: Path) -> None:
    config = repo / "memstack.yaml"
    config.write_text(config.read_text().replace("  forbidden_patterns:\n",
                                                 "  forbidden_patterns:\n    - 'Written by'\n"))
    out = refused(repo, "identity/alice.md:3: I6", "identity/bob.md:3: I6")
    assert "'Written by'" in out
    git(repo, "checkout", "HEAD", "--", "memstack.yaml")
    config.write_text(config.read_text().replace("  forbidden_patterns:\n",
                                                 "  forbidden_patterns:\n    - '(unclosed'\n"))
    refused(repo, "memstack.yaml: I5 bad identity.forbidden_patterns entry '(unclosed'")


def test_a_clean_identity_edit_is_accepted(repo: Path) -> None:
    path = repo / "identity/alice.md"
    path.write_text(path.read_text() + "\nAlice writes the enforcement code.\n")
    committed(repo)


# ---- I7: names, symlinks, text ---------------------------------------------------------------------

def test_a_symlink_is_refused_anywhere(repo: Path) -> None:
    os.symlink("willow.md", repo / "docs-link")
    refused(repo, "docs-link: I7 is a symlink")


def test_a_log_replaced_by_a_symlink_is_refused(logged: Path) -> None:
    (logged / LOG).unlink()
    os.symlink("../../willow.md", logged / LOG)
    refused(logged, f"{LOG}: I7 is a symlink", f"{LOG}: I1 append-only log deleted or renamed")


@pytest.mark.parametrize(("path", "expected"), [
    ("intake/Alice/2026-01-01.jsonl", "agent 'Alice' in the path is not a valid name"),
    ("intake/alice/2026-02-30.jsonl", "'2026-02-30' in the path is not a calendar date"),
    ("store/my..coll/key.json", "collection 'my..coll'"),
    ("store/c/Key One.json", "key 'Key One'"),
    ("handoffs/alice/session_handoff-2026-01-02_bob.md", "a handoff's name must be"),
    ("identity/Zoë.md", "agent 'Zoë'"),
], ids=["upper-case", "no-such-day", "dot-dot", "space", "other-agent-handoff", "unicode"])
def test_a_bad_name_is_refused(repo: Path, path: str, expected: str) -> None:
    write(repo, path, "{}\n")
    flagged(repo, "I7", expected)


def test_a_non_utf8_handoff_or_identity_is_refused(repo: Path) -> None:
    write(repo, SEALED, handoff_text().encode() + b"\xc3\x28\n")
    write(repo, "identity/alice.md", b"# alice\n\xff\n")
    bad_line = handoff_text().count("\n") + 1
    refused(repo, f"{SEALED}:{bad_line}: I7 is not UTF-8", "identity/alice.md:2: I7 is not UTF-8")


def test_an_empty_log_is_allowed_but_an_empty_identity_is_not(repo: Path) -> None:
    write(repo, LOG, b"")
    committed(repo)
    write(repo, "identity/alice.md", b"")
    refused(repo, "identity/alice.md: I7 is empty")


# ---- the hook as a whole -----------------------------------------------------------------------------

def test_the_installed_hook_runs_memstack_check(repo: Path) -> None:
    write(repo, LOG, jsonl(intake(1, tier="nope")))
    git(repo, "add", "-A")
    proc = git(repo, "commit", "-m", "bad", check=False)
    assert proc.returncode == 1
    assert "memstack check (staged memory against HEAD)" in proc.stdout + proc.stderr


def test_commit_a_and_commit_path_are_checked_through_the_temporary_index(logged: Path) -> None:
    """`git commit -a` / `git commit PATH` point GIT_INDEX_FILE at a temporary index."""
    lines = (logged / LOG).read_bytes().splitlines(keepends=True)
    (logged / LOG).write_bytes(b"".join(lines[1:]))
    for args in (["commit", "-q", "-a", "-m", "x"], ["commit", "-q", "-m", "x", "--", LOG]):
        before = head(logged)
        proc = git(logged, *args, check=False)
        assert proc.returncode == 1, proc.stdout + proc.stderr
        assert f"{LOG}:1: I1" in proc.stdout + proc.stderr
        assert head(logged) == before


def test_the_first_commit_of_a_repository_is_checked_against_the_empty_tree(tmp_path: Path) -> None:
    root = tmp_path / "fresh"
    root.mkdir()
    git(root, "init", "-q")
    write(root, "memstack.yaml", "version: 1\n")  # a store's first commit (no store at all: test_store_in_repo)
    write(root, LOG, jsonl(intake(1, agent="bob")))
    git(root, "add", "-A")
    proc = run_check(root, "--staged")
    assert proc.returncode == 1
    assert f"{LOG}:1: I5 agent 'bob' is not the folder's agent 'alice'" in proc.stdout
    assert "against the empty tree" in proc.stdout


# ---- found in review: what the schema cannot say ------------------------------------------------

@pytest.mark.parametrize(("change", "expected"), [
    ({"valid_from": 1000.0}, "valid_from 1000.0 must be integer milliseconds"),
    ({"recorded_at": -5}, "recorded_at -5 must be integer milliseconds"),
    ({"expired_at": JAN + 1}, "valid_to and expired_at are set together"),
    ({"superseded_by": "fact-zzzz-0001"}, "an open fact has no superseded_by"),
])
def test_an_appended_fact_that_no_tool_could_close_is_refused(repo: Path, change: dict, expected: str) -> None:
    record = {**fact("fact-cccc-0001"), **change}
    write(repo, "kb/facts/alice/2026-01.jsonl", jsonl(record))
    refused(repo, expected)


def test_a_superseded_fact_rewritten_as_a_float_is_refused(repo: Path) -> None:
    original = closed(fact("fact-dddd-0001"), valid_to=JAN + 5, expired_at=JAN + 5000, superseded_by=None)
    write(repo, "kb/facts/alice/2026-01.jsonl", jsonl(original))
    committed(repo)
    text = (repo / "kb/facts/alice/2026-01.jsonl").read_text()
    write(repo, "kb/facts/alice/2026-01.jsonl", text.replace(f'"valid_to":{JAN + 5}', f'"valid_to":{JAN + 5}.0'))
    refused(repo, f"I2 superseded fact {original['id']} changed (valid_to)")


def test_an_intake_id_appended_twice_is_refused(repo: Path) -> None:
    one = intake(1)
    write(repo, "intake/alice/2026-01-01.jsonl", jsonl(one))
    committed(repo)
    append(repo, "intake/alice/2026-01-01.jsonl", jsonl({**one, "content": "again"}))
    refused(repo, f"I5 intake id {one['id']} is already in the file")


# ---- long logs: checked a piece at a time, as if read whole ----------------------------------------

def _binder_log(start: int, count: int, *, bad: int, secret: int) -> bytes:
    """Binder edges numbered from `start`: line `bad` is not JSON, line `secret` quotes a key."""
    from secret_corpus import AWS_ID

    lines = []
    for n in range(start, start + count):
        record = {"kind": "edge", "from": f"subject {n:06d}", "relation": "depends on", "to": "lexer",
                  "decided_at": JAN + n, "by": "ada"}
        if n == secret:
            record["note"] = f"export AWS_ACCESS_KEY_ID={AWS_ID}"
        lines.append(b"{not json" if n == bad else jsonl(record).rstrip(b"\n"))
    return b"\n".join(lines)


@pytest.mark.parametrize("mode", ["audit", "worktree", "appended", "spilled"])
def test_a_long_log_is_checked_in_pieces_with_the_verdict_of_a_whole_read(repo: Path, mode: str,  # noqa: F811
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """A log over checker.STREAM bytes is streamed (objects.PIECE at a time: here a few lines, so records,
    line numbers and a last line without its newline all cross pieces) and must be judged exactly as
    when it is read whole: the same violations on the same lines. `spilled`: what is appended is
    beyond objects.HELD, so it is spilled to a temporary file and checked from there, a piece at a time."""
    from memstack.integrity import check, checker
    from memstack.repo import objects

    path = "kb/binder.jsonl"
    if mode in ("appended", "spilled"):  # 40 clean lines committed, 40 appended: the bad ones among the new
        write(repo, path, _binder_log(1, 40, bad=0, secret=0) + b"\n")
        committed(repo, "forty decisions")
        append(repo, path, _binder_log(41, 40, bad=57, secret=66))
        git(repo, "add", path)
    else:  # the log new to git: in the work tree of a store that never committed it, or in a commit
        git(repo, "rm", "-q", path)
        git(repo, "commit", "-q", "--no-verify", "-m", "no binder yet")
        write(repo, path, _binder_log(1, 80, bad=17, secret=33))
        if mode == "audit":
            git(repo, "add", path)
            git(repo, "commit", "-q", "--no-verify", "-m", "eighty decisions, two of them bad")
    run = {"audit": check.audit, "worktree": check.worktree, "appended": check.staged, "spilled": check.staged}[mode]

    whole = run(repo).violations
    monkeypatch.setattr(checker, "STREAM", 200)
    monkeypatch.setattr(objects, "PIECE", 150)  # a record is about 120 bytes: most cross a piece
    if mode == "spilled":
        monkeypatch.setattr(objects, "HELD", 300)
    streamed = []
    for name in ("streamed", "appended"):  # which way each long log went
        def spy(self, *args, _real=getattr(checker.Checker, name), _name=name):  # type: ignore[no-untyped-def]
            result = _real(self, *args)
            streamed.append((_name, result is not None, _name == "appended" and result is not None
                             and not isinstance(result[0], bytes)))
            return result
        monkeypatch.setattr(checker.Checker, name, spy)
    pieces = run(repo).violations
    assert {"audit": ("streamed", True, False), "worktree": ("streamed", True, False),
            "appended": ("appended", True, False), "spilled": ("appended", True, True)}[mode] in streamed
    bad, secret = (57, 66) if mode in ("appended", "spilled") else (17, 33)
    assert sorted((v.path, v.line, v.rule) for v in pieces) == [
        (path, bad, "I5"), (path, secret, "I8"), (path, 80, "I7")], pieces
    assert sorted(pieces) == sorted(whole)
