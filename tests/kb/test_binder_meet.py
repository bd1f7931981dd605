"""Two people decide in the Binder on their own clones, and the clones meet.

Real clones of a bare remote guarded by hooks/pre-receive, commits through the installed pre-commit hook,
pushes through pre-push, `git pull` and `git pull --rebase`, `memstack promote` as a subprocess.
"""

import json
import shutil
from pathlib import Path

import pytest

from check_support import committed
from helpers import git, items, memstack
from team_support import clone, guarded_remote, pushed

pytestmark = pytest.mark.slow


def ok(repo: Path, *args: str) -> str:
    done = memstack(*args, cwd=repo)
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout


def facts_of(repo: Path, intake_id: str) -> list[dict]:
    return [json.loads(raw) for path in sorted((repo / "kb/facts").rglob("*.jsonl"))
            for raw in path.read_text().splitlines() if json.loads(raw).get("intake_id") == intake_id]


def pull(repo: Path, how: str) -> None:
    done = git(repo, "pull", "-q", "--no-edit", f"--{how}", check=False)
    assert done.returncode == 0, done.stdout + done.stderr
    assert git(repo, "status", "--porcelain").stdout == ""


@pytest.fixture(scope="module")
def waiting(tmp_path_factory: pytest.TempPathFactory, _store_template: Path) -> tuple[Path, str]:
    """A store whose Binder queue holds one record, pushed to a guarded remote and cloned by Alice and Bob."""
    origin = tmp_path_factory.mktemp("waiting")
    store = origin / "store"
    shutil.copytree(_store_template, store, symlinks=True)
    record = json.loads(ok(store, "intake", "write", "--json", "--agent", "alice", "--content",
                           "the cache leaks memory"))["record"]["id"]
    ok(store, "promote")
    assert [i["id"] for i in items(json.loads(ok(store, "binder", "list", "--json")))] == [record]
    remote = guarded_remote(store, origin)
    clone(remote, origin / "alice")
    clone(remote, origin / "bob")
    return origin, record


def copied(waiting: tuple[Path, str], tmp: Path) -> tuple[Path, Path, str]:
    """A copy of the remote and the clones, each clone's origin the copied remote: alice, bob, the record."""
    origin, record = waiting
    shutil.copytree(origin, tmp, symlinks=True, dirs_exist_ok=True)
    for name in ("store", "alice", "bob"):
        git(tmp / name, "remote", "set-url", "origin", str(tmp / "remote.git"))
    return tmp / "alice", tmp / "bob", record


def decided_apart(waiting: tuple[Path, str], tmp: Path) -> tuple[Path, Path, str]:
    """Alice ratifies the record and pushes; Bob rejects it on his clone and commits (a copy of the clones)."""
    alice, bob, record = copied(waiting, tmp)
    ok(alice, "binder", "ratify", record, "--by", "Alice")
    committed(alice, "Alice ratifies")
    pushed(alice)
    ok(bob, "binder", "reject", record, "--by", "Bob", "--note", "wrong")
    committed(bob, "Bob rejects")
    return alice, bob, record


@pytest.mark.parametrize("how", ["rebase", "no-rebase"])
def test_two_different_decisions_on_one_record_are_a_dispute_that_promote_leaves_alone(
        waiting: tuple[Path, str], tmp_path: Path, how: str) -> None:
    alice, bob, record = decided_apart(waiting, tmp_path)
    pull(bob, how)  # no conflict: both people's decisions are kept
    decisions = [json.loads(x) for x in (bob / "kb/binder.jsonl").read_text().splitlines()]
    assert sorted((d["by"], d["decision"]) for d in decisions) == [("Alice", "ratify"), ("Bob", "reject")]
    pushed(bob)
    [dispute] = [i for i in items(json.loads(ok(bob, "binder", "list", "--json"))) if i.get("kind") == "dispute"]
    assert dispute["id"] == record
    assert sorted((d["by"], d["decision"]) for d in dispute["decisions"]) == [("Alice", "ratify"), ("Bob", "reject")]
    assert "decided differently" in ok(bob, "binder", "list")
    import jsonschema

    from memstack.mcp.tools_binder import PAGED_WAITING
    jsonschema.validate(json.loads(ok(bob, "binder", "list", "--json", "--limit", "50")), PAGED_WAITING)  # the tool's
    ok(bob, "promote")
    assert facts_of(bob, record) == []  # neither decision acted on while they disagree
    # A person settles it: the next promotion acts on that decision.
    settled = json.loads(ok(bob, "binder", "ratify", record, "--by", "Carol", "--json"))
    assert settled["settles"] == max(d["decided_at"] for d in decisions)
    ok(bob, "promote")
    [made] = facts_of(bob, record)
    assert made["tier"] == "ratified" and made["valid_to"] is None
    assert [i for i in items(json.loads(ok(bob, "binder", "list", "--json"))) if i.get("kind") == "dispute"] == []
    again = memstack("binder", "reject", record, "--by", "Dan", cwd=bob)
    assert again.returncode == 2 and "already ratified" in again.stderr
    committed(bob, "settled") if git(bob, "status", "--porcelain").stdout else None
    pushed(bob)
    pull(alice, "rebase")
    ok(alice, "promote")
    assert facts_of(alice, record) == facts_of(bob, record)


def test_the_same_decision_from_two_people_is_no_dispute(waiting: tuple[Path, str], tmp_path: Path) -> None:
    alice, bob, record = decided_apart(waiting, tmp_path)
    git(bob, "reset", "-q", "--hard", "HEAD^")
    ok(bob, "binder", "ratify", record, "--by", "Bob")
    committed(bob, "Bob ratifies too")
    pull(bob, "no-rebase")
    assert [i for i in items(json.loads(ok(bob, "binder", "list", "--json"))) if i.get("kind") == "dispute"] == []
    ok(bob, "promote")
    [made] = facts_of(bob, record)
    first = min(json.loads(x)["decided_at"] for x in (bob / "kb/binder.jsonl").read_text().splitlines())
    assert made["recorded_at"] == first  # the first ratification, whatever the lines' order


def api_decision(repo: Path, agent: str, obj: str) -> None:
    ok(repo, "intake", "write", "--agent", agent, "--content", f"API on {obj}", "--subject", "api", "--predicate",
       "decided", "--object", obj, "--tier", "verified", "--confidence", "0.9")
    ok(repo, "promote")


def api_dispute(template: Path, tmp_path: Path) -> tuple[Path, Path, dict[str, str]]:
    """Alice's clone promoted `api decided grpc`, Bob's `api decided rest`; they met: a dispute between agents."""
    shutil.copytree(template, tmp_path / "store", symlinks=True)
    remote = guarded_remote(tmp_path / "store", tmp_path)
    alice, bob = clone(remote, tmp_path / "alice"), clone(remote, tmp_path / "bob")
    api_decision(alice, "alice", "grpc")
    api_decision(bob, "bob", "rest")
    pushed(alice)
    pull(bob, "no-rebase")
    pushed(bob)
    pull(alice, "no-rebase")
    [dispute] = [i for i in items(json.loads(ok(alice, "binder", "list", "--json"))) if i.get("kind") == "dispute"]
    return alice, bob, {s["object"]: s["id"] for s in dispute["sides"]}


@pytest.mark.parametrize("how", ["rebase", "no-rebase"])
def test_opposite_ratifications_of_a_dispute_are_refused_not_a_cycle(
        _store_template: Path, tmp_path: Path, how: str) -> None:
    alice, bob, sides = api_dispute(_store_template, tmp_path)
    ok(alice, "binder", "ratify", sides["grpc"], "--by", "Alice")
    committed(alice, "Alice keeps grpc")
    pushed(alice)
    ok(bob, "binder", "ratify", sides["rest"], "--by", "Bob")
    committed(bob, "Bob keeps rest")
    git(bob, "pull", "-q", "--no-edit", f"--{how}", check=False)
    push = git(bob, "push", "-q", "origin", "HEAD", check=False)
    assert push.returncode != 0
    said = push.stdout + push.stderr
    assert "each closed in favour of the other" in said and f"keep the first decision (Alice ratified {sides['grpc']}" \
        in said
    audit = memstack("check", "--all", cwd=bob)
    assert audit.returncode == 1 and "each closed in favour of the other" in audit.stdout


def test_a_settling_decision_overrules_only_the_decisions_it_was_made_against() -> None:
    from memstack.kb import binder

    alice = {"intake_id": "r", "decision": "ratify", "decided_at": 10, "by": "Alice"}
    bob = {"intake_id": "r", "decision": "reject", "decided_at": 20, "by": "Bob"}
    assert binder.verdict([alice]) == "ratify" and binder.verdict([alice, bob]) is None
    assert binder.verdict([bob, alice]) is None  # whatever the order a merge or a hand left them in
    carol = {"intake_id": "r", "decision": "ratify", "decided_at": 30, "by": "Carol", "settles": 20}
    assert binder.verdict([alice, bob, carol]) == "ratify" and binder.in_force([bob, carol, alice]) == [carol]
    # Two people settle it at once, differently, each against the same decisions: still disputed.
    dan = {"intake_id": "r", "decision": "reject", "decided_at": 31, "by": "Dan", "settles": 20}
    assert binder.verdict([alice, bob, carol, dan]) is None
    # A decision made later without seeing the dispute is not overruled by a settlement it did not see.
    late = {"intake_id": "r", "decision": "reject", "decided_at": 40, "by": "Eve"}
    assert binder.verdict([alice, bob, carol, late]) is None
    assert binder.first_in_force([bob, {**alice, "decision": "reject"}])["by"] == "Alice"


def test_blame_credits_each_decision_to_the_commit_that_added_it(waiting: tuple[Path, str], tmp_path: Path) -> None:
    alice, bob, record = decided_apart(waiting, tmp_path)
    pull(bob, "no-rebase")
    blamed = json.loads(ok(bob, "blame", record, "--json"))
    said = {d["record"]["by"]: (d["added"]["message"], d["merge"] and d["merge"]["message"])
            for d in blamed["decisions"]}
    assert said["Bob"] == ("Bob rejects", None)
    assert said["Alice"][0] == "Alice ratifies" and said["Alice"][1].startswith("Merge")


def test_a_record_promoted_before_the_other_decision_arrived_is_closed_when_the_dispute_is_settled_rejected(
        waiting: tuple[Path, str], tmp_path: Path) -> None:
    alice, bob, record = copied(waiting, tmp_path)
    ok(alice, "binder", "ratify", record, "--by", "Alice")
    committed(alice, "Alice ratifies")
    ok(alice, "promote")  # Alice's clone made it knowledge before Bob's decision arrived
    pushed(alice)
    ok(bob, "binder", "reject", record, "--by", "Bob")
    committed(bob, "Bob rejects")
    pull(bob, "no-rebase")
    [made] = facts_of(bob, record)
    [dispute] = [i for i in items(json.loads(ok(bob, "binder", "list", "--json"))) if i.get("kind") == "dispute"]
    assert dispute["id"] == record and dispute["fact"] == made["id"]
    assert f"already knowledge: fact {made['id']}" in ok(bob, "binder", "list")
    settled = json.loads(ok(bob, "binder", "reject", record, "--by", "Carol", "--json"))
    assert settled["closed"] == [made["id"]]
    [closed] = facts_of(bob, record)
    assert closed["valid_to"] is not None and closed["superseded_by"] is None
    committed(bob, "Carol settles: rejected")
    pushed(bob)


def test_a_hand_written_settlement_of_a_record_no_one_disputes_is_refused(waiting: tuple[Path, str],
                                                                            tmp_path: Path) -> None:
    from check_support import refused

    origin, record = waiting
    store = tmp_path / "store"
    shutil.copytree(origin / "store", store, symlinks=True)
    ok(store, "binder", "ratify", record, "--by", "Alice")
    committed(store, "Alice ratifies")
    [alice] = [json.loads(x) for x in (store / "kb/binder.jsonl").read_text().splitlines()]
    overruling = {"intake_id": record, "decision": "reject", "decided_at": alice["decided_at"] + 5, "by": "Mallory",
                  "settles": alice["decided_at"]}
    with (store / "kb/binder.jsonl").open("a") as log:
        log.write(json.dumps(overruling, separators=(",", ":"), sort_keys=True) + "\n")
    refused(store, "settles a dispute", "no one decided")


def test_one_side_ratified_in_one_clone_and_rejected_in_the_other_is_refused(
        _store_template: Path, tmp_path: Path) -> None:
    """Alice ratifies grpc (closing rest), Bob rejects grpc (closing it): merged, nothing would be open."""
    alice, bob, sides = api_dispute(_store_template, tmp_path)
    ok(alice, "binder", "ratify", sides["grpc"], "--by", "Alice")
    committed(alice, "Alice keeps grpc")
    pushed(alice)
    ok(bob, "binder", "reject", sides["grpc"], "--by", "Bob")
    committed(bob, "Bob drops grpc")
    git(bob, "pull", "-q", "--no-edit", "--no-rebase", check=False)
    push = git(bob, "push", "-q", "origin", "HEAD", check=False)
    said = push.stdout + push.stderr
    assert push.returncode != 0 and f"fact {sides['grpc']} is ratified by Alice and rejected by Bob" in said
