"""Pushes: the server-side pre-receive hook on a real bare repository, and pre-commit's pre-push stage."""

import shutil
from pathlib import Path

import pytest

from check_support import append, committed, copy_store, guarded_bare, head, intake, jsonl, run_check, sneak, write
from helpers import git

LOG = "intake/alice/2026-01-01.jsonl"


def push(root: Path, *args: str, verify: bool = False) -> tuple[int, str]:
    """`git push` to origin; the local pre-push hook skipped unless `verify` (so the server decides)."""
    proc = git(root, "push", *([] if verify else ["--no-verify"]), "origin", *args, check=False)
    return proc.returncode, proc.stdout + proc.stderr


def remote_head(remote: Path, ref: str = "refs/heads/main") -> str:
    return git(remote, "rev-parse", "--verify", "-q", ref, check=False).stdout.strip()


@pytest.fixture(scope="module")
def _origin(store_template: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The template store's main branch pushed to a bare remote guarded by hooks/pre-receive, once for the
    module."""
    folder = tmp_path_factory.mktemp("origin")
    store = copy_store(store_template, folder)
    git(store, "remote", "add", "origin", str(guarded_bare(folder / "remote.git")))
    code, out = push(store, "main")
    assert code == 0, out
    assert "memstack check: ok" in out  # the hook ran: the root commit was checked against the empty tree
    return folder / "remote.git"


@pytest.fixture
def origin(repo: Path, tmp_path: Path, _origin: Path) -> Path:
    """The store's main branch pushed to a bare remote guarded by hooks/pre-receive: a copy of `_origin` (the
    same commit as `repo`'s), fetched as the push leaves it."""
    remote = tmp_path / "remote.git"
    shutil.copytree(_origin, remote, symlinks=True)
    git(repo, "remote", "add", "origin", str(remote))
    git(repo, "fetch", "-q", "origin")
    assert remote_head(remote) == head(repo)
    return remote


# ---- pre-receive (server side) ---------------------------------------------------------------------

def test_the_server_accepts_valid_work(repo: Path, origin: Path) -> None:
    write(repo, LOG, jsonl(intake(1)))
    committed(repo)
    append(repo, LOG, jsonl(intake(2)))
    tip = committed(repo)
    code, out = push(repo, "main")
    assert code == 0, out
    assert remote_head(origin) == tip


def test_the_server_refuses_a_push_carrying_a_no_verify_commit(repo: Path, origin: Path) -> None:
    before = remote_head(origin)
    write(repo, LOG, jsonl(intake(1), intake(2)))
    committed(repo)
    write(repo, LOG, jsonl(intake(1)))
    bad = sneak(repo)
    append(repo, LOG, jsonl(intake(3)))
    sneak(repo, "a clean commit on top")
    code, out = push(repo, "main")
    assert code != 0
    assert "pre-receive hook declined" in out
    assert f"commit {bad[:12]} 'sneaked past the hook'" in out
    assert f"{LOG}:2: I1 lines 2-2 were removed" in out
    assert remote_head(origin) == before


def test_a_new_branch_is_checked_for_the_commits_the_server_lacks(repo: Path, origin: Path) -> None:
    git(repo, "checkout", "-q", "-b", "topic")
    code, out = push(repo, "topic")  # nothing new: every commit is already on main
    assert code == 0, out
    write(repo, "kb/facts/alice/notes.md", "stray\n")
    sneak(repo)
    code, out = push(repo, "topic:other")
    assert code != 0
    assert "kb/facts/alice/notes.md: I5 stray file" in out
    assert remote_head(origin, "refs/heads/other") == ""


def test_deleting_a_branch_is_allowed(repo: Path, origin: Path) -> None:
    code, out = push(repo, "main:doomed")
    assert code == 0, out
    code, out = push(repo, ":doomed")
    assert code == 0, out
    assert remote_head(origin, "refs/heads/doomed") == ""


def test_a_force_push_that_loses_records_is_refused(repo: Path, origin: Path) -> None:
    write(repo, LOG, jsonl(intake(1)))
    committed(repo)
    append(repo, LOG, jsonl(intake(2)))
    pushed = committed(repo)
    assert push(repo, "main")[0] == 0
    # Rewrite history: every new commit is clean against its own parent, but record 2 is gone.
    git(repo, "reset", "-q", "--hard", "HEAD~1")
    append(repo, LOG, jsonl(intake(3)))
    committed(repo, "rewritten")
    code, out = push(repo, "--force", "main")
    assert code != 0
    assert "force push: the old tip's memory must survive in the new tip" in out
    assert f"{LOG}:2: I1 line 2 of the other side is lost" in out
    assert remote_head(origin) == pushed


def test_a_force_push_that_keeps_every_record_is_accepted(repo: Path, origin: Path) -> None:
    write(repo, LOG, jsonl(intake(1)))
    committed(repo)
    assert push(repo, "main")[0] == 0
    git(repo, "commit", "-q", "--amend", "-m", "reworded", "--no-verify")
    code, out = push(repo, "--force", "main")
    assert code == 0, out


def test_a_tag_on_a_checked_commit_is_accepted(repo: Path, origin: Path) -> None:
    git(repo, "tag", "-a", "-m", "release", "v1")
    code, out = push(repo, "v1")
    assert code == 0, out


def test_pre_receive_reads_old_new_ref_lines(repo: Path) -> None:
    tip = head(repo)
    zero = "0" * 40
    proc = run_check(repo, "--pre-receive", stdin=f"{zero} {tip} refs/heads/new\n{tip} {zero} refs/heads/gone\n")
    assert proc.returncode == 0, proc.stdout  # in the clone every commit is on a ref already: nothing to check
    proc = run_check(repo, "--pre-receive", stdin="garbage\n")
    assert proc.returncode == 2
    assert "expected `old new ref` lines" in proc.stderr


# ---- pre-push (pre-commit's stage, in the clone) -----------------------------------------------------

def test_the_store_installs_a_pre_push_hook_that_refuses_bad_commits(repo: Path, tmp_path: Path) -> None:
    plain = tmp_path / "plain.git"  # a remote without any hook: only the clone's pre-push guards it
    git(tmp_path, "init", "-q", "--bare", str(plain))
    git(repo, "remote", "add", "origin", str(plain))
    assert (repo / ".git/hooks/pre-push").exists()
    code, out = push(repo, "main", verify=True)  # a first push: the whole branch, root commit included
    assert code == 0, out
    assert "memstack check (the commits being pushed)" in out
    write(repo, "identity/alice.md", "# alice\n\napi_key = 123\n")  # pragma: allowlist secret
    bad = sneak(repo)
    code, out = push(repo, "main", verify=True)
    assert code != 0
    assert f"commit {bad[:12]}" in out and "identity/alice.md:3: I6" in out
    assert git(plain, "rev-parse", "main").stdout.strip() != bad
    code, out = push(repo, "main")  # `git push --no-verify` skips it (the server must catch it: pre-receive, CI)
    assert code == 0


def test_pre_push_checks_a_new_branch_from_where_it_leaves_the_remote(repo: Path, tmp_path: Path) -> None:
    plain = tmp_path / "plain.git"
    git(tmp_path, "init", "-q", "--bare", str(plain))
    git(repo, "remote", "add", "origin", str(plain))
    assert push(repo, "main", verify=True)[0] == 0
    git(repo, "checkout", "-q", "-b", "topic")
    write(repo, LOG, jsonl(intake(1)))
    committed(repo)
    write(repo, LOG, b"")
    sneak(repo, "truncated")
    code, out = push(repo, "topic", verify=True)
    assert code != 0
    assert f"{LOG}:1: I1 lines 1-1 were removed" in out
    assert "1 violation (I1) in 1 of 2 commits" in out


def test_pre_push_reads_pre_commit_variables(repo: Path) -> None:
    base = head(repo)
    write(repo, "kb/binder.jsonl", "{}\n")
    bad = sneak(repo)
    proc = run_check(repo, "--pre-push", env={"PRE_COMMIT_FROM_REF": base, "PRE_COMMIT_TO_REF": bad})
    assert proc.returncode == 1
    assert "kb/binder.jsonl:1: I5 invalid binder record" in proc.stdout


def test_pre_push_does_not_blame_commits_the_remote_already_has(repo: Path, tmp_path: Path) -> None:
    """Merging a branch already on the remote: its commits were the remote's to check, not this push's."""
    plain = tmp_path / "plain.git"
    git(tmp_path, "init", "-q", "--bare", str(plain))
    git(repo, "remote", "add", "origin", str(plain))
    assert push(repo, "main", verify=True)[0] == 0
    git(repo, "checkout", "-q", "-b", "other")
    write(repo, "kb/old-stray.txt", "from before the hooks\n")
    sneak(repo)
    assert push(repo, "other")[0] == 0  # --no-verify: the remote has it now
    git(repo, "checkout", "-q", "main")
    write(repo, LOG, jsonl(intake(1)))
    committed(repo)
    assert git(repo, "merge", "-q", "--no-edit", "--no-verify", "other").returncode == 0
    code, out = push(repo, "main", verify=True)
    assert code == 0, out
    assert "Passed" in out  # the hook ran and let it through


def test_a_first_push_names_the_branch_it_checks_whole(repo: Path, tmp_path: Path) -> None:
    """A push to an empty remote checks the branch from its root: the report names the branch whole (it was cut
    to 12 characters, as a commit id is)."""
    plain = tmp_path / "plain.git"
    git(tmp_path, "init", "-q", "--bare", str(plain))
    git(repo, "remote", "add", "origin", str(plain))
    git(repo, "checkout", "-q", "-b", "a-branch-with-a-long-name")
    write(repo, "kb/binder.jsonl", "{}\n")
    sneak(repo)
    code, out = push(repo, "a-branch-with-a-long-name", verify=True)
    assert code != 0 and "kb/binder.jsonl:1: I5" in out, out
    assert "the commits pushed (refs/heads/a-branch-with-a-long-name)" in out, out
