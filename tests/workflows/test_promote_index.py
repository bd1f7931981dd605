"""A promotion commits its memory and nothing else, and leaves the user's index as `git commit PATHS` would.

What the user has staged outside the memory (a new file, a change of a tracked one) stays out of the
promotion commit and stays staged; a memory file they staged half-way is committed as the work tree holds
it; after the promotion the index holds HEAD's memory files, so `git status` shows no memory change. For
a store at the top of its repository and for a store in a folder of a code repository. A clone that signs
its commits (`commit.gpgSign`) gets a signed promotion commit, as from `git commit`.
"""

import shutil
import subprocess
from pathlib import Path

import pytest

from helpers import code_with_memory, git, memstack


@pytest.fixture(params=["top", "folder"])
def where(request: pytest.FixtureRequest, store: Path, tmp_path: Path) -> tuple[Path, Path, str]:
    """(the repository's top, the store, the store's folder in it)."""
    if request.param == "top":
        return store, store, ""
    top = code_with_memory(tmp_path / "code", {"README.md": "# a project\n"})
    return top, top / ".memory", ".memory/"


def write_intake(store: Path, content: str) -> None:
    result = memstack("intake", "write", "--content", content, "--tier", "verified", "--confidence", "0.9",
                      "--subject", "db", "--predicate", f"decided-{content}", "--object", content, cwd=store)
    assert result.returncode == 0, result.stderr


def test_a_promotion_commits_only_memory_and_keeps_what_the_user_staged(where: tuple[Path, Path, str]) -> None:
    top, store, folder = where
    (top / "notes.txt").write_text("my own notes\n")
    with (top / "README.md").open("a") as readme:
        readme.write("a line of mine\n")
    git(top, "add", "notes.txt", "README.md")
    write_intake(store, "postgres")
    git(top, "add", "-A", "--", f"{folder}intake")  # staged half-way: the next record is not
    write_intake(store, "sqlite")
    (intake,) = git(top, "ls-files", "--", f"{folder}intake").stdout.split()
    before = git(top, "rev-parse", "HEAD").stdout.strip()

    promoted = memstack("promote", cwd=store)
    assert promoted.returncode == 0, promoted.stderr

    assert git(top, "rev-parse", "HEAD^").stdout.strip() == before
    committed = set(git(top, "show", "--name-only", "--format=", "HEAD").stdout.split())
    assert committed and all(path.startswith(f"{folder}kb/") or path.startswith(f"{folder}intake/")
                             or path == f"{folder}willow.md" for path in committed), committed
    assert intake in committed
    assert git(top, "show", f"HEAD:{intake}").stdout == (top / intake).read_text()  # both records
    # What the user staged is still staged, as they staged it, and nothing else is.
    assert set(git(top, "diff", "--cached", "--name-only").stdout.split()) == {"notes.txt", "README.md"}
    assert git(top, "show", ":notes.txt").stdout == "my own notes\n"
    assert git(top, "show", ":README.md").stdout.endswith("a line of mine\n")
    # The memory in the index is HEAD's: no memory change shows, staged or not.
    memory = [f"{folder}kb", f"{folder}intake", f"{folder}willow.md"]
    assert git(top, "diff", "--cached", "--name-only", "HEAD", "--", *memory).stdout == ""
    assert git(top, "status", "--porcelain", "--untracked-files=all", "--", *memory).stdout == ""
    assert memstack("check", "--range", f"{before}..HEAD", cwd=store).returncode == 0


@pytest.mark.skipif(shutil.which("ssh-keygen") is None, reason="ssh-keygen is not installed")
def test_a_clone_that_signs_its_commits_gets_a_signed_promotion_commit(store: Path, tmp_path: Path) -> None:
    key = tmp_path / "key"
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(key)], check=True)
    for name, value in (("gpg.format", "ssh"), ("user.signingkey", str(key)), ("commit.gpgsign", "true")):
        git(store, "config", name, value)
    write_intake(store, "postgres")
    before = git(store, "rev-parse", "HEAD").stdout.strip()
    promoted = memstack("promote", cwd=store)
    assert promoted.returncode == 0, promoted.stderr
    assert git(store, "rev-parse", "HEAD^").stdout.strip() == before
    assert "\ngpgsig " in git(store, "cat-file", "-p", "HEAD").stdout
