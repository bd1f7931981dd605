"""Cross-process locks: flock(2) on a file, held by an open descriptor of it.

The kernel releases the lock when its holder closes the descriptor or dies, so a killed process leaves
no stale lock to clean up; the lock files themselves stay (git-ignored, in `.memstack/locks/`). Every
lock memstack takes is one of these: the commit window (`files.committing`), a store file's appends
(`files.locked`), an index's writes, a background build, sync. Two holders in one process are two
descriptors and exclude each other as two processes would.

Why not the `filelock` package, which memstack used until its 4.x: importing it (logging, decimal, its
registry, fork and shutdown handling) costs more instructions than the rest of a write command's start
up to its first write, for what memstack used of it, which is this module; and the shared/exclusive
commit window was flock already. One way to lock, POSIX only as the rest of memstack (hooks run `sh`).
"""

import errno
import fcntl
import os
import time

from memstack.base.errors import MemstackError


class Busy(Exception):
    """The lock stayed held by another holder for the whole wait."""


class Held:
    """A lock held: released by `release()`, on leaving a `with` block, or when the process ends."""

    __slots__ = ("_fd",)

    def __init__(self, fd: int) -> None:
        self._fd: int | None = fd

    def release(self) -> None:
        if self._fd is not None:
            # Unlocked, then closed: a close alone ends the lock only with the open file's last reference,
            # and a child process started while it was held may keep one a moment (seen: the lock still
            # held after the close, no process having the file open; tests/base/test_locks.py).
            fcntl.flock(self._fd, fcntl.LOCK_UN)
            os.close(self._fd)
            self._fd = None

    def __enter__(self) -> "Held":
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()


def acquire(path: str, wait: float | None = None, poll: float = 0.005, shared: bool = False) -> Held:
    """The lock of `path` (the file created if missing), exclusive or `shared`. `wait`: None waits as long
    as it takes; else seconds to try, every `poll` seconds (0: one try), then `Busy`."""
    try:  # not inherited by child processes (PEP 446)
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW, 0o644)
    except OSError as exc:
        if exc.errno != errno.ELOOP:
            raise
        raise MemstackError(f"{path}: a symlink where memstack keeps a lock: it would lock, and make, a file"
                            " outside the store (I7); remove it, then retry") from None
    mode = fcntl.LOCK_SH if shared else fcntl.LOCK_EX
    try:
        if wait is None:
            fcntl.flock(fd, mode)
        else:
            deadline = time.monotonic() + wait
            while True:
                try:
                    fcntl.flock(fd, mode | fcntl.LOCK_NB)
                    break
                except BlockingIOError:
                    if time.monotonic() >= deadline:
                        raise Busy(path) from None
                    time.sleep(poll)
    except BaseException:
        os.close(fd)
        raise
    return Held(fd)
