"""Many writers: the merge driver and diff text conversion, with real clones of a real bare remote."""

import json
import random
import shutil
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fact_support import bound, closed, fact, line
from helpers import git, memstack
from memstack.intake import log as intake
from memstack.kb import merge

FACTS = "kb/facts/alice/2026-01.jsonl"


@pytest.fixture(scope="module")
def _clones(_store_template: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A bare remote of a new store and two clones of it, the hooks and drivers installed: made once for the
    module (`remote.git`, `a`, `b`)."""
    folder = tmp_path_factory.mktemp("clones")
    remote = folder / "remote.git"
    git(folder, "clone", "-q", "--bare", str(_store_template), str(remote))
    for name in ("a", "b"):
        clone = folder / name
        git(folder, "clone", "-q", str(remote), str(clone))
        assert memstack("install", cwd=clone).returncode == 0
    return folder


@pytest.fixture
def clones(_clones: Path, tmp_path: Path) -> tuple[Path, Path]:
    """A copy of `_clones`: the two clones, each with `origin` the copied remote."""
    shutil.copytree(_clones, tmp_path, symlinks=True, dirs_exist_ok=True)
    for name in ("a", "b"):
        git(tmp_path / name, "remote", "set-url", "origin", str(tmp_path / "remote.git"))
    return tmp_path / "a", tmp_path / "b"


def commit_all(clone: Path, message: str, verify: bool = True) -> None:
    git(clone, "add", "-A")
    git(clone, "commit", "-q", "-m", message, *([] if verify else ["--no-verify"]))


def append(path: Path, data: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("ab") as handle:
        handle.write(data)


def test_install_registers_the_drivers(clones: tuple[Path, Path]) -> None:
    a, _ = clones
    # The Python that installed them (no venv on PATH needed): docs/repository.md.
    python = git(a, "config", "memstack.python").stdout.strip()
    assert Path(python).is_file()
    assert git(a, "config", "merge.memstack.driver").stdout.strip() == f"{python} -m memstack merge-driver %O %A %B %P"
    assert git(a, "config", "diff.memstack.textconv").stdout.strip() == f"{python} -m memstack textconv"
    assert git(a, "check-attr", "merge", "--", "intake/alice/2026-01-01.jsonl").stdout.strip().endswith("memstack")


@pytest.mark.parametrize("pull", [["--no-rebase"], ["--rebase"]])
def test_two_clones_appending_to_one_day_and_one_fact_file_merge_without_conflict(
        clones: tuple[Path, Path], pull: list[str]) -> None:
    a, b = clones
    for clone, who in ((a, "a"), (b, "b")):
        for n in range(3):
            result = memstack("intake", "write", "--content", f"{who} {n}", "--created-at",
                              "2026-01-01T10:00:00Z", cwd=clone)
            assert result.returncode == 0, result.stderr
        append(clone / FACTS, line(fact(f"fact-{who}-0000")))
        commit_all(clone, f"memory from {who}")
    git(a, "push", "-q")
    result = git(b, "pull", "-q", *pull, check=False)
    assert result.returncode == 0, result.stdout + result.stderr
    contents = [json.loads(x)["content"] for x in (b / "intake/alice/2026-01-01.jsonl").read_text().splitlines()]
    assert sorted(contents) == ["a 0", "a 1", "a 2", "b 0", "b 1", "b 2"]
    ids = [json.loads(x)["id"] for x in (b / FACTS).read_text().splitlines()]
    assert sorted(ids) == sorted([bound("fact-a-0000"), bound("fact-b-0000")])
    assert git(b, "status", "--porcelain").stdout == ""
    root = git(b, "rev-list", "--max-parents=0", "HEAD").stdout.strip()
    audit = memstack("check", "--range", f"{root}..HEAD", cwd=b)
    assert audit.returncode == 0, audit.stdout


def test_closing_different_facts_of_one_file_merges_cleanly(clones: tuple[Path, Path]) -> None:
    a, b = clones
    one, two = fact("fact-one-0000", "one"), fact("fact-two-0000", "two")
    append(a / FACTS, line(one) + line(two))
    commit_all(a, "two facts")
    git(a, "push", "-q")
    git(b, "pull", "-q")
    (a / FACTS).write_bytes(line(closed(one, 5000)) + line(two))
    commit_all(a, "close one")
    (b / FACTS).write_bytes(line(one) + line(closed(two, 6000)))
    commit_all(b, "close two")
    git(a, "push", "-q")
    assert git(b, "pull", "-q", "--no-rebase", check=False).returncode == 0
    merged = [json.loads(x) for x in (b / FACTS).read_text().splitlines()]
    assert merged == [closed(one, 5000), closed(two, 6000)]


def test_closing_one_fact_differently_on_two_sides_is_a_reported_conflict(clones: tuple[Path, Path]) -> None:
    a, b = clones
    one = fact("fact-one-0000", "one")
    append(a / FACTS, line(one))
    commit_all(a, "a fact")
    git(a, "push", "-q")
    git(b, "pull", "-q")
    (a / FACTS).write_bytes(line(closed(one, 5000)))
    commit_all(a, "close at 5000")
    (b / FACTS).write_bytes(line(closed(one, 7000)))
    commit_all(b, "close at 7000")
    git(a, "push", "-q")
    result = git(b, "pull", "--no-rebase", check=False)
    assert result.returncode != 0
    assert one["id"] in result.stderr + result.stdout
    text = (b / FACTS).read_text()
    assert f"<<<<<<< ours (memstack: fact {one['id']} closed differently)" in text
    assert '"valid_to":7000' in text and '"valid_to":5000' in text
    assert FACTS in git(b, "diff", "--name-only", "--diff-filter=U").stdout


def test_the_same_closing_on_both_sides_is_fine() -> None:
    one = fact("fact-one-0000")
    result = merge.merge(FACTS, line(one), line(closed(one, 5000)), line(closed(one, 5000)))
    assert result.conflicts == [] and result.data == line(closed(one, 5000))


def test_a_record_changed_on_one_side_is_left_to_git() -> None:
    base = b'{"id":"aaaaaaaa1","v":1}\n'
    with pytest.raises(merge.Unmergeable, match="aaaaaaaa1 differs"):
        merge.merge("intake/alice/2026-01-01.jsonl", base, b'{"id":"aaaaaaaa1","v":2}\n', base)


def test_a_record_a_side_dropped_is_kept() -> None:
    base = b'{"id":"aaaaaaaa1"}\n'
    result = merge.merge("intake/alice/2026-01-01.jsonl", base, b'{"id":"bbbbbbbb2"}\n', base)
    assert result.data == b'{"id":"bbbbbbbb2"}\n{"id":"aaaaaaaa1"}\n'
    with pytest.raises(merge.Unmergeable, match="not JSON"):
        merge.merge("intake/alice/2026-01-01.jsonl", b"", b"{oops\n", b'{"id":"b"}\n')


def test_unparseable_input_leaves_gits_conflict_and_exits_non_zero(tmp_path: Path) -> None:
    base, ours, theirs = tmp_path / "O", tmp_path / "A", tmp_path / "B"
    base.write_bytes(b'{"id":"aaaaaaaa1"}\n')
    ours.write_bytes(b'{"id":"aaaaaaaa1"}\n{not json\n')
    theirs.write_bytes(b'{"id":"aaaaaaaa1"}\n{"id":"bbbbbbbb2"}\n')
    result = memstack("merge-driver", str(base), str(ours), str(theirs), "intake/alice/2026-01-01.jsonl",
                      cwd=tmp_path)
    assert result.returncode == 1 and "not JSON" in result.stderr
    text = ours.read_text()
    assert "<<<<<<< ours" in text and "{not json" in text and '{"id":"bbbbbbbb2"}' in text


def test_derived_files_keep_ours() -> None:
    assert merge.merge("willow.md", b"base\n", b"ours\n", b"theirs\n").data == b"ours\n"


@given(st.lists(st.sampled_from(["a", "b", "both"]), min_size=1, max_size=12), st.randoms(use_true_random=False))
@settings(max_examples=60, deadline=None)
def test_log_merge_keeps_every_record_once_ours_first(who: list[str], rnd: random.Random) -> None:
    base = b"".join(line({"id": f"base-{n:04d}"}) for n in range(rnd.randint(0, 3)))
    ours, theirs = base, base
    for n, side in enumerate(who):
        record = line({"id": f"rec-{n:04d}", "by": side})
        if side in ("a", "both"):
            ours += record
        if side in ("b", "both"):
            theirs += record
    merged = merge.merge("kb/promotions/a/2026-01-01.jsonl", base, ours, theirs).data
    ids = [json.loads(x)["id"] for x in merged.splitlines()]
    assert len(ids) == len(set(ids))
    assert set(ids) == {json.loads(x)["id"] for x in (ours + theirs).splitlines()}
    assert merged.startswith(ours)


@pytest.mark.slow
def test_a_hundred_rounds_of_appends_and_closings_on_two_clones_lose_nothing(clones: tuple[Path, Path]) -> None:
    rnd = random.Random(20261130)
    a, b = clones
    written: set[str] = set()
    closings: dict[str, int] = {}
    for round_ in range(100):
        clone, who = (a, "a") if round_ % 2 == 0 else (b, "b")
        pulled = git(clone, "pull", "-q", "--no-rebase", "--no-edit", check=False)
        assert pulled.returncode == 0, pulled.stdout + pulled.stderr
        day = clone / "intake/alice/2026-01-01.jsonl"
        for n in range(rnd.randint(1, 3)):
            record = intake.make_record(agent="alice", content=f"{who} round {round_} #{n}",
                                        created_at="2026-01-01T12:00:00Z")
            append(day, line(record))
            written.add(record["id"])
        facts_path = clone / FACTS
        current = [json.loads(x) for x in facts_path.read_text().splitlines()] if facts_path.exists() else []
        # Each clone closes only facts it wrote (one writer per fact), so no closing can conflict.
        open_facts = [f for f in current if f["valid_to"] is None and f["subject"].startswith(f"fact-{who}-")]
        if open_facts and rnd.random() < 0.5:
            victim = rnd.choice(open_facts)
            closings[victim["id"]] = 10_000 + round_
            current = [closed(f, 10_000 + round_) if f["id"] == victim["id"] else f for f in current]
        fid = f"fact-{who}-{round_:03d}"
        current.append(fact(fid, subject=fid))
        facts_path.parent.mkdir(parents=True, exist_ok=True)
        facts_path.write_bytes(b"".join(map(line, current)))
        commit_all(clone, f"round {round_}", verify=False)
        if rnd.random() < 0.7:
            merged = git(clone, "pull", "-q", "--no-rebase", "--no-edit", check=False)
            assert merged.returncode == 0, merged.stdout + merged.stderr
            assert git(clone, "push", "-q", "--no-verify", check=False).returncode == 0
    for clone in (a, b):
        git(clone, "pull", "-q", "--no-rebase", "--no-edit")
        git(clone, "push", "-q", "--no-verify", check=False)
    git(a, "pull", "-q", "--no-rebase", "--no-edit")
    root = git(a, "rev-list", "--max-parents=0", "HEAD").stdout.strip()
    audit = memstack("check", "--range", f"{root}..HEAD", cwd=a)
    assert audit.returncode == 0, audit.stdout + audit.stderr
    for clone in (a, b):
        ids = [json.loads(x)["id"] for x in (clone / "intake/alice/2026-01-01.jsonl").read_text().splitlines()]
        assert len(ids) == len(set(ids)) and set(ids) == written
        facts = {f["id"]: f for f in map(json.loads, (clone / FACTS).read_text().splitlines())}
        assert len(facts) == 100
        assert {fid: f["valid_to"] for fid, f in facts.items() if f["valid_to"] is not None} == closings


def test_textconv_shows_a_closed_fact_as_the_window_that_changed(store: Path) -> None:
    one = fact("fact-one-0000", "deploys")
    append(store / FACTS, line(one))
    commit_all(store, "a fact")
    (store / FACTS).write_bytes(line(closed(one, 1_767_312_000_000)))
    diff = git(store, "diff").stdout
    assert f"-fact {one['id']} [knowledge] deploys | p | o  valid [1970-01-01T00:00:01.000Z, open)" in diff
    assert (f"+fact {one['id']} [knowledge] deploys | p | o  valid [1970-01-01T00:00:01.000Z,"
            " 2026-01-02T00:00:00.000Z)") in diff


def test_two_different_decisions_on_one_record_are_both_kept() -> None:
    """Two people decided one record differently on their own clones: each line is a person's word, so both are
    kept, once each, in either direction (kb/binder.py finds the dispute; promotion acts on neither)."""
    base = b""
    ratify = line({"intake_id": "rec-00000001", "decision": "ratify", "decided_at": 1, "by": "ada"})
    reject = line({"intake_id": "rec-00000001", "decision": "reject", "decided_at": 2, "by": "bob"})
    assert merge.merge("kb/binder.jsonl", base, ratify, reject).data == ratify + reject
    assert merge.merge("kb/binder.jsonl", base, reject, ratify).data == reject + ratify
    assert merge.merge("kb/binder.jsonl", ratify, ratify + reject, reject + ratify).data == ratify + reject
    assert merge.merge("kb/binder.jsonl", base, ratify, ratify).data == ratify  # the same decision: once
    routed = line({"intake_id": "rec-00000001", "agent": "a", "sub_tier": "binder", "fact_id": None,
                   "promoted_at": 1})
    promoted = line({"intake_id": "rec-00000001", "agent": "a", "sub_tier": "knowledge", "fact_id": "f",
                     "promoted_at": 2})
    assert merge.merge("kb/promotions/a/2026-01-01.jsonl", routed, routed + promoted, routed).data == routed + promoted


def test_two_promotions_of_one_record_that_differ_are_both_kept_in_either_direction() -> None:
    """One clone found the record a duplicate of a fact only it held, the other made its own fact (or
    both promoted it before promotion was derived, at two wall-clock times): each ledger line says what
    one clone did, so both are kept, once each, and every line of each side survives (I1)."""
    routed = line({"intake_id": "rec-00000001", "agent": "a", "sub_tier": "knowledge", "fact_id": "f-own",
                   "promoted_at": 5, "via": "rules"})
    duplicate = line({"intake_id": "rec-00000001", "agent": "a", "sub_tier": "knowledge", "fact_id": "f-theirs",
                      "promoted_at": 5, "via": "rules"})
    other = line({"intake_id": "rec-00000002", "agent": "a", "sub_tier": "binder", "fact_id": None,
                  "promoted_at": 6, "via": "rules"})
    base = other
    assert merge.merge("kb/promotions.jsonl", base, base + routed, base + duplicate).data == base + routed + duplicate
    assert merge.merge("kb/promotions.jsonl", base, base + duplicate, base + routed).data == base + duplicate + routed
    again = merge.merge("kb/promotions.jsonl", base + routed, base + routed + duplicate, base + routed + duplicate)
    assert again.data == base + routed + duplicate  # met again: nothing added twice
    with pytest.raises(merge.Unmergeable, match="differs"):  # an intake record is still one record per id
        merge.merge("intake/a/2026-01-01.jsonl", b"", line({"id": "rec-00000001", "content": "x"}),
                    line({"id": "rec-00000001", "content": "y"}))


def test_a_record_in_the_shared_prefix_of_one_side_is_not_added_twice() -> None:
    one, two, x, y = (line({"id": f"rec-0000000{n}"}) for n in range(4))
    result = merge.merge("intake/alice/2026-01-01.jsonl", one + two, two + one + x, two + one + y)
    ids = [json.loads(r)["id"] for r in result.data.splitlines()]
    assert sorted(ids) == sorted(set(ids)) and len(ids) == 4


def test_a_fact_file_holding_one_id_twice_is_left_to_git() -> None:
    one = fact("fact-one-0000")
    with pytest.raises(merge.Unmergeable, match="twice"):
        merge.merge(FACTS, line(one), line(closed(one, 5000)) + line(closed(one, 6000)), line(one))


def test_textconv_shows_a_malformed_record_as_it_is(tmp_path: Path) -> None:
    odd = tmp_path / "odd.jsonl"
    odd.write_text('{"content": "x", "tier": "observed", "tags": 5}\n'
                   '{"predicate": "p", "valid_from": -1000000000000000000}\n')
    result = memstack("textconv", str(odd))
    assert result.returncode == 0, result.stderr
    assert result.stdout == odd.read_text()
