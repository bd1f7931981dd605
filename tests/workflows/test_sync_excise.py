"""Another clone after an excise: `memstack sync` moves its own commits onto the rewritten history and purges
the old one; the old history cannot be pushed back (hooks/pre-receive names the receipt). Real clones of a
real bare remote guarded by hooks/pre-receive."""

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from helpers import git, memstack
from memstack.base.times import iso
from team_support import clone, guarded_remote, ok

DAY = "2026-03-02T10:00:00Z"
SECRET = "Ada's phone is 555-0199"



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


def excise(alice: Path) -> dict:
    """`memstack excise` in alice's clone, then the push it prints (accepted by the server's hook)."""
    receipt = ok(alice, "excise", "--by", "Grace Hopper", "--reason", "an erasure request")["receipt"]
    old = receipt["heads"]["refs/heads/main"]["old"]
    pushed = git(alice, "push", "-q", "--no-verify", f"--force-with-lease=refs/heads/main:{old}", "origin",
                 "refs/heads/main", check=False)
    assert pushed.returncode == 0, pushed.stderr
    return receipt


def rewrite_without_receipt(alice: Path, remote: Path) -> None:
    """History rewritten by hand (git filter-repo, no receipt) and force-pushed past the server's hook (set
    aside: it refuses such a push): what a remote without the hook may hold."""
    tool = shutil.which("git-filter-repo", path=os.path.dirname(sys.executable)) or shutil.which("git-filter-repo")
    assert tool, "git-filter-repo is installed with memstack"
    expressions = alice.parent / "expressions.txt"
    expressions.write_text(f"{SECRET}==>[gone]\n")
    done = subprocess.run([tool, "--force", "--replace-text", str(expressions)], cwd=alice, capture_output=True,
                          text=True)
    assert done.returncode == 0, done.stdout + done.stderr
    git(alice, "remote", "add", "origin", str(remote), check=False)
    hook = remote / "hooks/pre-receive"
    hook.rename(hook.with_name("pre-receive.aside"))
    try:
        pushed = git(alice, "push", "-q", "--force", "--no-verify", "origin", "HEAD:refs/heads/main", check=False)
    finally:
        hook.with_name("pre-receive.aside").rename(hook)
    assert pushed.returncode == 0, pushed.stderr


@pytest.fixture(scope="module")
def _team(_store_template: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """The folder of `team`, made once for the module (`store`, `remote.git`, `alice`, `bob`), and the id of
    bob's record holding SECRET."""
    folder = tmp_path_factory.mktemp("team")
    store = folder / "store"
    shutil.copytree(_store_template, store, symlinks=True)
    remote = guarded_remote(store, folder)
    alice, bob = clone(remote, folder / "alice"), clone(remote, folder / "bob")
    record = ok(alice, "intake", "write", "--agent", "bob", "--content", SECRET, "--created-at", DAY)["record"]
    ok(alice, "sync")
    ok(bob, "sync")
    assert SECRET in (bob / "intake/bob/2026-03-02.jsonl").read_text()
    assert ok(bob, "search", "phone")["hits"]
    return folder, record["id"]


@pytest.fixture
def team(_team: tuple[Path, str], tmp_path: Path) -> tuple[Path, Path, Path, str]:
    """alice and bob, each a clone of one guarded remote; bob's intake record holding SECRET is on the
    remote and in both clones (bob searched for it, so his search index holds it too; a sync after an excise
    drops the indexes of .memstack/ by path, whether a copy's inodes left them current or not): a copy of
    `_team`. Returns (remote, alice, bob, the record's id)."""
    folder, record_id = _team
    shutil.copytree(folder, tmp_path, symlinks=True, dirs_exist_ok=True)
    remote = tmp_path / "remote.git"
    for repo in ("store", "alice", "bob"):
        git(tmp_path / repo, "remote", "set-url", "origin", str(remote))
    assert SECRET.encode() in everything_on_disk(tmp_path / "bob")
    return remote, tmp_path / "alice", tmp_path / "bob", record_id


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
    ok(alice, "sync")  # the tombstone on the remote; bob does not sync
    receipt = excise(alice)
    named = f"erasure receipt {receipt['id']} (by Grace Hopper, {iso(receipt['excised_at'])})"

    # bob's old history cannot go back to the remote, force-pushed or under another name: found by its commits
    # (the server still has the old head), then, after the server's clean-up, by the lines it adds
    for refspec in ("+HEAD:refs/heads/main", "HEAD:refs/heads/bob-old"):
        if refspec.endswith("bob-old"):
            git(remote, "reflog", "expire", "--expire=now", "--all")
            git(remote, "gc", "-q", "--prune=now")
            assert git(remote, "cat-file", "-e", receipt["heads"]["refs/heads/main"]["old"], check=False).returncode
        pushed = git(bob, "push", "--no-verify", "origin", refspec, check=False)
        assert pushed.returncode != 0, pushed.stderr
        assert named in pushed.stderr, pushed.stderr
        assert "memstack sync" in pushed.stderr
    assert git(remote, "rev-parse", "-q", "--verify", "refs/heads/bob-old", check=False).returncode != 0

    own_old = head(bob)
    said = memstack("sync", cwd=bob)
    assert said.returncode == 0, said.stderr
    assert f"rewritten by an excise (erasure receipt {receipt['id']}): moved 2 commits of this clone onto it" \
        in said.stdout
    assert "purged here" in said.stdout
    # bob's memory reached the remote, on top of the rewritten history
    assert head(remote, "main") == head(bob)
    assert git(remote, "merge-base", "--is-ancestor", head(alice), "main").returncode == 0
    on_remote = git(remote, "show", "main:intake/bob/2026-03-02.jsonl").stdout
    assert mine["id"] in on_remote and "[excised sha256:" in on_remote and SECRET not in on_remote
    assert "at noon" in git(remote, "show", "main:kb/knowledge/bob/2026-03.json").stdout
    # no byte of it in bob's clone: not in any object reachable from a ref, not in .git's other files, not in
    # the work tree or .memstack/ (the search index was dropped, and rebuilds without it)
    assert git(bob, "cat-file", "-e", own_old, check=False).returncode != 0  # bob's old head is gone
    assert SECRET.encode() not in every_object(bob)
    assert SECRET.encode() not in everything_on_disk(bob)
    assert not ok(bob, "search", "555-0199")["hits"]
    assert SECRET.encode() not in everything_on_disk(bob)
    assert memstack("check", "--range", f"{head(alice)}..HEAD", cwd=bob).returncode == 0
    # and, after the server's documented clean-up, none on the remote nor in alice's clone
    git(remote, "reflog", "expire", "--expire=now", "--all")
    git(remote, "gc", "-q", "--prune=now")
    assert SECRET.encode() not in every_object(remote) and SECRET.encode() not in every_object(alice)


def test_bob_syncs_after_fetching_the_rewrite_by_hand(team: tuple[Path, Path, Path, str]) -> None:
    """`git fetch` ran first: the remote-tracking branch already holds the rewrite, yet sync recognises it."""
    _, alice, bob, record_id = team
    mine = ok(bob, "intake", "write", "--agent", "bob", "--content", "the deploy runs at noon",
              "--created-at", "2026-03-02T11:00:00Z")["record"]
    commit(bob, "bob's own record")
    ok(alice, "forget", record_id, "--reason", "a person's phone number")
    commit(alice, "forget a phone number")
    ok(alice, "sync")
    receipt = excise(alice)
    git(bob, "fetch", "-q")
    said = memstack("sync", cwd=bob)
    assert said.returncode == 0, said.stderr
    assert f"rewritten by an excise (erasure receipt {receipt['id']})" in said.stdout
    assert git(bob, "merge-base", "--is-ancestor", head(alice), "HEAD").returncode == 0
    assert mine["id"] in git(bob, "show", "origin/main:intake/bob/2026-03-02.jsonl").stdout
    assert SECRET.encode() not in every_object(bob)


def test_a_rewrite_without_a_receipt_is_refused_and_changes_nothing(team: tuple[Path, Path, Path, str]) -> None:
    remote, alice, bob, _ = team
    ok(bob, "intake", "write", "--agent", "bob", "--content", "the deploy runs at noon",
       "--created-at", "2026-03-02T11:00:00Z")
    commit(bob, "bob's own record")
    before, tracked = head(bob), head(bob, "origin/main")
    rewrite_without_receipt(alice, remote)
    said = memstack("sync", cwd=bob)
    assert said.returncode == 2
    assert "the remote's history was rewritten without an erasure receipt" in said.stderr, said.stderr
    assert head(bob) == before and head(bob, "origin/main") == tracked
    assert head(remote, "main") == head(alice)


def test_a_commit_holding_what_an_excised_record_said_stops_the_sync_and_loses_nothing(
        team: tuple[Path, Path, Path, str]) -> None:
    remote, alice, bob, _ = team
    record = ok(alice, "intake", "write", "--agent", "alice", "--content", "Ada wants calls on 555-0199",
                "--subject", "ada", "--predicate", "prefers", "--object", "calls on 555-0199", "--tier", "verified",
                "--confidence", "0.9", "--created-at", DAY)["record"]
    ok(alice, "sync")
    ok(bob, "sync")
    # bob promotes it (not pushed): his fact holds what it said; alice forgets it, and excises it
    assert memstack("promote", "--now-ts", "2026-03-02T12:00:00Z", cwd=bob).returncode == 0
    ok(alice, "forget", record["id"], "--reason", "a person's phone number")
    commit(alice, "forget a phone number")
    ok(alice, "sync")
    excise(alice)
    before, tracked, on_remote = head(bob), head(bob, "origin/main"), head(remote, "main")
    said = memstack("sync", cwd=bob)
    assert said.returncode == 2, said.stdout
    assert f"writes what the excised record {record['id']} said into kb/facts/" in said.stderr, said.stderr
    assert "your commits stay on this branch, unpushed" in said.stderr
    assert head(bob) == before and head(bob, "origin/main") == tracked and head(remote, "main") == on_remote


def test_sync_in_the_excising_clone_before_its_push_merges_nothing_back(team: tuple[Path, Path, Path, str]) -> None:
    _, alice, _, record_id = team
    ok(alice, "forget", record_id, "--reason", "a person's phone number")
    commit(alice, "forget a phone number")
    ok(alice, "sync")
    receipt = ok(alice, "excise", "--by", "Grace Hopper", "--reason", "an erasure request")["receipt"]
    before = head(alice)
    said = memstack("sync", cwd=alice)  # instead of the push excise printed
    assert said.returncode == 2
    old = receipt["heads"]["refs/heads/main"]["old"]
    assert f"rewritten here by `memstack excise` (erasure receipt {receipt['id']}" in said.stderr, said.stderr
    assert f"git push --force-with-lease=refs/heads/main:{old} origin refs/heads/main" in said.stderr
    assert head(alice) == before and SECRET.encode() not in every_object(alice)
    assert git(alice, "cat-file", "-e", old, check=False).returncode != 0  # fetched, then dropped again
    pushed = git(alice, "push", "-q", "--no-verify", f"--force-with-lease=refs/heads/main:{old}", "origin",
                 "refs/heads/main", check=False)
    assert pushed.returncode == 0, pushed.stderr
    assert ok(alice, "sync")["pushed"] is None
