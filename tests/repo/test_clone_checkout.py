"""A clone that checked out no store says what to run, not "run `memstack init`".

The way a team gets there: the bare remote is made with git's default branch (`master`), the store
pushes `main`, and `git clone` warns "remote HEAD refers to nonexistent ref" and checks out nothing.
"""

import subprocess
from pathlib import Path

from helpers import git, memstack


def bare(path: Path, branch: str = "master") -> Path:
    """A bare remote made as `git init --bare` makes one with git's default branch."""
    subprocess.run(["git", "init", "-q", "--bare", f"--initial-branch={branch}", str(path)], check=True)
    return path


def test_a_clone_of_a_remote_whose_head_names_a_missing_branch_says_to_check_out_main(store: Path,
                                                                                       tmp_path: Path) -> None:
    remote = bare(tmp_path / "remote.git")
    git(store, "remote", "add", "origin", str(remote))
    git(store, "push", "-q", "origin", "main")
    cloned = git(tmp_path, "clone", str(remote), "bob")
    assert "remote HEAD refers to nonexistent ref" in cloned.stderr  # what the user saw
    bob = tmp_path / "bob"
    for verb in (("install",), ("status",), ("intake", "write", "--content", "x", "--agent", "bob")):
        told = memstack(*verb, cwd=bob)
        assert told.returncode == 2, (verb, told.stdout, told.stderr)
        assert "no commit checked out" in told.stderr and "store is on origin/main" in told.stderr, told.stderr
        assert "`git checkout main`" in told.stderr and "memstack init" not in told.stderr, told.stderr
        assert len(told.stderr.strip().splitlines()) == 1, told.stderr
    recalled = memstack("recall", "--subject", "deploys", cwd=bob)  # no store answers an empty page, and says why
    assert recalled.returncode == 0 and "`git checkout main`" in recalled.stderr, recalled.stderr
    named = memstack("--store", "bob", "install", cwd=tmp_path)  # the store named, not found: the same advice
    assert named.returncode == 2 and "(from --store) holds no store" in named.stderr, named.stderr
    assert "`git checkout main` in it" in named.stderr and "memstack init" not in named.stderr, named.stderr
    assert not (bob / ".git" / "hooks" / "pre-commit").exists()  # nothing installed
    assert not any(p.name != ".git" for p in bob.iterdir())  # nothing written
    git(bob, "checkout", "-q", "main")  # as told
    assert memstack("install", cwd=bob).returncode == 0
    assert memstack("status", cwd=bob).returncode == 0
    # and the remote's fix it names works for the next clone
    git(tmp_path, "--git-dir", str(remote), "symbolic-ref", "HEAD", "refs/heads/main")
    git(tmp_path, "clone", "-q", str(remote), "carol")
    assert (tmp_path / "carol" / "memstack.yaml").is_file()


def test_a_clone_of_an_empty_remote_says_to_push_the_store_first(tmp_path: Path) -> None:
    remote = bare(tmp_path / "remote.git", "main")
    git(tmp_path, "clone", "-q", str(remote), "bob")
    told = memstack("install", cwd=tmp_path / "bob")
    assert told.returncode == 2
    assert "empty clone" in told.stderr and "git push -u origin main" in told.stderr, told.stderr


def test_a_checkout_of_another_branch_names_the_branch_holding_the_store(store: Path, tmp_path: Path) -> None:
    remote = bare(tmp_path / "remote.git", "main")
    git(store, "remote", "add", "origin", str(remote))
    git(store, "push", "-q", "origin", "main")
    git(tmp_path, "clone", "-q", str(remote), "bob")
    bob = tmp_path / "bob"
    git(bob, "checkout", "-q", "--orphan", "notes")
    git(bob, "rm", "-rfq", ".")
    (bob / "README").write_text("notes\n")
    git(bob, "add", "README")
    git(bob, "commit", "-qm", "notes")
    told = memstack("status", cwd=bob)
    assert told.returncode == 2, told.stderr
    assert "a checkout of a commit with no store; the store is on origin/main: `git checkout main`" in told.stderr


def test_outside_any_clone_the_advice_is_unchanged(tmp_path: Path) -> None:
    told = memstack("status", cwd=tmp_path)
    assert told.returncode == 2 and "`memstack init PATH` makes one" in told.stderr, told.stderr
    git(tmp_path, "init", "-q")  # a repository with no remote and no commit: nothing more to say either
    told = memstack("status", cwd=tmp_path)
    assert told.returncode == 2 and "`memstack init PATH` makes one" in told.stderr, told.stderr
