"""Two clones that promote the same pending records, and every way they can meet.

Alice and Bob clone a store whose intake holds records nobody promoted yet. Each writes a record
of their own about the same decision (so the two promotions close the shared fact differently),
runs `memstack promote` (a commit through the hooks), and they meet: either pushes first, the other
runs `git pull` or `git pull --rebase` and pushes; or both run `memstack sync`. Every way ends with
both clones holding byte-identical trees (the whole tree, whatever the store's format lays out),
every commit passing `memstack check --range` (merges included), the pre-push hook here and the
pre-receive hook of the bare remote, and nothing left to resolve by hand.
"""

import json
import shutil
from pathlib import Path

import pytest

from check_support import committed
from helpers import git, memstack
from memstack.base import jsonio
from team_support import check_history, clone, guarded_remote, pushed

SUBJECT, PREDICATE = "deploy-day", "decided"

pytestmark = pytest.mark.slow


def write(repo: Path, agent: str, created: str, *more: str) -> str:
    done = memstack("intake", "write", "--json", "--agent", agent, "--created-at", created, *more, cwd=repo)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)["record"]["id"]


def decision(repo: Path, agent: str, obj: str, created: str) -> str:
    return write(repo, agent, created, "--content", f"we deploy on {obj}", "--subject", SUBJECT,
                 "--predicate", PREDICATE, "--object", obj, "--tier", "verified", "--confidence", "0.9")


def promote(repo: Path, *more: str) -> dict:
    done = memstack("promote", "--json", *more, cwd=repo)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def pull(repo: Path, how: str) -> None:
    done = git(repo, "pull", "-q", "--no-edit", "--rebase" if how == "rebase" else "--no-rebase", check=False)
    assert done.returncode == 0, done.stdout + done.stderr


def sync(repo: Path) -> None:
    done = memstack("sync", "--json", cwd=repo)
    assert done.returncode == 0, done.stderr


def start(origin: Path) -> None:
    """The shared store (records pending, pushed to a guarded remote), cloned by Alice and Bob, who
    each write a record of their own about the same decision and promote."""
    store = origin / "store"
    decision(store, "alice", "tuesday", "2026-11-01T09:00:00Z")
    write(store, "alice", "2026-11-01T09:30:00Z", "--content", "the staging box is slow", "--title", "staging")
    write(store, "bob", "2026-11-02T08:00:00Z", "--content", "CI runs on every push", "--subject", "ci",
          "--predicate", "decided", "--object", "every push", "--tier", "verified", "--confidence", "0.95")
    committed(store, "intake waiting for promotion")
    remote = guarded_remote(store, origin)
    alice, bob = clone(remote, origin / "alice"), clone(remote, origin / "bob")
    decision(alice, "alice", "wednesday", "2026-11-10T10:00:00Z")
    promote(alice)
    decision(bob, "bob", "friday", "2026-11-10T11:00:00Z")
    promote(bob)


def meet(tmp: Path, way: str) -> tuple[Path, Path]:
    """The two clones meet in `way`; returns (the clone that went first, the other)."""
    alice, bob = tmp / "alice", tmp / "bob"
    if way == "sync":
        for repo in (alice, bob, alice):
            sync(repo)
        return alice, bob
    first, how = way.split("-")
    pusher, puller = (alice, bob) if first == "alice" else (bob, alice)
    pushed(pusher)
    pull(puller, how)
    pushed(puller)
    pull(pusher, how)
    return pusher, puller


WAYS = ("alice-merge", "alice-rebase", "bob-merge", "bob-rebase", "sync")


@pytest.fixture(scope="module")
def origin(tmp_path_factory: pytest.TempPathFactory, _store_template: Path) -> Path:
    made = tmp_path_factory.mktemp("start")
    shutil.copytree(_store_template, made / "store", symlinks=True)
    start(made)
    return made


@pytest.fixture(scope="module")
def met(origin: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[Path, Path]]:
    """The same two promotions, met in each way (a copy of the clones and the remote for each)."""
    found = {}
    for way in WAYS:
        tmp = tmp_path_factory.mktemp(way)
        shutil.copytree(origin, tmp, symlinks=True, dirs_exist_ok=True)
        for name in ("store", "alice", "bob"):
            git(tmp / name, "remote", "set-url", "origin", str(tmp / "remote.git"))
        found[way] = meet(tmp, way)
    return found


def tree(repo: Path) -> str:
    return git(repo, "ls-tree", "-r", "HEAD").stdout


def memory_files(repo: Path) -> dict[str, bytes]:
    """Every memory file of the work tree (outside .git and .memstack), by path."""
    return {str(p.relative_to(repo)): p.read_bytes() for p in sorted(repo.rglob("*"))
            if p.is_file() and p.relative_to(repo).parts[0] not in (".git", ".memstack")}


def facts_and_ledger(repo: Path) -> tuple[list[bytes], list[bytes]]:
    """Every fact line and every ledger line of the store, sorted (where they live and their order aside)."""
    facts = sorted(line for p in (repo / "kb").rglob("*.jsonl") if "facts" in p.parts
                   for line in p.read_bytes().splitlines())
    ledger = sorted(line for p in (repo / "kb").rglob("*.jsonl")
                    if "promotions" in p.name or "promotions" in p.parts for line in p.read_bytes().splitlines())
    return facts, ledger


def test_the_same_promotion_in_two_clones_writes_the_same_bytes(origin: Path) -> None:
    """No wall clock in what a promotion writes: the records both clones promoted became the same
    ledger lines and the same facts, byte for byte (the other side's own record aside)."""
    (a_facts, a_ledger), (b_facts, b_ledger) = (facts_and_ledger(origin / name) for name in ("alice", "bob"))
    shared = {json.loads(line)["intake_id"] for line in a_ledger} & {json.loads(line)["intake_id"] for line in b_ledger}
    assert len(shared) == 3
    assert [x for x in a_ledger if json.loads(x)["intake_id"] in shared] == \
        [x for x in b_ledger if json.loads(x)["intake_id"] in shared]
    ci = [[x for x in held if b'"subject":"ci"' in x] for held in (a_facts, b_facts)]
    assert ci[0] and ci[0] == ci[1]


@pytest.mark.parametrize("way", WAYS)
def test_both_clones_end_byte_identical_and_every_gate_passes(met: dict, way: str) -> None:
    first, second = met[way]
    for repo in (first, second):
        assert git(repo, "status", "--porcelain").stdout == "", repo  # nothing left to resolve or commit
        assert git(repo, "rev-parse", "HEAD").stdout == git(repo, "rev-parse", "origin/main").stdout
        check_history(repo)  # every commit, the merge included (pushes passed pre-push and pre-receive)
    assert tree(first) == tree(second)
    assert memory_files(first) == memory_files(second)
    assert not any(b"<<<<<<<" in data for data in memory_files(first).values())


def test_every_way_keeps_the_same_knowledge(met: dict) -> None:
    """Whoever went first and however they met: the same facts (the shared fact closed once, by the
    closing recorded first), the same ledger lines, nothing lost."""
    found = {way: facts_and_ledger(pair[0]) for way, pair in met.items()}
    facts, ledger = found["sync"]
    for way, held in found.items():
        assert held == (facts, ledger), way
    assert len(ledger) == 5  # five records, each routed once
    parsed = [json.loads(line) for line in facts]
    by_object = {f["object"]: f for f in parsed if f["subject"] == SUBJECT}
    assert set(by_object) == {"tuesday", "wednesday", "friday"}
    assert by_object["tuesday"]["superseded_by"] == by_object["wednesday"]["id"]  # recorded first: wednesday


@pytest.mark.parametrize("way", WAYS)
def test_after_meeting_a_rebuild_changes_nothing_once_committed(met: dict, way: str) -> None:
    """The knowledge after the merge is what its sources make: `memstack rebuild` (what `sync` and the next
    `promote` run) leaves a state whose commit passes the hook and `check --range`, and then nothing is stale."""
    _, second = met[way]
    rebuilt = memstack("rebuild", cwd=second)
    assert rebuilt.returncode == 0, rebuilt.stderr
    if git(second, "status", "--porcelain").stdout:
        committed(second, "memstack rebuild")
    stale = memstack("rebuild", "--check", cwd=second)
    assert stale.returncode == 0, stale.stdout + stale.stderr
    check_history(second)


@pytest.mark.parametrize("how", ["merge", "rebase", "sync"])
def test_a_fact_only_one_side_closed_leaves_a_view_that_status_names_and_the_next_promotion_refreshes(
        how: str, tmp_path: Path, _store_template: Path) -> None:
    """Both clones promote a shared record; only Bob's clone also promotes a newer decision, which closes
    the shared fact. Alice pushes, Bob pulls: the merge keeps a side's view of Alice's file, and a rebase
    replays Bob's promotion onto Alice's view, whose fact file it changes (the closing) but whose view it
    does not. `status` names each view `rebuild --check` finds stale, in Bob's clone and in a fresh clone of
    what he pushed, and the next promotion there refreshes every one; `memstack sync` leaves none to
    refresh (docs/merge.md)."""
    store = shutil.copytree(_store_template, tmp_path / "store", symlinks=True)
    decision(store, "alice", "tuesday", "2026-11-01T09:00:00Z")
    committed(store, "a decision waiting for promotion")
    remote = guarded_remote(store, tmp_path)
    alice, bob = clone(remote, tmp_path / "alice"), clone(remote, tmp_path / "bob")
    promote(alice)
    decision(bob, "bob", "friday", "2026-11-10T11:00:00Z")
    promote(bob)
    pushed(alice)
    if how == "sync":  # it rebuilds what the merge left lagging before it pushes
        sync(bob)
        assert json.loads(memstack("rebuild", "--check", "--json", cwd=bob).stdout)["stale"] == []
        # its commit of the rebuilt views names the merge it was made on: the next rebuild starts there
        parent, message = git(bob, "log", "-1", "--format=%P%x00%B").stdout.split("\0")
        assert message.startswith("memstack sync: ") and f"Memstack-Parent: {parent}\n" in message
    else:
        pull(bob, how)
        pushed(bob)
    fresh = clone(remote, tmp_path / "fresh")
    for repo in (bob, fresh):
        listed = json.loads(memstack("rebuild", "--check", "--json", cwd=repo).stdout)["stale"]
        assert json.loads(memstack("status", "--json", cwd=repo).stdout)["stale"] == listed, repo.name
        assert ("kb/knowledge/alice/2026-11.json" in listed) is (how != "sync"), listed  # the view that lags
        write(repo, "alice", "2026-11-20T09:00:00Z", "--content", "an unrelated note")
        promote(repo)
        after = memstack("rebuild", "--check", cwd=repo)
        assert after.returncode == 0, (repo.name, after.stdout)
        assert "tuesday" not in (repo / "willow.md").read_text()  # closed by friday: not knowledge now
    check_history(bob)


def test_the_two_newer_decisions_wait_in_the_binder_and_recall_marks_them(met: dict) -> None:
    """The shared fact was closed differently in the two clones: the first closing is kept, both newer
    decisions stay valid (recall lists both, most recent first, each marked disputed with the other) and
    the Binder lists the disagreement until a human keeps one."""
    for way, (repo, _) in met.items():
        done = memstack("recall", "--json", "--subject", SUBJECT, cwd=repo)
        assert done.returncode == 0, done.stderr
        found = json.loads(done.stdout)["items"]
        assert [f["object"] for f in found] == ["friday", "wednesday"], way
        assert found[0]["disputed_with"] == [found[1]["id"]] and found[1]["disputed_with"] == [found[0]["id"]]
        listed = json.loads(memstack("binder", "list", "--json", cwd=repo).stdout)["items"]
        disputes = [item for item in listed if item.get("kind") == "dispute"]
        assert len(disputes) == 1, (way, listed)
        assert [side["object"] for side in disputes[0]["sides"]] == ["wednesday", "friday"]
        assert disputes[0]["id"] == found[1]["id"] and disputes[0]["predecessor"] is None
    repo = met["sync"][1]
    ratified = memstack("binder", "ratify", found[0]["id"], "--by", "Ada", cwd=repo)
    assert ratified.returncode == 0, ratified.stderr
    sync(repo)  # the closing and the decision pass every check
    check_history(repo)
    done = json.loads(memstack("recall", "--json", "--subject", SUBJECT, cwd=repo).stdout)["items"]
    assert [f["object"] for f in done] == ["friday"] and "disputed_with" not in done[0]


def test_a_record_decided_differently_and_lines_of_an_older_memstack_sync_clean(
        _store_template: Path, tmp_path: Path) -> None:
    """Alice's own earlier record makes a shared one a duplicate (her ledger line points at her fact, Bob's
    at the shared record's own fact), and Bob's ledger lines carry another promoted_at, as the wall clock
    of an older memstack wrote them: both lines of each record are kept, and both clones end identical."""
    shutil.copytree(_store_template, tmp_path / "store", symlinks=True)
    store = tmp_path / "store"
    shared = write(store, "alice", "2026-11-05T09:00:00Z", "--content", "the database", "--subject", "db",
                   "--predicate", "decided", "--object", "postgres", "--tier", "verified", "--confidence", "0.9")
    other = write(store, "bob", "2026-11-06T09:00:00Z", "--content", "CI", "--subject", "ci", "--predicate",
                  "decided", "--object", "every push", "--tier", "verified", "--confidence", "0.9")
    committed(store, "intake waiting for promotion")
    remote = guarded_remote(store, tmp_path)
    alice, bob = clone(remote, tmp_path / "alice"), clone(remote, tmp_path / "bob")
    write(alice, "alice", "2026-11-04T09:00:00Z", "--content", "the database, earlier", "--subject", "db",
          "--predicate", "decided", "--object", "postgres", "--tier", "verified", "--confidence", "0.9")
    promote(alice)
    promote(bob, "--no-commit")
    ledger = [p for p in (bob / "kb").rglob("*.jsonl") if "promotions" in p.name or "promotions" in p.parts]
    for path in ledger:  # what an older memstack wrote: the clock's time (an hour later), not the record's
        path.write_bytes(b"".join(jsonio.dumps_line({**entry, "promoted_at": entry["promoted_at"] + 3_600_000})
                                  for entry in map(json.loads, path.read_bytes().splitlines())))
    assert memstack("rebuild", cwd=bob).returncode == 0  # the views' distilled_at follow the ledger
    committed(bob, "memstack promote (an older memstack)")
    for repo in (alice, bob, alice):
        sync(repo)
    assert tree(alice) == tree(bob)
    for repo in (alice, bob):
        assert git(repo, "status", "--porcelain").stdout == ""
        check_history(repo)
    _, lines = facts_and_ledger(alice)
    about = [json.loads(line) for line in lines if json.loads(line)["intake_id"] == shared]
    assert len(about) == 2 and len({line["fact_id"] for line in about}) == 2, about  # a duplicate; its own fact
    about = [json.loads(line) for line in lines if json.loads(line)["intake_id"] == other]
    assert len(about) == 2 and len({line["fact_id"] for line in about}) == 1, about  # one fact, two times
    # a record of the day file whose records have two lines each is still counted as pending
    write(alice, "alice", "2026-11-05T10:00:00Z", "--content", "written after the merge")
    status = json.loads(memstack("status", "--json", cwd=alice).stdout)
    assert status["pending_intake"] == {"alice": 1}, status
