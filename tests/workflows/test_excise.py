"""`memstack excise`: the content of forgotten records removed from every commit of every branch, a receipt
committed, the clone cleaned; every rewritten commit still passes the store's checks."""

import json
from pathlib import Path

import pytest
from excise_support import (
    DAY,
    INTAKE_TEXT,
    SECRETS,
    SOIL_TEXT,
    THREAD,
    Forgotten,
    commit,
    every_object,
    every_object_any,
    ok,
)

from helpers import git, memstack


def test_excise_removes_every_byte_of_the_forgotten_content_and_every_commit_still_passes_the_checks(
        forgotten: Forgotten) -> None:
    store, names = forgotten
    assert all(text.encode() in every_object(store) for text in SECRETS)
    assert memstack("search", "unrelated", cwd=store).returncode == 0  # the local indexes are built
    assert memstack("fact", "get-valid-at", "--ts", DAY, cwd=store).returncode == 0
    before = git(store, "log", "--format=%an%x00%ae%x00%at%x00%cn%x00%ct%x00%s", "main").stdout.splitlines()
    dry = ok(store, "excise", "--dry-run")
    assert set(dry["records"]) == set(names.values()) and dry["commits"] >= 2 and dry["blobs"] >= 6
    assert git(store, "rev-parse", "main").stdout.strip() == dry["heads_before"]["refs/heads/main"]  # unchanged

    done = ok(store, "excise", "--by", "Grace Hopper", "--reason", "an erasure request")
    receipt = done["receipt"]
    assert set(receipt["records"]) == set(names.values()) and receipt["by"] == "Grace Hopper"
    [(ref, heads)] = receipt["heads"].items()
    assert ref == "refs/heads/main" and heads["old"] == dry["heads_before"]["refs/heads/main"]
    assert git(store, "rev-parse", "main~1").stdout.strip() == heads["new"]  # the receipt's commit on top
    lines = (store / "kb/erasures.jsonl").read_text().splitlines()
    assert [json.loads(line) for line in lines] == [receipt]
    after = git(store, "log", "--format=%an%x00%ae%x00%at%x00%cn%x00%ct%x00%s", "main~1").stdout.splitlines()
    assert after == before  # every commit kept, with its authors, dates and message

    everything = every_object(store) + every_object_any(store)
    assert not [text for text in SECRETS if text.encode() in everything]
    assert b"an unrelated note that stays" in everything and b"visible" in everything
    assert git(store, "status", "--porcelain").stdout == ""
    root = git(store, "rev-list", "--max-parents=0", "HEAD").stdout.strip()
    checked = memstack("check", "--range", f"{root}..HEAD", cwd=store)
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert memstack("rebuild", "--check", cwd=store).returncode == 0
    reviewed = memstack("review", "HEAD~1..HEAD", cwd=store)  # the receipt's commit, as a pull request shows it
    assert f"### Erased from history (1)\n\n- {len(names)} record(s), receipt `{receipt['id']}`: an erasure" \
           " request — by Grace Hopper at " in reviewed.stdout, reviewed.stdout + reviewed.stderr
    record = json.loads((store / "intake/alice/2026-03-02.jsonl").read_text().splitlines()[0])
    assert record["id"] == names["intake"] and record["created_at"].startswith("2026-03-02")
    assert record["content"].startswith("[excised sha256:") and record["keywords"] == []
    salt = (store / ".memstack/excise" / f"{receipt['id']}.salt").read_text().strip()
    assert salt == done["salt"] and salt.encode() not in everything  # the salt is never committed
    local = b"".join(p.read_bytes() for p in (store / ".memstack").rglob("*") if p.is_file())
    assert not [text for text in SECRETS if text.encode() in local]  # the indexes that held it are gone

    again = ok(store, "excise")
    assert again["records"] == [] and git(store, "rev-parse", "HEAD").stdout.strip() == \
        git(store, "rev-parse", "main").stdout.strip()


def test_nothing_forgotten_is_nothing_to_excise(store: Path) -> None:
    head = git(store, "rev-parse", "HEAD").stdout.strip()
    said = memstack("excise", cwd=store)
    assert said.returncode == 0 and "nothing to excise" in said.stdout
    assert git(store, "rev-parse", "HEAD").stdout.strip() == head


def test_excise_refuses_a_dirty_work_tree_in_one_line(forgotten: Forgotten) -> None:
    store, _ = forgotten
    (store / "notes.txt").write_text("not committed\n")
    head = git(store, "rev-parse", "HEAD").stdout.strip()
    said = memstack("excise", cwd=store)
    assert said.returncode == 2 and "uncommitted changes" in said.stderr and len(said.stderr.splitlines()) == 1
    assert git(store, "rev-parse", "HEAD").stdout.strip() == head


def test_excise_refuses_a_reason_that_repeats_what_a_record_it_excises_said(forgotten: Forgotten) -> None:
    """The receipt's reason is committed on top of the cleaned history: it must not carry the content back."""
    store, _ = forgotten
    heads = git(store, "for-each-ref", "--format=%(objectname) %(refname)").stdout
    for reason in (INTAKE_TEXT, f"asked by {INTAKE_TEXT.upper()}", f"the thread '{THREAD}'", f"the {SOIL_TEXT}"):
        for dry in ([], ["--dry-run"]):
            said = memstack("excise", "--reason", reason, *dry, cwd=store)
            assert said.returncode == 2 and len(said.stderr.splitlines()) == 1, (reason, said.stdout + said.stderr)
            assert "repeats the content of a record it excises" in said.stderr and "Traceback" not in said.stderr
            assert git(store, "for-each-ref", "--format=%(objectname) %(refname)").stdout == heads
            assert not (store / "kb/erasures.jsonl").exists()
    assert git(store, "status", "--porcelain").stdout == ""
    done = ok(store, "excise", "--reason", "an erasure request from a customer")
    assert done["receipt"]["reason"] == "an erasure request from a customer"
    assert not [text for text in SECRETS if text.encode() in every_object(store) + every_object_any(store)]


def test_excise_refuses_a_reason_repeating_an_older_value_of_a_soil_record(store: Path) -> None:
    """A SOIL record may change: every value the rewrite removes from history counts, not only the last."""
    ok(store, "soil", "put", "notes", "door", "--value", json.dumps({"code": "Quaxeldoor 4711", "pin": 47112208}))
    commit(store, "a door code")
    ok(store, "soil", "update", "notes", "door", "--value", json.dumps({"code": "changed"}))
    commit(store, "changed")
    ok(store, "forget", "notes/door", "--reason", "a door code")
    commit(store, "forget")
    head = git(store, "rev-parse", "HEAD").stdout.strip()
    for reason in ("the old code Quaxeldoor 4711", "pin 47112208"):  # a number is what the record said too
        said = memstack("excise", "--reason", reason, cwd=store)
        assert said.returncode == 2 and "repeats the content of a record it excises (notes/door)" in said.stderr
    assert git(store, "rev-parse", "HEAD").stdout.strip() == head
    assert ok(store, "excise", "--reason", "a door code")["receipt"]["records"] == ["notes/door"]
    assert b"Quaxeldoor" not in every_object(store) + every_object_any(store)


def test_excise_refuses_while_a_stash_exists_and_drops_the_stashes_only_when_asked(forgotten: Forgotten) -> None:
    store, _ = forgotten
    (store / "notes.txt").write_text("work in progress\n")
    git(store, "add", "notes.txt")
    git(store, "stash", "push", "-q", "-m", "my work")  # made on the old history: it holds the old content
    head = git(store, "rev-parse", "HEAD").stdout.strip()
    said = memstack("excise", cwd=store)
    assert said.returncode == 2 and len(said.stderr.splitlines()) == 1, said.stdout + said.stderr
    assert "1 stash" in said.stderr and "git stash pop" in said.stderr and "--drop-stashes" in said.stderr
    assert git(store, "rev-parse", "HEAD").stdout.strip() == head
    assert "my work" in git(store, "stash", "list").stdout  # nothing lost

    ok(store, "excise", "--drop-stashes")
    assert git(store, "stash", "list").stdout == ""
    assert git(store, "rev-parse", "-q", "--verify", "refs/stash", check=False).returncode != 0
    everything = every_object(store) + every_object_any(store)
    assert not [text for text in SECRETS if text.encode() in everything]


@pytest.mark.parametrize("stage", ["planned", "rewritten", "receipts", "moved", "scratch"])
def test_excise_killed_anywhere_leaves_before_or_after_and_a_rerun_finishes(forgotten: Forgotten, stage: str) -> None:
    store, _ = forgotten
    old = git(store, "rev-parse", "main").stdout.strip()
    killed = memstack("excise", cwd=store, env={"MEMSTACK_EXCISE_KILL_AT": stage})
    assert killed.returncode == -9
    now = git(store, "rev-parse", "main").stdout.strip()
    if now == old:  # as before
        assert stage in ("planned", "rewritten", "receipts")
    else:  # as after: the receipt on top
        assert stage in ("moved", "scratch")
        assert git(store, "cat-file", "-e", "main:kb/erasures.jsonl", check=False).returncode == 0
    done = ok(store, "excise")
    assert done.get("resumed") is True
    assert not [text for text in SECRETS if text.encode() in every_object(store) + every_object_any(store)]
    assert git(store, "status", "--porcelain").stdout == ""
    assert len((store / "kb/erasures.jsonl").read_text().splitlines()) == 1


def test_every_local_branch_is_rewritten_and_carries_the_same_receipt(forgotten: Forgotten) -> None:
    store, names = forgotten
    git(store, "checkout", "-q", "-b", "side")
    ok(store, "soil", "put", "notes", "side", "--value", json.dumps({"on": "the side branch"}))
    commit(store, "side work")
    git(store, "checkout", "-q", "main")
    git(store, "branch", "-q", "untouched", "HEAD~3")  # the first commit only: nothing to rewrite there
    before = {b: git(store, "rev-parse", b).stdout.strip() for b in ("main", "side", "untouched")}
    receipt = ok(store, "excise")["receipt"]
    assert set(receipt["heads"]) == {"refs/heads/main", "refs/heads/side"}
    assert set(receipt["records"]) == set(names.values())
    for branch in ("main", "side"):
        assert receipt["heads"][f"refs/heads/{branch}"]["old"] == before[branch]
        assert git(store, "rev-parse", f"{branch}~1").stdout.strip() == \
            receipt["heads"][f"refs/heads/{branch}"]["new"]
        shown = git(store, "show", f"{branch}:kb/erasures.jsonl").stdout
        assert [json.loads(line) for line in shown.splitlines()] == [receipt]
        checked = memstack("check", "--range", branch, cwd=store)
        assert checked.returncode == 0, checked.stdout + checked.stderr
    assert git(store, "rev-parse", "untouched").stdout.strip() == before["untouched"]
    assert git(store, "show", "side:store/notes/side.json").returncode == 0
    assert not [text for text in SECRETS if text.encode() in every_object(store) + every_object_any(store)]


def test_a_tag_a_detached_head_or_another_work_tree_on_the_old_history_is_named_and_nothing_changes(
        forgotten: Forgotten, tmp_path: Path) -> None:
    store, _ = forgotten
    git(store, "tag", "v1", "HEAD~1")
    head = git(store, "rev-parse", "HEAD").stdout.strip()
    said = memstack("excise", cwd=store)
    assert said.returncode == 2 and "refs/tags/v1" in said.stderr, said.stderr
    git(store, "tag", "-d", "v1")
    git(store, "checkout", "-q", "--detach", "HEAD~1")
    said = memstack("excise", cwd=store)
    assert said.returncode == 2 and "HEAD is detached" in said.stderr, said.stderr
    git(store, "checkout", "-q", "main")
    git(store, "worktree", "add", "-q", str(tmp_path / "other"), "-b", "other")
    said = memstack("excise", cwd=store)
    assert said.returncode == 2 and "another work tree" in said.stderr, said.stderr
    assert git(store, "rev-parse", "main").stdout.strip() == head
    assert not (store / ".memstack/excise").exists() or not list((store / ".memstack/excise").iterdir())


def test_excise_refuses_a_branch_its_upstream_does_not_hold_and_changes_nothing(forgotten: Forgotten,
                                                                                tmp_path: Path) -> None:
    """The receipt names the head it replaces and a guarded remote takes the rewrite only over that head:
    excised with a commit not pushed (or not pulled), the rewrite could never be pushed, and the old
    commits would be pruned. So a branch that differs from its upstream is refused before anything is
    written, dry run or not; once the two agree the excise runs."""
    store, _ = forgotten
    branch = git(store, "symbolic-ref", "--short", "HEAD").stdout.strip()
    remote = tmp_path / "remote.git"
    git(tmp_path, "clone", "-q", "--bare", str(store), str(remote))
    git(store, "remote", "add", "origin", str(remote))
    git(store, "fetch", "-q", "origin")
    git(store, "branch", "-q", f"--set-upstream-to=origin/{branch}")
    ok(store, "intake", "write", "--content", "written after the forget", "--created-at", DAY)
    head = commit(store, "not pushed")
    for args in ((), ("--dry-run",)):
        said = memstack("excise", *args, cwd=store)
        assert said.returncode == 2, said.stdout + said.stderr
        assert f"{branch} is ahead 1 of origin/{branch}" in said.stderr and "`git push`" in said.stderr
    assert git(store, "rev-parse", "HEAD").stdout.strip() == head
    gitdir = Path(git(store, "rev-parse", "--absolute-git-dir").stdout.strip())
    assert not (gitdir / "memstack-excise.json").exists()
    git(store, "push", "-q", "--no-verify", "origin", branch)
    git(store, "reset", "-q", "--hard", "HEAD~1")  # the remote holds a commit this clone has not pulled
    said = memstack("excise", cwd=store)
    assert said.returncode == 2 and f"{branch} is behind 1 of origin/{branch}" in said.stderr, said.stderr
    git(store, "merge", "-q", "--ff-only", f"origin/{branch}")
    git(store, "update-ref", "-d", f"refs/remotes/origin/{branch}")  # not fetched: what the remote holds is unknown
    said = memstack("excise", cwd=store)
    assert said.returncode == 2 and "is not in this clone" in said.stderr and "`git fetch`" in said.stderr, said.stderr
    git(store, "fetch", "-q", "origin")
    # A branch that tracks a local branch pushes nowhere: ahead of it is no reason to refuse.
    git(store, "checkout", "-q", "-b", "feature", "--track", branch)
    ok(store, "intake", "write", "--content", "a feature's note", "--created-at", DAY)
    feature = commit(store, "on a local branch")
    git(store, "checkout", "-q", branch)
    done = ok(store, "excise", "--reason", "erasure request")
    assert sorted(done["push"]) == sorted([
        f"git push --force-with-lease=refs/heads/{branch}:{head} <remote> refs/heads/{branch}",
        "git push --force-with-lease=refs/heads/feature: <remote> refs/heads/feature"])  # the remote has none
    assert feature  # its old head, which the remote never had, would be refused as stale: run as printed
    pushed = git(store, "push", "-q", "--no-verify", "--force-with-lease=refs/heads/feature:", "origin",
                 "refs/heads/feature", check=False)
    assert pushed.returncode == 0, pushed.stderr
