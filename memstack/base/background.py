"""Catching a derived index up in a detached process: one way for the fact index and the search index.

A query that finds its index far behind (a fresh clone, a large pull) does not build it itself: once it
has answered, it starts `python -m MODULE STORE` (`start`) in a session of its own, through a short-lived
shell, so the build is nobody's child to reap (no zombie in a long-running server). The build holds a
lock of `.memstack/locks/` (`running` says whether one is at work; a second build exits at once) and
writes a `.failed` file with its error if it fails on the files as they are (`failed_since`), so that
the next query catches up in the foreground and says why instead of starting it again.
"""

import os
import subprocess
import sys
from collections.abc import Callable, Iterable
from pathlib import Path

from memstack.base import files, locks
from memstack.base.errors import MemstackError


def start(module: str, store: Path, lock: str) -> None:
    """Run `python -m module store` detached, unless a build holding `lock` is already at it."""
    if running(store, lock):
        return
    subprocess.run(["/bin/sh", "-c", '"$@" &', "sh", sys.executable, "-m", module, str(store)],
                   stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False,
                   start_new_session=True)


def running(store: Path, lock: str) -> bool:
    """Whether a build holds `lock` (a name under .memstack/locks/).

    Asking means trying the lock for an instant; two processes asking at once would each see the
    other's try as a build at work (and answer from an index left behind), so the tries, and a build's
    taking of the lock, are made one at a time under a second, short-held lock (`<lock>.probe`).
    """
    with _probing(store, lock):
        try:
            with locks.acquire(str(files.local_dir(store, "locks") / lock), wait=0):
                return False
        except locks.Busy:
            return True


def _probing(store: Path, lock: str) -> locks.Held:
    """The lock under which `lock` is tried: held for an instant by whoever tries it."""
    return locks.acquire(str(files.local_dir(store, "locks") / f"{lock}.probe"))


def failed_since(store: Path, failed: str, stats: Iterable[os.stat_result]) -> bool:
    """Whether a build failed (`failed`, store-relative) on files no newer than its failure."""
    try:
        when = (store / failed).stat().st_mtime_ns
    except FileNotFoundError:
        return False
    return all(st.st_mtime_ns <= when for st in stats)


def run(store: Path, lock: str, failed: str, build: Callable[[], None]) -> int:
    """A build's process: `build()` under `lock` (exit 0 at once if another holds it); a MemstackError is
    written to `failed` (exit 2), which a success removes."""
    try:
        with _probing(store, lock):
            held = locks.acquire(str(files.local_dir(store, "locks") / lock), wait=0)
    except locks.Busy:
        return 0  # another build is at it
    with held:
        try:
            build()
        except MemstackError as exc:
            (store / failed).write_text(exc.message + "\n", encoding="utf-8")
            return 2
        (store / failed).unlink(missing_ok=True)
    return 0
