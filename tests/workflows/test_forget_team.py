"""Forgetting in a team: one clone forgets a record while another promotes it or closes its fact, then both
sync through a guarded remote (docs/forgetting.md, docs/merge.md). Real clones, real hooks, real merges."""

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from helpers import git, memstack
from team_support import check_history, clone, guarded_remote, ok, pushed

DAY = "2026-11-02T10:00:00Z"
GONE = "[forgotten: personal data]"



def synced(repo: Path) -> Any:
    return ok(repo, "sync")


@pytest.fixture(scope="module")
def _team(tmp_path_factory: pytest.TempPathFactory, _store_template: Path) -> Path:
    """The store pushed to a guarded remote and cloned by alice and bob (`memstack install` in each), made once
    for the module: a folder holding store, remote.git, alice and bob."""
    origin = tmp_path_factory.mktemp("team")
    shutil.copytree(_store_template, origin / "store", symlinks=True)
    remote = guarded_remote(origin / "store", origin)
    clone(remote, origin / "alice"), clone(remote, origin / "bob")
    return origin


@pytest.fixture(scope="module")
def _forgotten(tmp_path_factory: pytest.TempPathFactory, _team: Path) -> tuple[Path, str, dict[str, Any]]:
    """`_team` after alice wrote a record, promoted it, both synced, and alice forgot it (not yet synced): the
    folder, the record's id and its fact, made once for the module."""
    origin = tmp_path_factory.mktemp("forgotten")
    alice, bob = copied(_team, origin)
    record = written(alice, "Ada phone 555-0199", "ada", "555-0199")
    assert memstack("promote", cwd=alice).returncode == 0
    synced(alice), synced(bob)
    [fact] = ok(alice, "fact", "history", "--subject", "ada")["items"]
    ok(alice, "forget", record, "--reason", "personal data", "--by", "Alice")
    return origin, record, fact


def copied(made: Path, tmp: Path) -> tuple[Path, Path]:
    """A copy of a module's team folder in `tmp`, each clone's origin the copied remote: alice, bob."""
    shutil.copytree(made, tmp, symlinks=True, dirs_exist_ok=True)
    for name in ("store", "alice", "bob"):
        git(tmp / name, "remote", "set-url", "origin", str(tmp / "remote.git"))
    return tmp / "alice", tmp / "bob"


def written(repo: Path, content: str, subject: str, obj: str) -> str:
    """An intake record of alice's that the rules route to a knowledge fact; its id."""
    return str(ok(repo, "intake", "write", "--agent", "alice", "--content", content, "--subject", subject,
                  "--predicate", "decided", "--object", obj, "--tier", "verified", "--confidence", "0.9",
                  "--created-at", DAY)["record"]["id"])


def committed_holding(repo: Path, text: str) -> list[str]:
    """The files of HEAD's tree outside the sources (intake, facts, ledger) that hold `text`: the derived ones."""
    found = git(repo, "grep", "-l", "-F", text, "HEAD", "--", ".", ":!intake", ":!kb/facts", ":!kb/promotions",
                check=False).stdout.split()
    return [name.partition(":")[2] for name in found]


def test_a_fact_promoted_in_another_clone_while_its_record_was_forgotten_is_forgotten_with_it(
        _team: Path, tmp_path: Path) -> None:
    alice, bob = copied(_team, tmp_path)
    record = written(alice, "Bob lives at 12 Elm St", "bob-home", "12 Elm St")
    synced(alice), synced(bob)
    ok(alice, "forget", record, "--reason", "personal data", "--by", "Alice")  # alice forgets the pending record
    assert memstack("promote", cwd=bob).returncode == 0  # bob, meanwhile, promotes it
    [fact] = ok(bob, "fact", "history", "--subject", "bob-home")["items"]
    synced(alice), synced(bob), synced(alice)
    assert git(alice, "rev-parse", "HEAD").stdout == git(bob, "rev-parse", "HEAD").stdout
    for repo in (alice, bob):
        assert ok(repo, "recall", "--subject", "bob-home")["items"] == []
        assert ok(repo, "fact", "history", "--subject", "bob-home")["items"] == []
        hits = ok(repo, "search", "Elm")["hits"]
        assert all("Elm" not in json.dumps(hit) for hit in hits), hits
        shown = memstack("fact", "get-valid-at", "--ts", "now", "--as-of", "2026-11-03T00:00:00Z", cwd=repo).stdout
        assert "Elm" not in shown and fact["id"] in shown and GONE in shown
        listed = memstack("intake", "list", cwd=repo).stdout
        assert "Elm" not in listed and GONE in listed
        exported = memstack("export", "jsonl", cwd=repo)
        assert exported.returncode == 0 and "Elm" not in exported.stdout, exported.stderr
        assert "Elm" not in memstack("boot", "show", "--agent", "alice", cwd=repo).stdout
        assert committed_holding(repo, "Elm") == []  # no view, boot file or willow.md holds it
        closed = [json.loads(line) for line in (repo / "kb/facts/alice/2026-11.jsonl").read_text().splitlines()]
        assert [f["valid_to"] is not None for f in closed if f["id"] == fact["id"]] == [True]  # closed, as forget does
        assert memstack("check", "--all", cwd=repo).returncode == 0
        check_history(repo)
        status = memstack("status", cwd=repo)
        assert status.returncode == 0 and "Elm" not in status.stdout
        listed = memstack("binder", "list", cwd=repo)
        assert listed.returncode == 0 and "Elm" not in listed.stdout
    dry = ok(alice, "excise", "--dry-run")
    assert set(dry["records"]) == {record, fact["id"]}  # the fact's copy of the content goes with the record
    receipt = ok(alice, "excise", "--by", "Alice", "--reason", "an erasure request")["receipt"]
    old = receipt["heads"]["refs/heads/main"]["old"]
    done = git(alice, "push", "-q", "--no-verify", f"--force-with-lease=refs/heads/main:{old}", "origin",
               "refs/heads/main", check=False)
    assert done.returncode == 0, done.stderr  # the server's hook accepts the receipt naming the fact
    every = git(alice, "log", "-p", "--all", "--format=").stdout
    assert "Elm" not in every, "an excised record's content is left in alice's history"


def test_a_clone_that_holds_the_tombstone_does_not_promote_the_forgotten_record(_team: Path, tmp_path: Path) -> None:
    alice, bob = copied(_team, tmp_path)
    record = written(alice, "Bob lives at 12 Elm St", "bob-home", "12 Elm St")
    synced(alice), synced(bob)
    ok(alice, "forget", record, "--reason", "personal data", "--by", "Alice")
    synced(alice), synced(bob)
    assert memstack("promote", cwd=bob).returncode == 0
    assert ok(bob, "fact", "history", "--subject", "bob-home")["items"] == []
    assert not [line for line in (bob / "kb/facts").rglob("*.jsonl") if "Elm" in line.read_text()]
    pushed(bob)


@pytest.mark.parametrize("way", ["bob sync", "alice pull --no-rebase", "alice pull --rebase", "bob pull --rebase"])
def test_a_fact_forgotten_in_one_clone_and_superseded_in_another_merges_and_passes_every_gate(
        _forgotten: tuple[Path, str, dict[str, Any]], tmp_path: Path, way: str) -> None:
    """alice forgets a promoted record (its fact closed, no successor) while bob supersedes the fact
    (`capture --contradicts`: closed with a successor): the successor's closing is kept, the forget's is what the
    tombstone says (docs/merge.md). The other pushed first; then `bob sync` merges alice's forget; `alice pull`
    brings her unpushed forget onto bob's closing with git alone (a merge, a rebase); `bob pull --rebase`
    replays bob's closing onto alice's forget. (The steps up to alice's forget: `_forgotten`.)"""
    made, _, fact = _forgotten
    alice, bob = copied(made, tmp_path)
    new, *_ = ok(bob, "capture", "--agent", "bob", "--subject", "ada", "--predicate", "decided", "--object",
                 "555-0100", "--contradicts")
    who, _, how = way.partition(" ")
    puller, first = (alice, bob) if who == "alice" else (bob, alice)
    synced(first)
    if how == "sync":
        synced(puller)
    else:
        git(puller, "add", "-A")
        git(puller, "commit", "-q", "-m", "forget a phone number" if who == "alice" else "a new phone number")
        pulled = git(puller, *how.split(), "-q", "origin", "main", check=False)
        assert pulled.returncode == 0, pulled.stdout + pulled.stderr
        pushed(puller)
    synced(alice), synced(bob), synced(alice)
    assert git(alice, "rev-parse", "HEAD").stdout == git(bob, "rev-parse", "HEAD").stdout
    for repo in (alice, bob):
        [line] = [json.loads(raw) for raw in (repo / "kb/facts/alice/2026-11.jsonl").read_text().splitlines()
                  if json.loads(raw)["id"] == fact["id"]]
        assert line["superseded_by"] == new["id"]  # the successor's closing kept; the forget's is the tombstone's
        recalled = ok(repo, "recall", "--subject", "ada")["items"]
        assert [f["object"] for f in recalled] == ["555-0100"]
        shown = memstack("fact", "get-valid-at", "--ts", "2026-11-02T12:00:00Z", cwd=repo).stdout
        assert fact["id"] in shown and GONE in shown and "555-0199" not in shown
        assert committed_holding(repo, "555-0199") == []
        assert memstack("check", "--all", cwd=repo).returncode == 0
        check_history(repo)


def test_the_conflict_an_older_driver_left_resolved_by_keeping_the_successors_closing_passes_every_gate(
        _forgotten: tuple[Path, str, dict[str, Any]], tmp_path: Path) -> None:
    """The way out docs/merge.md gives for a clone whose driver left the conflict: keep the line naming the
    successor. The checks accept it (the tombstone says the other closing); keeping the forget's is refused.
    (The steps up to alice's forget: `_forgotten`.)"""
    alice, bob = copied(_forgotten[0], tmp_path)
    synced(alice)
    ok(bob, "capture", "--agent", "bob", "--subject", "ada", "--predicate", "decided", "--object", "555-0100",
       "--contradicts")
    git(bob, "add", "-A")
    git(bob, "commit", "-q", "-m", "capture")
    driver = git(bob, "config", "merge.memstack.driver").stdout.strip()
    git(bob, "config", "merge.memstack.driver", "false")  # a driver that resolves nothing
    assert git(bob, "pull", "-q", "--no-rebase", "origin", "main", check=False).returncode != 0
    git(bob, "config", "merge.memstack.driver", driver)
    facts = "kb/facts/alice/2026-11.jsonl"
    git(bob, "checkout", "--theirs", facts)  # the forget's closing: the successor chain dropped
    git(bob, "add", "-A")
    refused = git(bob, "commit", "-q", "-m", "keep the forget's closing", check=False)
    assert refused.returncode != 0 and " I2 " in refused.stdout + refused.stderr
    git(bob, "checkout", "HEAD", "--", facts)  # ours: the successor's closing
    git(bob, "add", "-A")
    done = git(bob, "commit", "-q", "-m", "keep the successor's closing", check=False)
    assert done.returncode == 0, done.stdout + done.stderr
    pushed(bob)  # through bob's pre-push and the remote's pre-receive
    check_history(bob)
