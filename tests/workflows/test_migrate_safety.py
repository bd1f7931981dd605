"""`memstack migrate` beside the rest of a clone's life: writers running meanwhile lose nothing (they wait for
the migration, then land in format 2); what the user staged stays staged and out of the migration commit; a git
operation under way is refused before anything is written; memory written after an interrupted migration stays
uncommitted and out of the migration the rerun finishes; a CI workflow that installs the old release is named.
"""

import subprocess
import time
from pathlib import Path

from migrate_support import copy, migrated_ok, old_ok

from helpers import MEMSTACK, git, memstack, tree_snapshot
from memstack import __version__

MIGRATION = "memstack migrate: store format 1 -> 2"


def snapshot(top: Path) -> dict[str, bytes]:
    """`tree_snapshot`, a store's `.memstack/` (caches, locks) left out also in a folder of a code repository."""
    return {path: data for path, data in tree_snapshot(top).items() if ".memstack" not in Path(path).parts}


def refused_one_line(store: Path, top: Path, *said: str) -> None:
    before, head, index = snapshot(top), git(top, "rev-parse", "HEAD").stdout, git(top, "ls-files", "-s").stdout
    refused = memstack("migrate", cwd=store)
    assert refused.returncode == 2, refused.stdout + refused.stderr
    assert refused.stderr.count("\n") == 1 and all(s in refused.stderr for s in said), refused.stderr
    assert snapshot(top) == before and git(top, "rev-parse", "HEAD").stdout == head
    assert git(top, "ls-files", "-s").stdout == index


def test_writes_made_while_the_migration_runs_are_never_lost(old_store: Path, tmp_path: Path) -> None:
    """Two writers (an agent's MCP server, say) write intake while the migration runs. A write made before
    `format: 2` is refused (this memstack reads format 2 only); every write reported as written is in the
    store after, uncommitted, and commits as an ordinary commit of format 2."""
    stop = tmp_path / "stop"
    loop = (f"i=0; until [ -e {stop} ]; do i=$((i+1)); {MEMSTACK} --agent alice intake write --content \"w$1 $i\""
            " --created-at 2026-11-02T12:00:00Z 2>/dev/null; done")
    writers = [subprocess.Popen(["bash", "-c", loop, "loop", str(n)], cwd=old_store, stdout=subprocess.PIPE,
                                text=True) for n in range(2)]
    time.sleep(0.3)
    done = memstack("migrate", cwd=old_store)
    time.sleep(1.0)  # writes after the migration too
    stop.touch()
    written = [line.split()[1] for w in writers for line in w.communicate(timeout=120)[0].splitlines()]
    assert done.returncode == 0, done.stdout + done.stderr
    assert git(old_store, "log", "-1", "--format=%s").stdout.strip() == MIGRATION
    day = (old_store / "intake/alice/2026-11-02.jsonl").read_text()
    lost = [record for record in written if record not in day]
    assert written and not lost, f"{len(lost)} of {len(written)} writes reported written are gone: {lost}"
    assert git(old_store, "diff", "--name-only", "HEAD~1", "HEAD", "--", "intake").stdout == ""
    git(old_store, "add", "-A")
    committed = git(old_store, "commit", "-qm", "the writes", check=False)  # through this memstack's hook
    assert committed.returncode == 0, committed.stdout + committed.stderr
    assert memstack("check", "--range", "HEAD~2..HEAD", cwd=old_store).returncode == 0


def code_store(code: Path, top: Path) -> Path:
    """A code repository whose store of format 1 (`memstack init .memory` of 0.1.0) holds a promotion."""
    top.mkdir()
    git(top, "init", "-q", "-b", "main")
    (top / "app.py").write_text("print(1)\n")
    git(top, "add", "app.py")
    git(top, "commit", "-qm", "code")
    old_ok(code, "init", ".memory", "--agent", "dev", cwd=top)
    old_ok(code, "intake", "write", "--content", "we ship on Fridays", cwd=top)
    old_ok(code, "promote", cwd=top)
    assert not git(top, "status", "--porcelain").stdout
    return top


def test_code_the_user_staged_stays_staged_and_out_of_the_migration_commit(code: Path, tmp_path: Path) -> None:
    top = code_store(code, tmp_path / "code")
    (top / "app.py").write_text("print(2)\n")
    git(top, "add", "app.py")
    migrated_ok(top / ".memory")
    assert git(top, "log", "-1", "--format=%s").stdout.strip() == MIGRATION
    committed = git(top, "show", "--name-only", "--format=", "HEAD").stdout.split()
    assert committed and all(path.startswith(".memory/") for path in committed), committed
    assert git(top, "status", "--porcelain").stdout == "M  app.py\n"  # staged, as it was
    assert git(top, "diff", "--cached", "app.py").stdout.count("+print(2)") == 1


def test_a_pending_merge_is_refused_before_anything_is_written(code: Path, tmp_path: Path) -> None:
    top = code_store(code, tmp_path / "code")
    git(top, "checkout", "-qb", "feature")
    (top / "lib.py").write_text("x = 1\n")
    git(top, "add", "lib.py")
    git(top, "commit", "-qm", "feature")
    git(top, "checkout", "-q", "main")
    git(top, "merge", "-q", "--no-commit", "--no-ff", "feature")
    refused_one_line(top / ".memory", top, "a merge is in progress", "git merge --abort", "nothing was written")


def test_a_merge_with_a_conflict_in_a_file_of_the_user_s_is_refused_before_anything_is_written(
        old_store: Path) -> None:
    (old_store / "notes.txt").write_text("notes\n")
    git(old_store, "add", "notes.txt")
    git(old_store, "commit", "-qm", "notes", "--no-verify")
    git(old_store, "checkout", "-qb", "side")
    (old_store / "notes.txt").write_text("side\n")
    git(old_store, "commit", "-qam", "side", "--no-verify")
    git(old_store, "checkout", "-q", "main")
    (old_store / "notes.txt").write_text("main\n")
    git(old_store, "commit", "-qam", "main", "--no-verify")
    assert git(old_store, "merge", "side", check=False).returncode != 0  # the conflict
    refused_one_line(old_store, old_store, "a merge is in progress", "nothing was written")


def test_a_staged_file_of_the_user_s_in_the_store_s_repository_stays_staged_and_out(old_store: Path) -> None:
    (old_store / "notes.txt").write_text("to do\n")
    git(old_store, "add", "notes.txt")
    assert migrated_ok(old_store)["ci_installs"] is None  # the workflow installs `memstack.version`, now this one
    assert "notes.txt" not in git(old_store, "show", "--name-only", "--format=", "HEAD").stdout.split()
    assert git(old_store, "status", "--porcelain").stdout == "A  notes.txt\n"
    assert memstack("check", "--range", "HEAD~1..HEAD", cwd=old_store).returncode == 0


def test_memory_written_after_an_interrupted_migration_stays_out_of_the_migration_the_rerun_finishes(
        old_store: Path, tmp_path: Path) -> None:
    """Killed once `format: 2` is in the work tree, the migration leaves a store every write accepts. An intake
    record and a fact written then (the fact feeds a view) stay uncommitted: the rerun's commit is what an
    uninterrupted run commits, and they then commit the ordinary way."""
    whole = copy(old_store, tmp_path / "whole")
    migrated_ok(whole)
    for step in range(1, 40):
        run = copy(old_store, tmp_path / f"step-{step}")
        memstack("migrate", cwd=run, env={"MEMSTACK_TEST_KILL_AT": str(step)})
        if "format: 2" in (run / "memstack.yaml").read_text() and \
                git(run, "log", "-1", "--format=%s").stdout.strip() != MIGRATION:
            break
    else:
        raise AssertionError("no kill left format 2 in the work tree before the commit")
    for verb in (("intake", "write", "--agent", "bob", "--content", "written after the kill"),
                 ("capture", "--agent", "alice", "--subject", "deploys", "--predicate", "decided", "--object",
                  "wednesday", "--valid-from", "2026-11-20T00:00:00Z", "--recorded-at", "2026-11-20T00:00:00Z")):
        wrote = memstack(*verb, cwd=run)
        assert wrote.returncode == 0, wrote.stderr
    later = sorted(git(run, "status", "--porcelain", "--", "intake", "kb/facts").stdout.splitlines())
    assert len(later) == 2, later
    done = migrated_ok(run)
    assert done["migrated"] and len(done["uncommitted"]) == 2 and "stays uncommitted" in done["message"]
    assert git(run, "rev-parse", "HEAD^{tree}").stdout == git(whole, "rev-parse", "HEAD^{tree}").stdout
    assert sorted(git(run, "status", "--porcelain").stdout.splitlines()) == later
    git(run, "add", "-A")
    committed = git(run, "commit", "-qm", "written after the kill", check=False)
    assert committed.returncode == 0, committed.stdout + committed.stderr


def test_a_lock_a_killed_git_left_is_named_with_what_to_do(old_store: Path) -> None:
    (old_store / ".git/index.lock").write_bytes(b"")
    refused_one_line(old_store, old_store, ".git/index.lock", "remove")


def test_a_ci_workflow_pinned_to_the_old_release_is_named_with_what_to_set(old_store: Path) -> None:
    workflow = old_store / ".github/workflows/memstack.yml"
    text = workflow.read_text()
    assert 'MEMSTACK_INSTALL: ""' in text
    workflow.write_text(text.replace('MEMSTACK_INSTALL: ""',
                                     'MEMSTACK_INSTALL: "git+https://github.com/acme/memstack@v0.1.0"'))
    git(old_store, "commit", "-qam", "CI: install from the tag", "--no-verify")
    done = migrated_ok(old_store)
    assert done["ci_installs"] == [".github/workflows/memstack.yml", "git+https://github.com/acme/memstack@v0.1.0",
                                   f"git+https://github.com/acme/memstack@v{__version__}"]
    assert "MEMSTACK_INSTALL" in done["message"] and f"acme/memstack@v{__version__}'" in done["message"]
    assert ".github" not in git(old_store, "show", "--name-only", "--format=", "HEAD").stdout  # the user's to commit
