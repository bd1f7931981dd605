"""Many files written at once, their fsyncs made together.

A promotion of 200,000 records appends to about 1,400 ledger shards and rewrites about 1,200 view
shards. Made one after another, each fsync waits for its own journal commit (a file's and then its
folder's: ~5 ms a file on the disks here, seconds in all). Made from a few threads at once, the file
system commits them together (~0.2 ms a file). Each file is as safe as `files.write_atomic` and
`files.append_held` make it: a replaced file's new bytes are on disk before it takes the old one's
place, and the group's folders and appends are synced before the next group is written, so when a call
returns, everything it wrote is on disk.
"""

import contextlib
import os
from collections.abc import Iterable
from pathlib import Path

from memstack.base import files, undo

GROUP = 64  # files written before their fsyncs are made together
SYNCING = 8  # threads making them (fsync waits on the disk, not on the interpreter)


def write_atomic_many(items: Iterable[tuple[Path, bytes | Iterable[bytes]]]) -> None:
    """`files.write_atomic` of each (path, data), GROUP at a time: each group's temporary files written,
    synced together, moved into place in order, then each of their folders synced once."""
    group: list[tuple[Path, str]] = []
    try:
        for path, data in items:
            path.parent.mkdir(parents=True, exist_ok=True)
            group.append((path, files.temp_beside(path, data, sync=False)))
            if len(group) == GROUP:
                _replace(group)
                group = []
        _replace(group)
    except BaseException:
        for _, tmp in group:  # the ones not moved into place (a killed process's: the next one removes them)
            with contextlib.suppress(FileNotFoundError):
                os.unlink(tmp)
        raise


def _replace(group: list[tuple[Path, str]]) -> None:
    _fsync_all(tmp for _, tmp in group)
    for path, tmp in group:
        if (log := undo.current()) is not None:
            log.replacing(path)
        os.replace(tmp, path)
        files.crash_point()
    _fsync_all({path.parent for path, _ in group})


def append_many_held(items: Iterable[tuple[Path, str, bytes]]) -> None:
    """`files.append_held` of each (path, relpath, data), the caller holding their locks, GROUP at a
    time: each group's appends written, then synced together."""
    group: list[Path] = []
    for path, relpath, data in items:
        files.append_held(path, relpath, data, sync=False)
        group.append(path)
        if len(group) == GROUP:
            _fsync_all(group)
            group = []
    _fsync_all(group)


def _fsync_all(paths: Iterable[Path | str]) -> None:
    targets = list(dict.fromkeys(paths))
    if len(targets) < 2:
        for target in targets:
            _fsync(target)
        return
    from concurrent.futures import ThreadPoolExecutor  # deferred: ~4 ms (logging too), only for many files

    try:
        with ThreadPoolExecutor(min(SYNCING, len(targets))) as pool:
            list(pool.map(_fsync, targets))  # list(): an error of one is raised here
    except RuntimeError:  # no thread to be had (a capped address space: each takes its stack's): one by one
        for target in targets:
            _fsync(target)


def _fsync(path: Path | str) -> None:
    """Sync a file's or a folder's data to disk (through a descriptor of its own: Linux syncs the file,
    whichever descriptor wrote it)."""
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
