"""memstack's one lock (base/locks.py, flock): held against other processes and other holders in this one,
shared holders together, released when its holder dies, never inherited by a child; and a write command
takes it without importing a lock library."""

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from helpers import memstack
from memstack.base import locks

HOLD = """
import sys, time
from memstack.base import locks
held = locks.acquire(sys.argv[1], shared=sys.argv[2] == "shared")
print("held", flush=True)
time.sleep(60)
"""


def holder(path: Path, mode: str = "exclusive") -> subprocess.Popen[str]:
    """A process holding the lock of `path` until it is killed (it says `held` once it holds it)."""
    child = subprocess.Popen([sys.executable, "-c", HOLD, str(path), mode], stdout=subprocess.PIPE, text=True)
    assert child.stdout is not None and child.stdout.readline() == "held\n"
    return child


def ended(child: subprocess.Popen[str]) -> None:
    child.send_signal(signal.SIGKILL)
    child.communicate()


def test_a_lock_another_process_holds_is_busy_until_that_process_dies(tmp_path: Path) -> None:
    path = tmp_path / "a.lock"
    child = holder(path)
    try:
        with pytest.raises(locks.Busy):
            locks.acquire(str(path), wait=0)
        with pytest.raises(locks.Busy):
            locks.acquire(str(path), wait=0.05, poll=0.01)
    finally:
        ended(child)
    with locks.acquire(str(path), wait=0):  # the kernel released it with the process
        pass


def test_two_holders_in_one_process_exclude_each_other_and_release_lets_the_next_in(tmp_path: Path) -> None:
    path = str(tmp_path / "b.lock")
    first = locks.acquire(path, wait=0)
    with pytest.raises(locks.Busy):
        locks.acquire(path, wait=0)
    first.release()
    first.release()  # a second release is nothing
    with locks.acquire(path, wait=0):
        with pytest.raises(locks.Busy):
            locks.acquire(path, wait=0, shared=True)
    locks.acquire(path, wait=0).release()


def test_shared_holders_hold_together_and_keep_an_exclusive_one_out(tmp_path: Path) -> None:
    path = tmp_path / "c.lock"
    child = holder(path, "shared")
    try:
        with locks.acquire(str(path), wait=0, shared=True):  # beside the child's shared hold
            pass
        with pytest.raises(locks.Busy):
            locks.acquire(str(path), wait=0)
    finally:
        ended(child)


def test_a_child_process_does_not_inherit_a_held_lock(tmp_path: Path) -> None:
    path = str(tmp_path / "d.lock")
    held = locks.acquire(path)
    # A child started with every inheritable descriptor kept, living on after the lock is released.
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"], close_fds=False)
    try:
        held.release()
        with locks.acquire(path, wait=0):  # the child holds no copy of the descriptor
            pass
    finally:
        child.kill()
        child.wait()


def test_a_write_command_imports_no_lock_library(store: Path) -> None:
    assert memstack("intake", "write", "--agent", "alice", "--content", "a first record", cwd=store).returncode == 0
    code = ("import sys; from memstack.cli.main import main; code = main(sys.argv[1:]);"
            " print(sorted(m for m in sys.modules if m.split('.')[0] == 'filelock')); sys.exit(code)")
    ran = subprocess.run([sys.executable, "-c", code, "intake", "write", "--agent", "alice", "--content",
                          "a second record"], cwd=store, capture_output=True, text=True,
                         env={**os.environ, "PYTHONWARNINGS": "ignore"})
    assert ran.returncode == 0, ran.stderr
    assert ran.stdout.splitlines()[-1] == "[]"
    assert (store / ".memstack/locks").is_dir()  # it took its locks


def test_a_write_waits_for_a_sync_holding_the_commit_window_then_says_so(store: Path, monkeypatch) -> None:
    """sync holds the commit window exclusively while it commits, pulls and pushes; a write waits for it,
    for files.WAIT seconds at most (a push that hangs must not hang every writer), then stops saying why."""
    from memstack.base import files
    from memstack.base.errors import MemstackError

    monkeypatch.setattr(files, "WAIT", 0.2)
    child = holder(Path(files.lock_path(store, "commit-window")))  # as sync holds it: exclusive
    try:
        with pytest.raises(MemstackError, match=r"nothing written: a `memstack sync`, `promote` or `migrate`"):
            with files.locked(store, "intake/alice/2026-01-01.jsonl"):
                raise AssertionError("the write went in while sync held the window")
    finally:
        ended(child)
    with files.locked(store, "intake/alice/2026-01-01.jsonl"):  # the window free again: the write goes in
        pass


def test_a_lock_file_that_is_a_symlink_is_refused_and_nothing_is_made_outside(store: Path, tmp_path: Path) -> None:
    outside = tmp_path / "outside.lock"
    locks_dir = store / ".memstack" / "locks"
    locks_dir.mkdir(parents=True, exist_ok=True)
    (locks_dir / "commit-window.lock").symlink_to(outside)
    ran = memstack("intake", "write", "--agent", "alice", "--content", "a record", cwd=store)
    assert ran.returncode == 2 and len(ran.stderr.splitlines()) == 1, ran.stderr
    assert "commit-window.lock: a symlink where memstack keeps a lock" in ran.stderr
    assert not outside.exists() and not list((store / "intake").glob("*/*.jsonl"))


def test_a_file_where_the_locks_folder_belongs_is_named(store: Path) -> None:
    (store / ".memstack").mkdir(exist_ok=True)
    (store / ".memstack" / "locks").write_text("")
    ran = memstack("intake", "write", "--agent", "alice", "--content", "a record", cwd=store)
    assert ran.returncode == 2 and len(ran.stderr.splitlines()) == 1, ran.stderr
    assert f"{store / '.memstack' / 'locks'}: not a folder" in ran.stderr
