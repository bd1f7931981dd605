"""Another clone after an excise: `memstack sync` moves its own commits onto the rewritten history and purges
the old one; the old history cannot be pushed back (hooks/pre-receive names the receipt). Real clones of a
real bare remote guarded by hooks/pre-receive."""

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from helpers import git, memstack
from team_support import clone, guarded_remote

DAY = "2026-03-02T10:00:00Z"
SECRET = "Ada's phone is 555-0199"


def ok(repo: Path, *args: str) -> dict:
    result = memstack(*args, "--json", cwd=repo)
    assert result.returncode == 0, result.stdout + result.stderr
    return json.loads(result.stdout) if result.stdout.strip() else {}


def head(repo: Path, rev: str = "HEAD") -> str:
    return git(repo, "rev-parse", rev).stdout.strip()


def commit(repo: Path, message: str) -> None:
    git(repo, "add", "-A")
    done = git(repo, "commit", "-q", "-m", message, check=False)
    assert done.returncode == 0, done.stdout + done.stderr


def every_object(repo: Path) -> bytes:
    """The bytes of every object reachable from any ref (reflogs and the index aside)."""
    listed = git(repo, "rev-list", "--all", "--objects").stdout
    names = "".join(line.split(" ", 1)[0] + "\n" for line in listed.splitlines())
    return subprocess.run(["git", "cat-file", "--batch"], cwd=repo, input=names.encode(), capture_output=True,
                          check=True).stdout


def everything_on_disk(repo: Path) -> bytes:
    """Every file of the clone, .git and .memstack included (loose objects and packs are zlib-compressed:
    `every_object` reads those)."""
    return b"".join(p.read_bytes() for p in repo.rglob("*") if p.is_file() and "objects" not in p.parts)


def filter_repo(repo: Path, *args: str) -> None:
    tool = shutil.which("git-filter-repo", path=os.path.dirname(sys.executable)) or shutil.which("git-filter-repo")
    if tool is None:
        pytest.skip("git-filter-repo is not installed")
    done = subprocess.run([tool, "--force", *args], cwd=repo, capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr


def rewrite(alice: Path, remote: Path, receipt: dict | None) -> str:
    """What an excise does to the history: every commit's secret replaced, a receipt committed on top, the
    branch force-pushed (the server's hook set aside: its acceptance of a receipt is tested elsewhere)."""
    old = head(alice)
    expressions = alice.parent / "expressions.txt"
    expressions.write_text(f"{SECRET}==>[excised]\n")
    filter_repo(alice, "--replace-text", str(expressions))
    new = head(alice)
    if receipt is not None:
        receipt["heads"] = {"refs/heads/main": {"old": old, "new": new}}
        with (alice / "kb/erasures.jsonl").open("a") as handle:
            handle.write(json.dumps(receipt, sort_keys=True) + "\n")
        git(alice, "add", "kb/erasures.jsonl")
        git(alice, "commit", "-q", "--no-verify", "-m", "memstack excise: erasure receipt")
    git(alice, "remote", "add", "origin", str(remote), check=False)
    hook = remote / "hooks/pre-receive"
    hook.rename(hook.with_name("pre-receive.aside"))
    try:
        pushed = git(alice, "push", "-q", "--force", "--no-verify", "origin", "HEAD:refs/heads/main", check=False)
    finally:
        hook.with_name("pre-receive.aside").rename(hook)
    assert pushed.returncode == 0, pushed.stderr
    return old


@pytest.fixture
def team(store: Path, tmp_path: Path) -> tuple[Path, Path, Path, str]:
    """alice and bob, each a clone of one guarded remote; bob's intake record holding SECRET is on the
    remote and in both clones (bob searched for it, so his search index holds it too). Returns (remote,
    alice, bob, the record's id)."""
    remote = guarded_remote(store, tmp_path)
    alice, bob = clone(remote, tmp_path / "alice"), clone(remote, tmp_path / "bob")
    record = ok(alice, "intake", "write", "--agent", "bob", "--content", SECRET, "--created-at", DAY)["record"]
    ok(alice, "sync")
    ok(bob, "sync")
    assert SECRET in (bob / "intake/bob/2026-03-02.jsonl").read_text()
    assert ok(bob, "search", "phone")["hits"]
    return remote, alice, bob, record["id"]


def test_bob_syncs_after_alice_excised_and_nothing_of_it_is_left(team: tuple[Path, Path, Path, str]) -> None:
    remote, alice, bob, record_id = team
    # bob's own memory, not pushed: a record in the very file the excised record is in, committed; a fact
    # captured and left uncommitted
    mine = ok(bob, "intake", "write", "--agent", "bob", "--content", "the deploy runs at noon",
              "--created-at", "2026-03-02T11:00:00Z")["record"]
    commit(bob, "bob's own record")
    ok(bob, "capture", "--agent", "bob", "--subject", "deploy", "--predicate", "runs", "--object", "at noon",
       "--valid-from", DAY, "--recorded-at", "2026-03-02T11:00:00Z")
    ok(alice, "forget", record_id, "--reason", "a person's phone number")
    commit(alice, "forget a phone number")
    old = rewrite(alice, remote, {"id": "e1", "by": "Grace Hopper", "reason": "a person's phone number",
                                  "excised_at": 1772452800000, "records": [record_id]})

    # bob's old history cannot go back to the remote, force-pushed or under another name
    for refspec in ("+HEAD:refs/heads/main", "HEAD:refs/heads/bob-old"):
        pushed = git(bob, "push", "--no-verify", "origin", refspec, check=False)
        assert pushed.returncode != 0, pushed.stderr
        assert "erasure receipt e1 (by Grace Hopper, 2026-03-02T12:00:00.000Z)" in pushed.stderr, pushed.stderr
        assert "memstack sync" in pushed.stderr
    assert git(remote, "rev-parse", "-q", "--verify", "refs/heads/bob-old", check=False).returncode != 0

    said = memstack("sync", cwd=bob)
    assert said.returncode == 0, said.stderr
    assert "rewritten by an excise (erasure receipt e1): moved 2 commits of this clone onto it" in said.stdout
    assert "purged here" in said.stdout
    # bob's memory reached the remote, on top of the rewritten history
    assert head(remote, "main") == head(bob)
    assert git(remote, "merge-base", "--is-ancestor", head(alice), "main").returncode == 0
    on_remote = git(remote, "show", "main:intake/bob/2026-03-02.jsonl").stdout
    assert mine["id"] in on_remote and "[excised]" in on_remote and SECRET not in on_remote
    assert "at noon" in git(remote, "show", "main:kb/knowledge/bob/2026-03.json").stdout
    # no byte of it in bob's clone: not in any object reachable from a ref, not in .git's other files, not in
    # the work tree or .memstack/ (the search index was dropped, and rebuilds without it)
    assert git(bob, "cat-file", "-e", old, check=False).returncode != 0
    assert SECRET.encode() not in every_object(bob)
    assert SECRET.encode() not in everything_on_disk(bob)
    assert not ok(bob, "search", "555-0199")["hits"]
    assert SECRET.encode() not in everything_on_disk(bob)
    assert memstack("check", "--range", f"{head(alice)}..HEAD", cwd=bob).returncode == 0


def test_a_rewrite_without_a_receipt_is_refused_and_changes_nothing(team: tuple[Path, Path, Path, str]) -> None:
    remote, alice, bob, _ = team
    ok(bob, "intake", "write", "--agent", "bob", "--content", "the deploy runs at noon",
       "--created-at", "2026-03-02T11:00:00Z")
    commit(bob, "bob's own record")
    before, tracked = head(bob), head(bob, "origin/main")
    rewrite(alice, remote, None)
    said = memstack("sync", cwd=bob)
    assert said.returncode == 2
    assert "the remote's history was rewritten without an erasure receipt" in said.stderr, said.stderr
    assert head(bob) == before and head(bob, "origin/main") == tracked
    assert head(remote, "main") == head(alice)
