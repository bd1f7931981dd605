"""Issue 11: edits that used to pass every gate are refused by each of them.

Every attack is made as a user would: the change is written into a store made by
`memstack init`, then it must be refused by the pre-commit hook (a real `git
commit`); committed anyway with --no-verify it must be refused by `memstack check
--range`, by the store's pre-push hook (a real `git push` to a plain remote) and by
`hooks/pre-receive` on a guarded bare remote (a real `git push --no-verify`).
"""

import hashlib
import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from check_support import (
    DAY,
    JAN,
    append,
    closed,
    committed,
    copy_store,
    fact,
    fid,
    flagged,
    guarded_bare,
    head,
    intake,
    jsonl,
    publish,
    push,
    refused,
    refused_everywhere,
    run_check,
    sneak,
    with_remotes,
    write,
)
from helpers import git, memstack, tree_snapshot
from memstack.base.ids import agent_tag, new_id

LOG = "intake/alice/2026-01-01.jsonl"
JAN_FACTS = "kb/facts/alice/2026-01.jsonl"
FEB_FACTS = "kb/facts/alice/2026-02.jsonl"
FEB = JAN + 31 * DAY
Y2099 = 4070908800000  # 2099-01-01T00:00:00Z
Published = tuple[Path, dict[str, Any]]  # a store after `with_facts`, and its fact


@pytest.fixture
def store(repo: Path, bare: Path, tmp_path: Path) -> Path:  # noqa: F811
    """The store with two remotes: `guarded` (hooks/pre-receive) and `plain` (check_support.with_remotes)."""
    return with_remotes(repo, bare, tmp_path)


def with_facts(root: Path) -> dict:  # type: ignore[type-arg]
    first = fact("first")
    write(root, JAN_FACTS, jsonl(first))
    committed(root, "a fact")
    publish(root)
    return first


@pytest.fixture(scope="module")
def _published(store_template: Path, tmp_path_factory: pytest.TempPathFactory) -> Published:
    """The folder of `published`, made once for the module (`store`, `remote.git`, `plain.git`)."""
    folder = tmp_path_factory.mktemp("published")
    store = with_remotes(copy_store(store_template, folder), guarded_bare(folder / "remote.git"), folder)
    return folder, with_facts(store)


@pytest.fixture
def published(_published: Published, tmp_path: Path) -> Published:
    """`store` after `with_facts` (a fact committed and pushed to both remotes), and that fact: a copy of
    `_published`, its remotes copied with it."""
    folder, first = _published
    shutil.copytree(folder, tmp_path, symlinks=True, dirs_exist_ok=True)
    for remote, bare_name in (("guarded", "remote.git"), ("plain", "plain.git")):
        git(tmp_path / "store", "remote", "set-url", remote, str(tmp_path / bare_name))
    return tmp_path / "store", dict(first)


# ---- 1, 2: ids reused in another file --------------------------------------------------------------

def test_a_fact_id_reused_in_another_month_is_refused(published: Published) -> None:
    store, first = published
    write(store, FEB_FACTS, jsonl({**first, "recorded_at": FEB, "object": "a second open version"}))
    refused_everywhere(store, f"{FEB_FACTS}:1: I5 id '{first['id']}' does not carry the record's transaction time")


def test_a_fact_id_reused_in_another_agents_file_is_refused(published: Published) -> None:
    store, first = published
    write(store, "kb/facts/bob/2026-01.jsonl", jsonl({**first, "agent": "bob"}))
    refused_everywhere(store, f"kb/facts/bob/2026-01.jsonl:1: I5 id '{first['id']}' does not carry agent 'bob'")


def test_an_intake_id_reused_in_another_day_is_refused(store: Path) -> None:
    one = intake(1)
    write(store, LOG, jsonl(one))
    committed(store)
    publish(store)
    write(store, "intake/alice/2026-01-02.jsonl", jsonl({**one, "created_at": "2026-01-02T10:00:01.000Z"}))
    refused_everywhere(store, f"intake/alice/2026-01-02.jsonl:1: I5 id '{one['id']}' does not carry the record's"
                              " transaction time")


def test_a_legacy_id_in_a_new_line_is_refused_but_closing_a_legacy_fact_is_not(
        store: Path, bare: Path) -> None:  # noqa: F811
    legacy = {**fact("legacy"), "id": "0190a1b2c3d4e5f6a7b8c9d0e1f2"}  # 12 hex time + 16 random: before ids were bound
    write(store, JAN_FACTS, jsonl(legacy))
    sneak(store, "a store from before bound ids")
    git(bare, "config", "core.hooksPath", str(bare / "no-hooks"))  # the remote took it before it had the hook
    publish(store)
    git(bare, "config", "--unset", "core.hooksPath")
    successor = fact("successor", valid_from=JAN + DAY, recorded_at=JAN + DAY)
    write(store, JAN_FACTS, jsonl(closed(legacy, valid_to=JAN + DAY, expired_at=JAN + DAY,
                                         superseded_by=successor["id"]), successor))
    committed(store, "close a legacy fact")
    assert run_check(store, "--all").returncode == 0  # the audit cannot tell old lines from new: legacy ids pass
    append(store, JAN_FACTS, jsonl({**fact("x"), "id": "0190a1b2c3d4e5f6a7b8c9d0e1f3"}))
    refused_everywhere(store, f"{JAN_FACTS}:3: I5 id '0190a1b2c3d4e5f6a7b8c9d0e1f3' is not of the form")


def test_an_agent_whose_id_tag_is_anothers_cannot_get_files(store: Path) -> None:
    seen: dict[str, str] = {}
    n = 0
    while True:  # a birthday search: two names whose 8-hex tags agree (about 80,000 names)
        name = f"a{n}"
        tag = agent_tag(name)
        if tag in seen:
            break
        seen[tag] = name
        n += 1
    one, two = seen[tag], name
    first = intake(1, agent=one)
    write(store, f"intake/{one}/2026-01-01.jsonl", jsonl(first))
    committed(store)
    publish(store)
    write(store, f"intake/{two}/2026-01-01.jsonl", jsonl({**first, "agent": two}))
    refused_everywhere(store, f"intake/{two}/2026-01-01.jsonl: I7 agent '{two}' has the id tag {tag} of agent '{one}'")


# ---- 3: closings that are not real closings ---------------------------------------------------------

@pytest.mark.parametrize(("closing", "expected"), [
    ({"valid_to": JAN + DAY, "expired_at": JAN + DAY, "superseded_by": fid("nowhere")},
     f"I2 superseded_by {fid('nowhere')} names no fact"),
    ({"valid_to": JAN + DAY, "expired_at": JAN + 500, "superseded_by": None},
     "expired_at 1767225600500 must not be before recorded_at 1767225601000"),
    ({"valid_to": JAN + DAY, "expired_at": 0, "superseded_by": None}, "expired_at 0 must not be before recorded_at"),
], ids=["dangling-successor", "expired-before-recorded", "expired-zero"])
def test_a_closing_must_be_real(published: Published, closing: dict, expected: str) -> None:  # type: ignore[type-arg]
    store, first = published
    write(store, JAN_FACTS, jsonl({**first, **closing}))
    refused_everywhere(store, f"{JAN_FACTS}:1: I", expected)


def test_a_new_fact_born_closed_needs_a_real_successor(published: Published) -> None:
    store, _ = published
    born = closed(fact("born", valid_from=JAN - DAY), valid_to=JAN, expired_at=JAN + 2000, superseded_by=fid("gone"))
    append(store, JAN_FACTS, jsonl(born))
    refused_everywhere(store, f"{JAN_FACTS}:2: I2 superseded_by {fid('gone')} names no fact")


def test_successors_are_found_in_other_files_and_in_earlier_commits(published: Published) -> None:
    """What promotion and capture do: a successor appended in another month's file of the same commit,
    and a fact born closed whose successor another agent committed before."""
    store, first = published
    successor = fact("february", valid_from=FEB, recorded_at=FEB)
    write(store, JAN_FACTS, jsonl(closed(first, valid_to=FEB, expired_at=FEB, superseded_by=successor["id"])))
    write(store, FEB_FACTS, jsonl(successor))
    committed(store, "superseded across months")
    bobs = fact("bob's", agent="bob", valid_from=JAN + 2 * DAY, recorded_at=JAN + 2 * DAY, subject="other")
    write(store, "kb/facts/bob/2026-01.jsonl", jsonl(bobs))
    committed(store, "bob's fact")
    older = closed(fact("older", subject="other", valid_from=JAN + DAY, recorded_at=JAN + 3 * DAY),
                   valid_to=JAN + 2 * DAY, expired_at=JAN + 3 * DAY, superseded_by=bobs["id"])
    append(store, JAN_FACTS, jsonl(older))
    committed(store, "an older fact, born closed")
    publish(store)
    assert run_check(store, "--range", "HEAD").returncode == 0


def test_an_audit_finds_each_successor_in_the_file_its_id_is_bound_to(store: Path) -> None:
    """`check --all` keeps no set of every fact id: a successor named in another file is looked for in
    the one file its id is bound to (another agent's, another month's), a legacy id anywhere. Each
    successor present passes; each absent one, bound or legacy, is named once, at its closing."""
    bobs = fact("bob's", agent="bob", recorded_at=FEB, valid_from=FEB)
    febs = fact("february", recorded_at=FEB + DAY, valid_from=FEB + DAY, subject="other")
    legacy = {**fact("legacy", agent="bob", subject="third", recorded_at=FEB + 2 * DAY, valid_from=FEB),
              "id": "legacy-successor"}
    closings = [closed(fact("first"), valid_to=FEB, expired_at=FEB, superseded_by=bobs["id"]),
                closed(fact("second", subject="other"), valid_to=FEB + DAY, expired_at=FEB + DAY,
                       superseded_by=febs["id"]),
                closed(fact("third", subject="third"), valid_to=FEB, expired_at=FEB + 2 * DAY,
                       superseded_by="legacy-successor")]
    write(store, JAN_FACTS, jsonl(*closings))
    write(store, "kb/facts/bob/2026-02.jsonl", jsonl(bobs, legacy))
    write(store, FEB_FACTS, jsonl(febs))
    sneak(store, "successors in three other files")
    assert run_check(store, "--all").returncode == 0
    gone = [closed(fact(f"gone {n}", subject=f"gone {n}"), valid_to=FEB, expired_at=FEB, superseded_by=successor)
            for n, successor in enumerate([fid("nowhere", FEB, "bob"), "legacy-nowhere"])]
    append(store, JAN_FACTS, jsonl(*gone))
    sneak(store, "two successors that exist nowhere")
    proc = run_check(store, "--all")
    assert proc.returncode == 1, proc.stdout
    named = sorted(line for line in proc.stdout.splitlines() if " I2 " in line)
    assert len(named) == 2, proc.stdout
    assert named[0].startswith(f"{JAN_FACTS}:4: I2 superseded_by {fid('nowhere', FEB, 'bob')} names no fact")
    assert named[1].startswith(f"{JAN_FACTS}:5: I2 superseded_by legacy-nowhere names no fact")


# ---- 4: transaction times in the future -------------------------------------------------------------

def test_a_fact_recorded_in_2099_is_refused(published: Published) -> None:
    store, _ = published
    future = {**fact("future"), "recorded_at": Y2099, "id": f"{Y2099:012x}{'0' * 12}{agent_tag('alice')}"}
    write(store, "kb/facts/alice/2099-01.jsonl", jsonl(future))
    refused_everywhere(store, "kb/facts/alice/2099-01.jsonl:1: I5 recorded_at 2099-01-01T00:00:00.000Z: lies in the"
                              " future")


def test_an_intake_record_created_in_9999_is_refused(store: Path) -> None:
    publish(store)
    write(store, "intake/alice/9999-12-31.jsonl", jsonl(intake(1, day="9999-12-31")))
    refused_everywhere(store, "intake/alice/9999-12-31.jsonl:1: I5 created_at 9999-12-31T10:00:01.000Z: lies in the"
                              " future")


def test_a_closing_recorded_in_the_future_is_refused(published: Published) -> None:
    store, first = published
    write(store, JAN_FACTS, jsonl(closed(first, valid_to=JAN + DAY, expired_at=Y2099, superseded_by=None)))
    refused_everywhere(store, f"{JAN_FACTS}:1: I5 expired_at 2099-01-01T00:00:00.000Z: lies in the future")


@pytest.mark.parametrize(("path", "record", "field"), [
    ("kb/binder.jsonl", {"intake_id": "0190a1b2c3d4e5f6a7b8c9d0", "decision": "ratify", "decided_at": Y2099,
                         "by": "ada"}, "decided_at"),
    ("kb/promotions/alice/2026-01-01.jsonl", {"intake_id": "0190a1b2c3d4e5f6a7b8c9d0", "agent": "alice",
                                              "sub_tier": "binder", "fact_id": None, "promoted_at": Y2099},
     "promoted_at"),
])
def test_ledger_and_binder_times_may_not_lie_in_the_future(repo: Path, path: str, record: dict,  # noqa: F811
                                                           field: str) -> None:  # type: ignore[type-arg]
    append(repo, path, jsonl(record))
    flagged(repo, f"{path}:1: I5 {field} 2099-01-01T00:00:00.000Z: lies in the future")


def test_valid_time_may_lie_in_the_future(store: Path) -> None:
    write(store, JAN_FACTS, jsonl(fact("scheduled", valid_from=Y2099)))
    committed(store, "a decision that takes effect in 2099")


def test_the_clock_skew_is_configurable(store: Path) -> None:
    from memstack.base.times import now_ms

    soon = now_ms() + 120_000  # two minutes ahead: within the default skew of 300 s
    from memstack.base.times import iso, month

    record = {**fact("soon", recorded_at=soon), "id": new_id(soon, "alice")}
    path = f"kb/facts/alice/{month(soon)}.jsonl"
    write(store, path, jsonl(record))
    committed(store, "a clock slightly ahead")
    text = (store / "memstack.yaml").read_text().replace("max_skew_seconds: 300", "max_skew_seconds: 0")
    write(store, "memstack.yaml", text)
    committed(store, "no skew allowed")
    later = now_ms() + 120_000
    append(store, path, jsonl({**fact("later", recorded_at=later), "id": new_id(later, "alice")}))
    refused(store, f"{path}:2: I5 recorded_at {iso(later)}: lies in the future", "plus the 0 s clock skew")


@pytest.mark.parametrize(("args", "field"), [
    (["intake", "write", "--content", "x", "--created-at", "9999-12-31T00:00:00Z"], "bad created-at"),
    (["fact", "add", "--subject", "s", "--predicate", "p", "--object", "o", "--valid-from", "2026-01-01",
      "--recorded-at", "2099-01-01"], "bad recorded-at"),
    (["capture", "--subject", "s", "--predicate", "p", "--object", "o", "--valid-from", "2026-01-01",
      "--recorded-at", "2099-01-01"], "bad recorded-at"),
    (["fact", "invalidate", "--subject", "project", "--predicate", "decided", "--valid-to", "2026-02-01",
      "--recorded-at", "2099-01-01"], "bad recorded-at"),
], ids=["intake", "fact-add", "capture", "invalidate"])
def test_writes_refuse_a_future_transaction_time(published: Published, args: list[str], field: str) -> None:
    store, _ = published
    before = tree_snapshot(store)
    proc = memstack(*args, cwd=store)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert field in proc.stderr and "lies in the future" in proc.stderr and "Traceback" not in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1
    assert tree_snapshot(store) == before


def test_writes_accept_a_future_valid_time(store: Path) -> None:
    proc = memstack("fact", "add", "--subject", "s", "--predicate", "p", "--object", "o", "--valid-from",
                    "2099-01-01", cwd=store)
    assert proc.returncode == 0, proc.stderr
    committed(store, "scheduled")


# ---- 5: deleting a branch on a guarded remote and pushing it again ---------------------------------

def _agent_branch(root: Path) -> tuple[str, str]:
    """agent-x on the guarded remote, one memory commit ahead of main; returns (main, agent-x)."""
    publish(root)
    main = head(root)
    git(root, "checkout", "-q", "-b", "agent-x")
    write(root, LOG, jsonl(intake(1)))
    tip = committed(root, "agent-x's record")
    code, out = push(root, "guarded", "agent-x")
    assert code == 0, out
    return main, tip


def test_deleting_a_branch_that_holds_memory_is_refused(store: Path, bare: Path) -> None:  # noqa: F811
    _, tip = _agent_branch(store)
    code, out = push(store, "guarded", ":agent-x")
    assert code != 0
    assert "refs/heads/agent-x: I1 deleting it drops 1 commit of memory no other ref holds" in out
    assert git(bare, "rev-parse", "agent-x").stdout.strip() == tip


def test_deleting_and_recreating_a_branch_cannot_drop_records(store: Path, bare: Path) -> None:  # noqa: F811
    main, tip = _agent_branch(store)
    git(bare, "config", "memstack.allowDeleteBranch", "true")  # the administrator allows deletions
    code, out = push(store, "guarded", ":agent-x")
    assert code == 0, out
    assert git(bare, "rev-parse", "refs/memstack/deleted/heads/agent-x").stdout.strip() == tip
    code, out = push(store, "guarded", f"{main}:refs/heads/agent-x")  # the records of `tip` are gone
    assert code != 0
    assert "re-created branch: the memory of the deleted branch of that name must survive in it" in out
    assert f"{LOG}: I1 append-only log deleted or renamed" in out
    assert git(bare, "rev-parse", "--verify", "-q", "agent-x", check=False).stdout.strip() == ""
    append(store, LOG, jsonl(intake(2)))
    newer = committed(store, "agent-x goes on")
    code, out = push(store, "guarded", "agent-x")  # a new branch that keeps them is accepted
    assert code == 0, out
    assert git(bare, "rev-parse", "agent-x").stdout.strip() == newer


def test_the_remotes_own_refs_cannot_be_pushed(store: Path, bare: Path) -> None:  # noqa: F811
    publish(store)
    code, out = push(store, "guarded", "main:refs/memstack/deleted/heads/agent-x")
    assert code != 0
    assert "refs/memstack/ holds the remote's record of deleted branches" in out


def test_deleting_a_branch_whose_memory_another_branch_holds_is_allowed(store: Path) -> None:
    _agent_branch(store)
    git(store, "checkout", "-q", "main")
    git(store, "merge", "-q", "--ff-only", "agent-x")
    assert push(store, "guarded", "main")[0] == 0
    code, out = push(store, "guarded", ":agent-x")
    assert code == 0, out


# ---- 6: loosening the forbidden patterns and adding what they forbade ----------------------------

def test_one_commit_cannot_loosen_the_patterns_and_add_what_they_forbade(store: Path) -> None:
    publish(store)
    config = (store / "memstack.yaml").read_text()
    loosened = config.replace("    - '(?i)api[_-]?key\\s*[:=]'\n", "")
    assert loosened != config
    write(store, "memstack.yaml", loosened)
    write(store, "identity/alice.md", "# alice\n\napi_key = 123\n")  # pragma: allowlist secret
    refused_everywhere(store, "identity/alice.md:3: I6", "(a pattern of memstack.yaml before this change)")


def test_loosening_the_patterns_first_then_editing_the_identity_is_allowed(store: Path) -> None:
    config = (store / "memstack.yaml").read_text()
    write(store, "memstack.yaml", config.replace("    - '(?i)api[_-]?key\\s*[:=]'\n", ""))
    committed(store, "drop a pattern (reviewable on its own)")
    write(store, "identity/alice.md", "# alice\n\napi_key = 123\n")  # pragma: allowlist secret
    committed(store, "then the identity")


# ---- false alarm: lagging views -----------------------------------------------------------------------

def test_check_all_says_lagging_views_are_stale_without_a_violation(store: Path) -> None:
    assert memstack("promote", cwd=store).returncode == 0  # the views exist, fresh, committed
    proc = memstack("fact", "add", "--subject", "s", "--predicate", "decided", "--object", "o",
                    "--valid-from", "2026-01-01", cwd=store)
    assert proc.returncode == 0, proc.stderr
    committed(store, "a clean fact add")
    written = git(store, "show", "--name-only", "--format=", "HEAD").stdout.split()
    [facts] = [p for p in written if p.startswith("kb/facts/")]
    shard = facts.replace("kb/facts/", "kb/knowledge/").replace(".jsonl", ".json")
    rebuilt = memstack("rebuild", "--check", cwd=store)
    assert rebuilt.returncode == 1  # the views lag: stale, as check --all and status say it
    proc = run_check(store, "--all")
    assert proc.returncode == 0, proc.stdout
    assert f"{shard}: stale" in proc.stdout and "I4" not in proc.stdout.replace("SPEC I4", "")
    said = next(line for line in proc.stdout.splitlines() if line.startswith(f"{shard}: stale"))
    assert said in rebuilt.stdout.splitlines() and "I4" not in rebuilt.stdout  # one word, one sentence
    status = memstack("status", cwd=store).stdout
    assert f"stale derived files: {shard}" in status and "no violation" in status
    document = json.loads(run_check(store, "--all", "--format", "json").stdout)
    assert document["ok"] is True and document["stale"] == [shard]
    write(store, shard, "[]\n")  # but a commit that edits a view by hand is still refused
    refused(store, f"{shard}:1: I4 differs from what a rebuild makes")


def test_fixture_ids_are_bound() -> None:
    """The hand-made records of these tests carry bound ids, as memstack's writers make them."""
    from memstack.base import ids

    assert ids.problem(fact("x")["id"], JAN + 1000, "alice") is None
    assert ids.problem(intake(3)["id"], JAN + 36_003_000, "alice") is None
    assert hashlib.sha256(b"x").hexdigest()[:12] in fact("x")["id"]


def test_promotion_of_a_legacy_intake_record_passes_the_hook(store: Path) -> None:
    """A store from before bound ids: the fact promotion makes of an old record carries a bound id."""
    legacy = {**intake(1, tier="verified", confidence=0.9, subject="db", predicate="decided", object="postgres"),
              "id": "019b7a1b2c3de5f6a7b8c9d0e1f2"}
    write(store, LOG, jsonl(legacy))
    sneak(store, "a store from before bound ids")
    proc = memstack("promote", cwd=store)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert git(store, "status", "--porcelain").stdout == ""
    assert run_check(store, "--range", "HEAD~1..HEAD").returncode == 0
