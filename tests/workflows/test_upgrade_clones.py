"""A team upgrading from the last release of format 1 (tag v0.1.0) to this one: the clones that pull the
migration, and the remote that guards it. The old release runs from a virtual environment of its own, as it
does after an upgrade into a new one: its `memstack install` recorded that interpreter in the clone."""

import os
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest
from migrate_support import TAG

from helpers import git, memstack
from memstack import __version__

OLD = TAG.lstrip("v")


@pytest.fixture(scope="module")
def old_python(code: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The Python of a virtual environment holding the old release (its code, then this environment's
    libraries), with the release's metadata, as pip leaves it."""
    env = tmp_path_factory.mktemp("old-env")
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(env)], check=True)
    site = Path(subprocess.run([env / "bin" / "python", "-c", "import sysconfig; print(sysconfig.get_paths()"
                                "['purelib'])"], capture_output=True, text=True, check=True).stdout.strip())
    (site / "old-memstack.pth").write_text(f"{code}\n{sysconfig.get_paths()['purelib']}\n")
    (site / f"memstack-{OLD}.dist-info").mkdir()
    (site / f"memstack-{OLD}.dist-info" / "METADATA").write_text(f"Metadata-Version: 2.1\nName: memstack\n"
                                                                 f"Version: {OLD}\n")
    python = env / "bin" / "python"
    assert run(python, "--version", cwd=env).stdout.strip() == f"memstack {OLD}"
    return python


def run(python: Path, *args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(python), "-m", "memstack", *args], cwd=cwd, capture_output=True, text=True)


@pytest.fixture(scope="module")
def _migrated(made: Path, old_python: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A bare remote of the format-1 store and clones alice and bob installed by the old release, alice's then
    migrated by this one (not pushed), made once for the module: the folder holding remote.git, alice and bob."""
    root = tmp_path_factory.mktemp("upgrade")
    remote = root / "remote.git"
    git(root, "clone", "-q", "--bare", str(made), str(remote))
    for name in ("alice", "bob"):
        git(root, "clone", "-q", str(remote), name)
        assert run(old_python, "install", cwd=root / name).returncode == 0
    assert git(root / "bob", "config", "memstack.python").stdout.strip() == str(old_python)
    assert memstack("migrate", cwd=root / "alice").returncode == 0
    return root


def team(made: Path, root: Path) -> tuple[Path, Path, Path]:
    """A copy of `_migrated` in `root`, each clone's origin the copied remote: the remote, alice, bob."""
    shutil.copytree(made, root, symlinks=True, dirs_exist_ok=True)
    for name in ("alice", "bob"):
        git(root / name, "remote", "set-url", "origin", str(root / "remote.git"))
    return root / "remote.git", root / "alice", root / "bob"


def hints(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if "`memstack install`" in line]


def test_a_clone_that_pulled_the_migration_is_told_its_hooks_are_the_old_releases(
        _migrated: Path, old_python: Path, tmp_path: Path) -> None:
    """Alice migrates (`_migrated`) and pushes; bob pulls. His hooks and merge driver still run the old release,
    whose pre-push calls the shards stray: every command he runs says so in one line, until `memstack install`."""
    _, alice, bob = team(_migrated, tmp_path)
    git(alice, "push", "-q", "origin", "main")
    git(bob, "pull", "-q")
    wrote = memstack("intake", "write", "--agent", "bob", "--content", "bob's", "--subject", "s", "--predicate",
                     "decided", "--object", "o", "--tier", "verified", "--confidence", "0.9", cwd=bob)
    assert wrote.returncode == 0, wrote.stderr
    for verb in (("status",), ("check",), ("promote",), ("sync",)):
        done = memstack(*verb, cwd=bob)
        said = hints(done.stderr)
        assert len(said) == 1, (verb, done.stderr)
        assert f"run memstack {OLD} ({old_python})" in said[0] and __version__ in said[0], said
    assert memstack("sync", cwd=bob).returncode == 2  # the old pre-push refused the shards
    assert hints(memstack("install", cwd=bob).stderr) == []  # what it asks for, done: not asked again
    synced = memstack("sync", cwd=bob)
    assert synced.returncode == 0 and hints(synced.stderr) == [], synced.stderr
    assert hints(memstack("status", cwd=alice).stderr) == []  # the migration installed alice's own


def test_a_clone_whose_hooks_run_a_python_that_is_gone_is_told_so(_migrated: Path, tmp_path: Path) -> None:
    _, alice, _ = team(_migrated, tmp_path)  # alice migrated
    gone = tmp_path / "removed-env" / "bin" / "python"
    git(alice, "config", "memstack.python", str(gone))
    said = hints(memstack("status", cwd=alice).stderr)
    assert len(said) == 1 and f"{gone}, which is gone" in said[0], said


def test_install_replaces_the_old_releases_pre_receive_hook_and_the_migration_is_accepted(
        _migrated: Path, old_python: Path, code: Path, tmp_path: Path) -> None:
    """The server guarded as the old release said (its hooks/pre-receive copied): `memstack install` there takes
    it for memstack's, replaces it and says so; the hook then runs this memstack, even for a pusher whose PATH
    holds the old one, and the migration (alice's, `_migrated`) is accepted."""
    remote, alice, _ = team(_migrated, tmp_path)
    hook = remote / "hooks" / "pre-receive"
    hook.write_bytes((code / "hooks" / "pre-receive").read_bytes())
    hook.chmod(0o755)
    installed = memstack("install", cwd=remote)
    assert installed.returncode == 0, installed.stderr
    assert installed.stdout.strip() == f"installed {hook} in place of an earlier memstack's hook", installed.stdout
    from memstack.workflows import serverhook  # here: a memstack without it fails the lines above

    assert hook.read_bytes() == serverhook.hook_text() and str(sys.executable) in hook.read_text()
    assert memstack("install", cwd=remote).stdout.strip() == f"already in place: {hook}"
    old_bin = tmp_path / "old-bin"  # the pusher's PATH finds the old release first
    old_bin.mkdir()
    (old_bin / "memstack").write_text(f"#!/bin/sh\nexec {old_python} -m memstack \"$@\"\n")
    (old_bin / "memstack").chmod(0o755)
    env = {**os.environ, "PATH": f"{old_bin}{os.pathsep}{os.environ['PATH']}"}
    pushed = subprocess.run(["git", "push", "origin", "main"], cwd=alice, capture_output=True, text=True, env=env)
    assert pushed.returncode == 0, pushed.stderr
    assert git(remote, "log", "-1", "--format=%s", "main").stdout.strip() == "memstack migrate: store format 1 -> 2"


def test_install_leaves_a_pre_receive_hook_that_does_more_than_memstacks(code: Path, tmp_path: Path) -> None:
    remote = tmp_path / "remote.git"
    git(tmp_path, "init", "-q", "--bare", "-b", "main", str(remote))
    hook = remote / "hooks" / "pre-receive"
    mine = b"#!/bin/sh\nPATH=/opt/old/bin:$PATH; export PATH\n" + (code / "hooks" / "pre-receive").read_bytes()
    hook.write_bytes(mine)
    refused = memstack("install", cwd=remote)
    assert refused.returncode == 2 and "is not memstack's: left as it is" in refused.stderr, refused.stderr
    assert refused.stderr.count("\n") == 1 and hook.read_bytes() == mine


def test_a_commit_the_old_release_made_after_the_migration_is_undone_as_the_check_says(
        _migrated: Path, old_python: Path, tmp_path: Path) -> None:
    """Bob, still on the old release, pulls the migration (alice's, `_migrated`); its rebuild and sync commit the
    one-file views of format 1, which the remote refuses. Upgraded, his sync names the way out; done as it says,
    it pushes."""
    remote, alice, bob = team(_migrated, tmp_path)
    assert memstack("install", cwd=remote).returncode == 0
    git(alice, "push", "-q", "origin", "main")
    before = git(bob, "rev-parse", "HEAD").stdout.strip()  # his last commit before the migration came in
    git(bob, "pull", "-q")
    assert run(old_python, "rebuild", cwd=bob).returncode == 0
    refused = run(old_python, "sync", cwd=bob)
    assert refused.returncode != 0 and "pre-receive hook declined" in refused.stderr, refused.stderr
    assert memstack("install", cwd=bob).returncode == 0
    told = memstack("sync", cwd=bob)
    assert told.returncode == 2 and "has no kb/knowledge.json" in told.stderr, told.stderr
    assert "`git reset --keep` to your last commit before the migration came in" in told.stderr, told.stderr
    assert "then `memstack migrate` and `memstack sync`" in told.stderr
    git(bob, "reset", "-q", "--keep", before)
    assert memstack("migrate", cwd=bob).returncode == 0
    synced = memstack("sync", cwd=bob)
    assert synced.returncode == 0, synced.stderr
    pushed = git(bob, "ls-tree", "--name-only", "origin/main", "kb/").stdout.split()
    assert "kb/promotions" in pushed and not [path for path in pushed if path.endswith(".json")], pushed
    assert memstack("check", "--range", f"{before}..origin/main", cwd=bob).returncode == 0


def test_sync_stopped_in_a_rebase_over_the_migration_names_the_way_that_works(old_python: Path,
                                                                               tmp_path: Path) -> None:
    """Alice and Bob each promoted with the old release; Bob had not pushed when Alice's migration landed.
    Upgraded, he pulls with `git pull --rebase`, which stops on the old ledger. sync names the way out (not
    "HEAD is detached"): abort, migrate his clone, sync; his record stays promoted."""
    remote = tmp_path / "remote.git"
    git(tmp_path, "init", "-q", "--bare", "-b", "main", str(remote))
    assert run(old_python, "init", "seed", "--agent", "alice", "--agent", "bob", cwd=tmp_path).returncode == 0
    git(tmp_path / "seed", "push", "-q", str(remote), "main")
    for name in ("alice", "bob"):
        git(tmp_path, "clone", "-q", str(remote), name)
        assert run(old_python, "install", cwd=tmp_path / name).returncode == 0
        wrote = run(old_python, "intake", "write", "--agent", name, "--content", f"{name}'s", "--subject", name,
                    "--predicate", "decided", "--object", "1", "--tier", "verified", "--confidence", "0.9",
                    cwd=tmp_path / name)
        assert wrote.returncode == 0 and run(old_python, "promote", cwd=tmp_path / name).returncode == 0
    alice, bob = tmp_path / "alice", tmp_path / "bob"
    assert memstack("migrate", cwd=alice).returncode == 0
    git(alice, "push", "-q", "origin", "main")
    assert memstack("install", cwd=bob).returncode == 0
    assert git(bob, "pull", "-q", "--rebase", check=False).returncode != 0  # stopped on kb/promotions.jsonl
    stopped = memstack("sync", cwd=bob)
    assert stopped.returncode == 2 and stopped.stderr.count("\n") == 1, stopped.stderr
    assert "`git rebase --abort`, then `memstack migrate` and `memstack sync`" in stopped.stderr, stopped.stderr
    git(bob, "rebase", "--abort")
    assert memstack("migrate", cwd=bob).returncode == 0
    synced = memstack("sync", cwd=bob)
    assert synced.returncode == 0, synced.stderr
    assert "no intake records" in memstack("intake", "list", "--pending", cwd=bob).stdout
    assert git(bob, "ls-tree", "--name-only", "origin/main", "kb/promotions/").stdout.split() == [
        "kb/promotions/alice", "kb/promotions/bob"]
