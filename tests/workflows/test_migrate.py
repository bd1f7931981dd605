"""`memstack migrate`: a store of format 1, made by the last release of that format, becomes format 2 in one
commit that the hooks and `check --range` verify: every line of the old ledger once, unchanged, in the shard
of its intake file; the views equal a rebuild; nothing else changed. Killed at any write step, a rerun
finishes it; uncommitted memory is refused first; a store of format 2 has nothing to migrate.
"""

import json
import signal
import sys
from pathlib import Path

import pytest
from migrate_support import copy, git_bytes, ledger_lines, migrated_ok, old_ok, shard_of

from check_support import push
from helpers import git, memstack, tree_snapshot
from memstack import __version__


def test_each_ledger_line_moves_once_unchanged_into_its_intake_files_shard(old_store: Path) -> None:
    before = git(old_store, "rev-parse", "HEAD").stdout.strip()
    lines = ledger_lines(old_store, "HEAD")
    expected: dict[str, bytes] = {}
    for line in lines:
        expected[shard_of(line)] = expected.get(shard_of(line), b"") + line
    assert len(expected) == 3 and len(lines) == 5

    found = migrated_ok(old_store)

    assert found["migrated"] and found["moved"] == 5 and found["shards"] == 3
    assert git(old_store, "rev-parse", "HEAD~1").stdout.strip() == before  # one commit
    for shard, data in expected.items():  # in the old order: alice's first day spans both promotions
        assert git_bytes(old_store, "show", f"HEAD:{shard}") == data
    listed = git(old_store, "ls-tree", "-r", "--name-only", "HEAD", "kb/promotions").stdout.split()
    assert sorted(listed) == sorted(expected)
    assert git(old_store, "ls-tree", "HEAD", "kb/promotions.jsonl").stdout == ""
    changed = git(old_store, "diff", "--name-only", "HEAD~1", "HEAD").stdout.split()
    assert not [p for p in changed if p.startswith(("intake/", "kb/facts/", "kb/binder.jsonl", "handoffs/"))]
    config = git(old_store, "diff", "HEAD~1", "HEAD", "--", "memstack.yaml").stdout
    assert [line[0] + line[1:].strip() for line in config.splitlines() if line[:1] in "+-" and line[:3] not in
            ("+++", "---")] == ["+format: 2", "-version: 0.1.0", f"+version: {__version__}"]  # its CI installs it
    assert memstack("check", "--range", f"{before}..HEAD", cwd=old_store).returncode == 0
    assert memstack("rebuild", cwd=old_store).returncode == 0  # the views equal a rebuild: nothing to change
    assert git(old_store, "status", "--porcelain").stdout == ""


def test_a_store_of_format_2_has_nothing_to_migrate(store: Path) -> None:
    assert "\nformat: 2\n" in (store / "memstack.yaml").read_text()  # `memstack init` writes it
    head = git(store, "rev-parse", "HEAD").stdout
    found = migrated_ok(store)
    assert not found["migrated"] and "nothing to migrate" in found["message"]
    assert git(store, "rev-parse", "HEAD").stdout == head


def test_uncommitted_memory_is_refused_and_nothing_is_written(code: Path, old_store: Path) -> None:
    old_ok(code, "intake", "write", "--agent", "bob", "--content", "not yet committed", cwd=old_store)
    snapshot = tree_snapshot(old_store)
    head = git(old_store, "rev-parse", "HEAD").stdout
    refused = memstack("migrate", cwd=old_store)
    assert refused.returncode == 2
    assert refused.stderr.count("\n") == 1 and "uncommitted memory" in refused.stderr, refused.stderr
    assert "intake/bob/" in refused.stderr and "memstack migrate" in refused.stderr
    assert "promote" not in refused.stderr  # which refuses a store of format 1
    assert tree_snapshot(old_store) == snapshot and git(old_store, "rev-parse", "HEAD").stdout == head


def test_a_note_of_the_user_s_beside_the_memory_is_no_memory_and_stays_out_of_the_migration(
        old_store: Path) -> None:
    (old_store / "notes.txt").write_text("to do\n")
    done = migrated_ok(old_store)
    assert done["migrated"]
    assert git(old_store, "status", "--porcelain").stdout == "?? notes.txt\n"


def test_a_migration_killed_at_any_write_step_is_finished_by_a_rerun(old_store: Path, tmp_path: Path) -> None:
    whole = copy(old_store, tmp_path / "whole")
    migrated_ok(whole)
    tree = git(whole, "rev-parse", "HEAD^{tree}").stdout
    killed = 0
    for step in range(1, 40):
        run = copy(old_store, tmp_path / f"step-{step}")
        first = memstack("migrate", cwd=run, env={"MEMSTACK_TEST_KILL_AT": str(step)})
        if first.returncode == 0:
            break
        assert first.returncode == -signal.SIGKILL, first.stderr
        killed += 1
        rerun = memstack("migrate", "--json", cwd=run)
        assert rerun.returncode == 0, rerun.stdout + rerun.stderr
        assert git(run, "rev-parse", "HEAD^{tree}").stdout == tree, step  # what one whole run commits
        assert git(run, "rev-parse", "HEAD~1").stdout == git(old_store, "rev-parse", "HEAD").stdout
        assert git(run, "status", "--porcelain").stdout == ""
        assert memstack("migrate", cwd=run).returncode == 0  # and then nothing to do
    else:
        raise AssertionError("the migration never finished")
    assert killed >= 4  # the note, the shards, the deletions, the rebuild, memstack.yaml, the commit


def test_a_ledger_line_without_its_file_goes_to_the_shard_its_records_id_names(old_store: Path) -> None:
    lines = ledger_lines(old_store, "HEAD")
    bare = [json.dumps({k: v for k, v in json.loads(line).items() if k != "file"}).encode() + b"\n"
            if n == 0 else line for n, line in enumerate(lines)]
    (old_store / "kb/promotions.jsonl").write_bytes(b"".join(bare))  # as a release before `file` wrote it
    git(old_store, "commit", "-qam", "a ledger of an older release", "--no-verify")
    migrated_ok(old_store)
    assert git_bytes(old_store, "show", f"HEAD:{shard_of(lines[0])}").startswith(bare[0])


def test_every_verb_but_migrate_refuses_a_store_of_format_1(old_store: Path) -> None:
    for verb in (("status",), ("intake", "write", "--content", "c"), ("recall", "--subject", "deploys"), ("promote",),
                 ("binder", "list"), ("search", "deploys"), ("boot", "show"), ("soil", "list", "session"),
                 ("fact", "history", "--subject", "deploys"), ("export", "jsonl"), ("rebuild",)):
        refused = memstack(*verb, cwd=old_store)
        assert refused.returncode == 2, (verb, refused.stdout, refused.stderr)
        assert refused.stderr.count("\n") == 1, refused.stderr
        assert "format 1" in refused.stderr and "`memstack migrate`" in refused.stderr, refused.stderr
    assert memstack("check", "--all", cwd=old_store).returncode == 0  # the checks read either format


def test_a_clone_whose_hooks_run_the_old_memstack_migrates_and_its_hooks_then_run_this_one(
        code: Path, old_store: Path, tmp_path: Path) -> None:
    """A clone installed by v0.1.0 (`memstack.python` its interpreter): the migration commit would be checked
    by the old memstack, which cannot read format 2. The migration installs this memstack's hooks first."""
    launcher = tmp_path / "old-python"
    launcher.write_text(f"#!/bin/sh\nPYTHONPATH={code} exec {sys.executable} \"$@\"\n")
    launcher.chmod(0o755)
    git(old_store, "config", "memstack.python", str(launcher))
    done = migrated_ok(old_store)
    assert done["migrated"] and done["hooks_were"] == str(launcher)
    assert git(old_store, "config", "memstack.python").stdout.strip() == sys.executable
    assert memstack("check", "--range", "HEAD~1..HEAD", cwd=old_store).returncode == 0


def test_install_re_points_a_format_1_clone_s_hooks(old_store: Path, tmp_path: Path) -> None:
    git(old_store, "config", "memstack.python", str(tmp_path / "gone" / "python"))
    installed = memstack("install", cwd=old_store)
    assert installed.returncode == 0, installed.stderr  # it said "run memstack migrate first", which needs it
    assert git(old_store, "config", "memstack.python").stdout.strip() == sys.executable


def test_every_verb_refuses_a_store_of_a_newer_format(store: Path) -> None:
    config = store / "memstack.yaml"
    config.write_text(config.read_text().replace("\nformat: 2\n", "\nformat: 3\nsomething_new: true\n"))
    for verb in (("status",), ("intake", "write", "--content", "c"), ("recall", "--subject", "x"), ("promote",),
                 ("migrate",), ("binder", "list"), ("search", "x"), ("check", "--store", ".", "--all")):
        refused = memstack(*verb, cwd=store)
        assert refused.returncode == 2, (verb, refused.stdout, refused.stderr)
        assert refused.stderr.count("\n") == 1, refused.stderr
        assert "format 3" in refused.stderr and "format 2" in refused.stderr and "upgrade" in refused.stderr


def test_the_checks_refuse_the_old_ledger_deleted_outside_a_migration(old_store: Path) -> None:
    git(old_store, "rm", "-q", "kb/promotions.jsonl")
    refused = git(old_store, "commit", "-qm", "lose the ledger", check=False)
    assert refused.returncode != 0
    assert "kb/promotions.jsonl: I1 the ledger of format 1 deleted outside a migration" in refused.stderr


@pytest.mark.parametrize("tamper", ["drop a line", "repeat a line", "change a line", "other change",
                                    "keep the old ledger", "other attribute"])
def test_the_checks_refuse_a_migration_that_is_not_exactly_the_move(old_store: Path, tamper: str) -> None:
    migrated_ok(old_store)
    git(old_store, "reset", "-q", "--soft", "HEAD~1")
    shard = old_store / shard_of(ledger_lines(old_store, "HEAD")[0])
    lines = shard.read_bytes().splitlines(keepends=True)
    if tamper == "drop a line":
        shard.write_bytes(b"".join(lines[1:]))
    elif tamper == "repeat a line":
        shard.write_bytes(b"".join([*lines, lines[0]]))
    elif tamper == "change a line":
        shard.write_bytes(lines[0].replace(b'"sub_tier"', b'"sub_tier" ') + b"".join(lines[1:]))
    elif tamper == "other attribute":
        with (old_store / ".gitattributes").open("a") as attributes:
            attributes.write("*.txt text\n")
    elif tamper == "other change":
        (old_store / "identity").mkdir(exist_ok=True)
        (old_store / "identity/alice.md").write_text("# alice\n")
    else:
        git(old_store, "checkout", "HEAD", "--", "kb/promotions.jsonl")
    git(old_store, "add", "-A")
    refused = git(old_store, "commit", "-qm", "a migration, almost", check=False)
    assert refused.returncode != 0, tamper
    expected = {"other change": "identity/alice.md: I5 changed in the migration",
                "keep the old ledger": "I1 a migration to format 2 keeps the ledger of format 1",
                "other attribute": "I5 the migration to format 2 adds `*.txt text`"}
    said = refused.stdout + refused.stderr
    assert expected.get(tamper, f"{shard.relative_to(old_store)}: I1") in said, said


def test_a_change_of_format_other_than_the_migration_is_refused(store: Path) -> None:
    config = store / "memstack.yaml"
    config.write_text(config.read_text().replace("\nformat: 2\n", "\nformat: 1\n"))
    refused = git(store, "commit", "-qam", "back to format 1", check=False)
    assert refused.returncode != 0
    assert "memstack.yaml: I5 the store's format changed from 2 to 1" in refused.stdout + refused.stderr, refused.stderr


READS = (("recall", "--subject", "deploys"), ("fact", "history", "--subject", "deploys"),
         ("fact", "get-valid-at", "--ts", "2026-11-10T00:00:00Z"), ("intake", "list", "--agent", "alice"),
         ("search", "deploy"), ("boot", "show", "--agent", "alice"), ("export", "jsonl"))


def read_the_same(code: Path, store: Path, reads: tuple[tuple[str, ...], ...]) -> None:
    """Each read verb answers the same from the store made by the last release of format 1, read by that
    release, and from the store migrated, read by this one."""
    before = {verb: old_ok(code, *verb, "--json", cwd=store) for verb in reads}
    migrated_ok(store)
    for verb in reads:
        after = memstack(*verb, "--json", cwd=store)
        assert after.returncode == 0, (verb, after.stderr)
        if verb[0] == "search":  # a hit now also carries the record's fields (source; a fact's triple)
            old, new = json.loads(before[verb]), json.loads(after.stdout)
            new["hits"] = [{key: hit[key] for key in was} for hit, was in zip(new["hits"], old["hits"], strict=True)]
            assert new == old and len(new["hits"]) >= 1, verb
        else:
            assert after.stdout == before[verb], verb


def test_every_read_verb_answers_the_same_after_the_migration(code: Path, old_store: Path) -> None:
    read_the_same(code, old_store, READS)


def test_the_binder_waits_on_the_same_records_after_the_migration(code: Path, old_store: Path) -> None:
    assert json.loads(old_ok(code, "binder", "list", "--json", cwd=old_store))["items"]  # the ledger puts one there
    read_the_same(code, old_store, (("binder", "list"),))


def test_a_format_1_ledger_written_into_a_store_of_format_2_is_refused(old_store: Path) -> None:
    """The old ledger back in a migrated store (what a memstack before format 2 would append to): refused, so
    such a commit cannot reach the other clones."""
    migrated_ok(old_store)
    git(old_store, "checkout", "HEAD~1", "--", "kb/promotions.jsonl")
    git(old_store, "commit", "-qm", "the old ledger again", "--no-verify")
    refused = memstack("check", "--range", "HEAD~1..HEAD", cwd=old_store)
    assert refused.returncode == 1
    assert "kb/promotions.jsonl: I5 a store of format 2 has no kb/promotions.jsonl" in refused.stdout, refused.stdout


def test_pre_push_and_pre_receive_accept_the_migration_and_refuse_a_forged_one(old_store: Path, bare: Path) -> None:
    git(old_store, "remote", "add", "origin", str(bare))
    code, said = push(old_store, "origin", "HEAD:main", verify=True)
    assert code == 0, said  # the history of format 1 is accepted
    before = git(old_store, "rev-parse", "HEAD").stdout.strip()
    migrated_ok(old_store)
    code, said = push(old_store, "origin", "HEAD:main", verify=True)  # pre-push, then the server's pre-receive
    assert code == 0, said
    git(old_store, "reset", "-q", "--hard", before)
    shard = shard_of(ledger_lines(old_store, "HEAD")[0])
    git(old_store, "rm", "-q", "kb/promotions.jsonl")
    (old_store / shard).parent.mkdir(parents=True)
    (old_store / shard).write_bytes(ledger_lines(old_store, "HEAD")[0])  # one line of the ledger kept, the rest lost
    config = old_store / "memstack.yaml"
    config.write_text(config.read_text().replace("version: 1\n", "version: 1\nformat: 2\n"))
    git(old_store, "add", "-A")
    git(old_store, "commit", "-qm", "a forged migration", "--no-verify")
    code, said = push(old_store, "origin", "HEAD:forged")
    assert code != 0 and "I1" in said and "kb/promotions/" in said, said


def test_the_store_gains_the_templates_attribute_lines_it_lacks(old_store: Path) -> None:
    """The drivers of this format's files are named in the store's .gitattributes (the lines it has stay)."""
    attributes = old_store / ".gitattributes"
    line = "kb/binder.jsonl merge=memstack diff=memstack text eol=lf"
    attributes.write_text(attributes.read_text().replace(line + "\n", ""))
    git(old_store, "commit", "-qam", "an older template", "--no-verify")
    migrated_ok(old_store)
    assert line in git(old_store, "show", "HEAD:.gitattributes").stdout.splitlines()
    assert git(old_store, "status", "--porcelain").stdout == ""


@pytest.fixture(scope="module")
def decided(code: Path, made: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The store of format 1 with what memstack 0.1.0 let a person and a writer commit: a Binder ratification and
    a rejection, and an intake record at tier ratified, each committed through this memstack's pre-commit hook
    (a clone of format 1 whose memstack was upgraded), then promoted by 0.1.0."""
    store = copy(made, tmp_path_factory.mktemp("decided") / "store")
    waiting = [item["id"] for item in json.loads(old_ok(code, "binder", "list", "--json", cwd=store))["items"]]
    assert len(waiting) == 2
    for verb, intake_id in zip(("ratify", "reject"), waiting, strict=True):
        old_ok(code, "binder", verb, intake_id, "--by", "Ada", cwd=store)
        committed = git(store, "commit", "-qam", f"binder {verb}", check=False)
        assert committed.returncode == 0, committed.stdout + committed.stderr
    old_ok(code, "intake", "write", "--agent", "bob", "--created-at", "2026-11-05T08:00:00Z", "--content",
           "ratified by its writer", "--tier", "ratified", cwd=store)
    git(store, "add", "-A")
    committed = git(store, "commit", "-qm", "an intake record at tier ratified", check=False)
    assert committed.returncode == 0, committed.stdout + committed.stderr
    old_ok(code, "promote", cwd=store)  # the ratification becomes a fact at tier ratified
    assert not git(store, "status", "--porcelain").stdout
    return store


def root_range(store: Path) -> str:
    return git(store, "rev-list", "--max-parents=0", "HEAD").stdout.strip() + "..HEAD"


def test_binder_decisions_of_format_1_pass_the_checks_of_its_history(decided: Path, tmp_path: Path) -> None:
    """A decision in a commit of format 1 is checked against that commit's ledger, kb/promotions.jsonl."""
    for args in (("--range", root_range(decided)), ("--all",)):
        done = memstack("check", *args, cwd=decided)
        assert done.returncode == 0, (args, done.stdout, done.stderr)
    store = copy(decided, tmp_path / "store")
    routed = [json.loads(line) for line in ledger_lines(store, "HEAD")]
    knowledge = next(line["intake_id"] for line in routed if line["sub_tier"] == "knowledge")
    with (store / "kb/binder.jsonl").open("a") as log:  # a record promotion made knowledge, never sent to the Binder
        log.write(json.dumps({"by": "Ada", "decided_at": 1796418942244, "decision": "reject",
                              "intake_id": knowledge}, separators=(",", ":")) + "\n")
    git(store, "commit", "-qam", "a decision on a record the Binder never had", "--no-verify")
    refused = memstack("check", "--range", "HEAD~1..HEAD", cwd=store)
    assert refused.returncode == 1
    assert f"decision on intake record {knowledge}, which promotion never routed to the Binder (no line of" \
           " kb/promotions.jsonl puts it there)" in refused.stdout, refused.stdout


def test_a_migrated_store_with_binder_decisions_and_ratified_intake_passes_its_whole_history(
        decided: Path, tmp_path: Path) -> None:
    """After the migration, `check --all` and `check --range` over the whole history pass; an intake record at
    tier ratified written in a commit of format 2 is refused."""
    store = copy(decided, tmp_path / "store")
    migrated_ok(store)
    for args in (("--range", root_range(store)), ("--all",)):
        done = memstack("check", *args, cwd=store)
        assert done.returncode == 0, (args, done.stdout, done.stderr)
    written = memstack("intake", "write", "--agent", "bob", "--content", "ratified by hand", "--json", cwd=store)
    assert written.returncode == 0, written.stderr
    path = store / json.loads(written.stdout)["path"]
    path.write_text(path.read_text().replace('"tier":"observed"', '"tier":"ratified"'))
    git(store, "add", "-A")
    refused = git(store, "commit", "-qm", "an intake record at tier ratified, by hand", check=False)
    assert refused.returncode != 0
    said = "I5 intake record at tier 'ratified': only a person's Binder ratification"
    assert said in refused.stdout + refused.stderr, refused.stdout + refused.stderr
    git(store, "commit", "-qm", "an intake record at tier ratified, by hand", "--no-verify")
    refused_range = memstack("check", "--range", "HEAD~1..HEAD", cwd=store)
    assert refused_range.returncode == 1 and said in refused_range.stdout, refused_range.stdout
