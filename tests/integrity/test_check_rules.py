"""The rules as pure functions of old and new bytes, and the path layout: fast, no git."""

import pytest
from hypothesis import given
from hypothesis import strategies as st

from check_support import JAN, closed, fact, fid, jsonl
from memstack.base import layout
from memstack.integrity import rules
from memstack.integrity.violations import Violation
from memstack.repo import diffs, git

RESTORE = "`git checkout HEAD -- x`"
line_text = st.binary(min_size=1, max_size=20).filter(lambda b: b"\n" not in b)
log = st.lists(line_text, max_size=8).map(lambda ls: b"".join(line + b"\n" for line in ls))


@given(old=log, added=log)
def test_appending_whole_lines_always_passes(old: bytes, added: bytes) -> None:
    found, start = rules.append_only("x", old, old + added, prefix=True, restore=RESTORE)
    assert found == [] and start == len(old)


@given(old=st.lists(line_text, min_size=1, max_size=8), index=st.integers(min_value=0), edit=line_text, added=log)
def test_changing_any_committed_line_always_fails(old: list[bytes], index: int, edit: bytes, added: bytes) -> None:
    index %= len(old)
    new = list(old)
    new[index] = new[index] + edit
    before = b"".join(line + b"\n" for line in old)
    after = b"".join(line + b"\n" for line in new) + added
    found, start = rules.append_only("x", before, after, prefix=True, restore=RESTORE)
    assert [v.rule for v in found] == ["I1"] and start == -1
    assert found[0].line <= index + 1


@given(base=log, ours=log, theirs=log)
def test_a_merge_of_both_sides_appends_keeps_the_other_side_surviving(base: bytes, ours: bytes, theirs: bytes) -> None:
    merged = base + ours + theirs
    assert rules.append_only("x", base + ours, merged, prefix=True, restore=RESTORE)[0] == []
    assert rules.append_only("x", base + theirs, merged, prefix=False, restore=RESTORE)[0] == []


def test_survival_needs_every_line_in_any_order() -> None:
    old = b"a\nb\nc\n"
    assert rules.append_only("x", old, b"a\nz\nb\nc\n", prefix=False, restore=RESTORE)[0] == []
    assert rules.append_only("x", old, b"a\nc\nz\nb\n", prefix=False, restore=RESTORE)[0] == []
    [lost] = rules.append_only("x", old, b"a\nc\nz\n", prefix=False, restore=RESTORE)[0]
    assert (lost.line, lost.rule) == (2, "I1")


def test_a_torn_last_line_may_only_be_completed() -> None:
    old = b"a\nbc"
    assert rules.append_only("x", old, b"a\nbc\nd\n", prefix=True, restore=RESTORE) == ([], 5)
    [extended] = rules.append_only("x", old, b"a\nbcd\n", prefix=True, restore=RESTORE)[0]
    assert extended.line == 2 and "committed without a final newline, was extended" in extended.what
    [edited] = rules.append_only("x", old, b"a\nbX\n", prefix=True, restore=RESTORE)[0]
    assert edited.line == 2


def test_the_restore_hint_is_part_of_the_fix() -> None:
    [found], _ = rules.append_only("x", b"a\n", b"b\n", prefix=True, restore="`git checkout abc -- x`")
    assert "`git checkout abc -- x`" in found.fix


OPEN = fact("fact-cccc-0001")
CLOSE = closed(OPEN, valid_to=JAN + 10, expired_at=JAN + 10, superseded_by=fid("fact-cccc-0002"))


@pytest.mark.parametrize(("new", "problem"), [
    (OPEN, None),
    (CLOSE, None),
    ({**CLOSE, "superseded_by": None}, None),
    ({**CLOSE, "valid_to": True}, "valid_to True must be an integer after valid_from"),
    ({**CLOSE, "valid_to": float(JAN + 10)}, "must be an integer"),
    ({**CLOSE, "expired_at": None}, "expired_at must be set"),
    ({**CLOSE, "superseded_by": 7}, "superseded_by must be the successor's id"),
    ({**CLOSE, "extra": 1}, "changed extra"),
    ({k: v for k, v in CLOSE.items() if k != "intake_id"}, "changed intake_id"),
])
def test_the_one_allowed_change_of_an_open_fact_is_a_closing(new: dict, problem: str | None) -> None:  # type: ignore[type-arg]
    problems = rules.closing_problems(OPEN, new)
    assert problems == [] if problem is None else any(problem in p for p in problems), problems


def test_a_closed_fact_never_changes_not_even_to_close_again() -> None:
    assert rules.closing_problems(CLOSE, CLOSE) == []
    again = {**CLOSE, "valid_to": JAN + 20}
    assert rules.closing_problems(CLOSE, again) == [
        f"superseded fact {OPEN['id']} changed (valid_to); a superseded fact never changes"]


def test_facts_survive_a_merge_by_id_with_the_other_sides_closing() -> None:
    theirs = jsonl(CLOSE)
    merged = jsonl(fact("fact-dddd-0001"), CLOSE)  # ours appended one first; theirs closed the shared one
    assert rules.facts("f", jsonl(OPEN), merged, prefix=False, restore=RESTORE) == ([], [])
    assert rules.facts("f", theirs, merged, prefix=False, restore=RESTORE) == ([], [])
    found, _ = rules.facts("f", theirs, jsonl(fact("fact-dddd-0001")), prefix=False, restore=RESTORE)
    assert [(v.line, v.what) for v in found] == [(1, f"fact {OPEN['id']} (line 1) was removed")]


def test_facts_appended_are_returned_for_validation_with_their_line_numbers() -> None:
    old = jsonl(OPEN)
    new = jsonl(CLOSE, fact("fact-cccc-0002"), fact("fact-cccc-0003"))
    found, check = rules.facts("f", old, new, prefix=True, restore=RESTORE)
    assert found == []
    assert [number for number, _ in check] == [1, 2, 3]
    found, check = rules.facts("f", old, old + jsonl(fact("fact-cccc-0002")), prefix=True, restore=RESTORE)
    assert found == [] and [number for number, _ in check] == [2]


def test_a_committed_line_that_is_not_a_fact_must_not_change() -> None:
    found, _ = rules.facts("f", b"not json\n", b"still not json\n", prefix=True, restore=RESTORE)
    assert [(v.line, v.rule, v.what) for v in found] == [(1, "I2", "committed line 1 changed")]


def test_violations_are_capped_per_file() -> None:
    many = [Violation("f", n, "I5", "bad", "fix") for n in range(1, 80)]
    capped = rules.cap(many, "f")
    assert len(capped) == rules.MAX_PER_FILE + 1
    assert capped[-1].what == "and 29 more violations in this file"


@pytest.mark.parametrize(("path", "kind"), [
    ("intake/alice/2026-01-01.jsonl", layout.INTAKE),
    ("kb/promotions/alice/2026-01-01.jsonl", layout.PROMOTIONS),
    ("kb/promotions.jsonl", layout.PROMOTIONS),  # format 1's one-file ledger, until `memstack migrate` moves it
    ("kb/binder.jsonl", layout.BINDER),
    ("kb/facts/alice/2026-01.jsonl", layout.FACTS),
    ("kb/binder_queue/alice/2026-01-01.json", layout.VIEW),
    ("kb/knowledge/alice/2026-01.json", layout.VIEW),
    ("kb/binder_queue.json", layout.V1_VIEW),  # format 1's; refused in a store of format 2 (migration.py)
    ("store/notes/today.v2.json", layout.SOIL),
    ("handoffs/bob-2/session_handoff-2026-01-01_bob-2.md", layout.HANDOFF),
    ("handoffs/bob/session_handoff-2026-01-01_bob-2.md", layout.HANDOFF),
    ("identity/alice.md", layout.IDENTITY),
    ("session_anchor_alice.json", layout.ANCHOR),
    ("willow.md", layout.WILLOW_KIND),
    ("memstack.yaml", layout.CONFIG_KIND),
    (".github/workflows/memstack.yml", layout.OTHER),
    ("kb/facts/alice/2026-13.jsonl", layout.BAD_NAME),
    ("kb/promotions/alice/2026-02-30.jsonl", layout.BAD_NAME),
    ("kb/promotions/Alice/2026-01-01.jsonl", layout.BAD_NAME),
    ("kb/promotions/alice/2026-01.jsonl", layout.STRAY),
    ("session_anchor_Alice.json", layout.BAD_NAME),
    ("kb/facts/alice.jsonl", layout.STRAY),
    ("handoffs/alice.md", layout.STRAY),
])
def test_layout_knows_every_memory_file(path: str, kind: str) -> None:
    assert layout.classify(path).kind == kind


def test_raw_diff_and_tree_parsing() -> None:
    raw = (b":100644 100644 " + b"a" * 40 + b" " + b"b" * 40 + b" M\0with space.md\0"
           b":000000 120000 " + b"0" * 40 + b" " + b"c" * 40 + b" A\0link\0")
    changes, end = diffs.parse_raw(raw)
    assert end == len(raw)
    assert [(c.path, c.status, c.added, c.deleted) for c in changes] == [("with space.md", "M", False, False),
                                                                         ("link", "A", True, False)]
    tree = b"100644 a.md\0" + b"\1" * 20 + b"40000 sub dir\0" + b"\2" * 20
    assert git.tree_names(tree) == ["a.md", "sub dir"]
