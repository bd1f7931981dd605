"""Replace refs: `refs/replace/<X>` makes git read another commit wherever X is named. memstack checks the
commits themselves: the guarded remote (a bare repository set up by `memstack install`) refuses a push that
creates, moves or deletes a replace ref, and a commit hidden behind one (on the remote, or fetched into a
clone) is checked as itself by pre-receive and by `memstack check --range`."""

from pathlib import Path

import pytest

from check_support import append, committed, head, intake, jsonl, run_check, sneak, write
from helpers import git, memstack

LOG = "intake/alice/2026-01-01.jsonl"
REMOVED = f"{LOG}:2: I1 lines 2-2 were removed"


def push(root: Path, *refspecs: str) -> tuple[int, str]:
    """`git push --no-verify origin REFSPECS`: the clone's own pre-push hook skipped, the remote decides."""
    proc = git(root, "push", "--no-verify", "origin", *refspecs, check=False)
    return proc.returncode, proc.stdout + proc.stderr


def ref(remote: Path, name: str) -> str:
    return git(remote, "rev-parse", "--verify", "-q", name, check=False).stdout.strip()


@pytest.fixture
def origin(repo: Path, tmp_path: Path) -> Path:
    """A bare remote guarded as docs/sync.md says (`memstack install` in it), holding the store's main branch
    with two intake lines."""
    remote = tmp_path / "remote.git"
    git(tmp_path, "init", "-q", "--bare", "-b", "main", str(remote))
    installed = memstack("--store", str(remote), "install")
    assert installed.returncode == 0, installed.stdout + installed.stderr
    assert (remote / "hooks" / "pre-receive").is_file()
    git(repo, "remote", "add", "origin", str(remote))
    write(repo, LOG, jsonl(intake(1), intake(2)))
    committed(repo, "two observations")
    code, out = push(repo, "main")
    assert code == 0 and "memstack check: ok" in out, out
    return remote


def hidden(repo: Path) -> tuple[str, str]:
    """X, a commit that removes an intake line (refused by I1), made without the hooks, and Y, a harmless commit
    on the same parent with the same message (the parent's tree): what a replace ref would show in X's place."""
    parent = head(repo)
    write(repo, LOG, jsonl(intake(1)))
    bad = sneak(repo, "tidy the log")
    harmless = git(repo, "commit-tree", "-p", parent, "-m", "tidy the log", f"{parent}^{{tree}}").stdout.strip()
    return bad, harmless


def test_a_push_that_creates_a_replace_ref_is_refused(repo: Path, origin: Path) -> None:
    bad, harmless = hidden(repo)
    code, out = push(repo, f"{harmless}:refs/replace/{bad}")
    assert code != 0, out
    assert "pre-receive hook declined" in out
    assert f"refs/replace/{bad}: I1 a replace ref makes git show another commit in a commit's place" in out
    assert ref(origin, f"refs/replace/{bad}") == ""


def test_a_replace_ref_on_the_remote_can_be_neither_moved_nor_deleted_by_a_push(repo: Path, origin: Path) -> None:
    bad, harmless = hidden(repo)
    git(repo, "push", "-q", "--no-verify", "origin", f"{harmless}:refs/heads/side")
    git(origin, "update-ref", f"refs/replace/{bad}", harmless)  # one that got there before pushes were refused
    for refspec in (f"{bad}:refs/replace/{bad}", f":refs/replace/{bad}"):
        code, out = push(repo, "--force", refspec)
        assert code != 0, (refspec, out)
        assert "I1 a replace ref makes git show another commit" in out
        assert ref(origin, f"refs/replace/{bad}") == harmless


def test_a_commit_hidden_behind_a_replace_ref_on_the_remote_is_checked_as_itself(repo: Path, origin: Path) -> None:
    before = ref(origin, "main")
    bad, harmless = hidden(repo)
    git(repo, "push", "-q", "--no-verify", "origin", f"{harmless}:refs/heads/side")
    git(origin, "update-ref", f"refs/replace/{bad}", harmless)  # one that got there before pushes were refused
    code, out = push(repo, "main")
    assert code != 0, out
    assert f"commit {bad[:12]} 'tidy the log'" in out
    assert REMOVED in out
    assert ref(origin, "main") == before


def test_a_commit_a_replace_ref_holds_on_the_remote_is_checked_when_a_branch_brings_it(repo: Path,
                                                                                      origin: Path) -> None:
    """A replace ref pushed before they were refused may hold a commit that was checked in another's place."""
    bad, _ = hidden(repo)
    git(origin, "fetch", "-q", str(repo), f"{bad}:refs/replace/{'0' * 40}")
    assert ref(origin, f"refs/replace/{'0' * 40}") == bad
    code, out = push(repo, "main")
    assert code != 0, out
    assert REMOVED in out


def test_check_range_in_a_clone_that_fetched_a_replace_ref_checks_the_real_commit(repo: Path, origin: Path,
                                                                                   tmp_path: Path) -> None:
    base = head(repo)
    bad, harmless = hidden(repo)
    git(repo, "push", "-q", "--no-verify", "origin", f"{harmless}:refs/heads/side")
    git(origin, "update-ref", f"refs/replace/{bad}", harmless)
    append(repo, LOG, jsonl(intake(3)))
    tip = sneak(repo, "a clean commit on top")
    git(repo, "fetch", "-q", "origin", "refs/replace/*:refs/replace/*")
    assert git(repo, "show", "-s", "--format=%T", bad).stdout.strip() == git(repo, "rev-parse", f"{base}^{{tree}}"
                                                                               ).stdout.strip()  # git is fooled
    proc = run_check(repo, "--range", f"{base}..{tip}")
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert f"commit {bad[:12]} 'tidy the log'" in proc.stdout
    assert REMOVED in proc.stdout
    assert "'a clean commit on top'" not in proc.stdout  # checked against X itself, it only appends
