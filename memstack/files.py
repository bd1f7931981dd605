"""Safe writes: whole-line appends under a lock, atomic replaces, no-overwrite creates.

Locks live in `<store>/.memstack/locks/` (git-ignored), never beside the memory
files, so they can never be committed as stray files.
"""

import os
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from memstack.errors import MemstackError


@contextmanager
def committing(store: Path, exclusive: bool = True) -> Iterator[None]:
    """The commit window: `memstack sync` holds it exclusively while it stages and commits (the
    pre-commit framework stashes unstaged changes during a commit, so a write landing then could
    be lost); every write under `locked` holds it shared, so writes wait for the commit, no longer.
    Nothing that runs inside a git hook may take `locked`: the hook runs while sync holds the window."""
    try:
        import fcntl
    except ImportError:  # pragma: no cover - no flock: no window
        yield
        return
    lock_dir = store / ".memstack" / "locks"
    lock_dir.mkdir(parents=True, exist_ok=True)
    fd = os.open(lock_dir / "commit-window.lock", os.O_RDWR | os.O_CREAT, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX if exclusive else fcntl.LOCK_SH)
        yield
    finally:
        os.close(fd)


@contextmanager
def locked(store: Path, relpath: str) -> Iterator[None]:
    """Hold an exclusive cross-process lock on one store file (by its store-relative path)."""
    from filelock import FileLock, Timeout

    lock_dir = store / ".memstack" / "locks"
    lock_dir.mkdir(parents=True, exist_ok=True)
    lock = FileLock(str(lock_dir / (relpath.replace("/", "__") + ".lock")))
    try:
        # A short poll: the default 50 ms makes contended appends ~40x slower.
        with committing(store, exclusive=False), lock.acquire(timeout=60, poll_interval=0.002):
            yield
    except Timeout:
        raise MemstackError(f"{relpath}: another memstack process holds its lock for over 60 s") from None


def refuse_symlinks(store: Path, path: Path) -> None:
    """Refuse a path inside the store that is, or passes through, a symlink (I7)."""
    rel = path.relative_to(store)
    current = store
    for part in rel.parts:
        current = current / part
        if current.is_symlink():
            raise MemstackError(
                f"{current.relative_to(store)}: I7 is a symlink; memstack refuses symlinks inside the store"
                " — replace it with a real file or folder"
            )


def check_tail(path: Path, relpath: str) -> None:
    """Refuse to append to a file whose last line is torn (no final newline)."""
    try:
        size = path.stat().st_size
    except FileNotFoundError:
        return
    if size == 0:
        return
    with path.open("rb") as handle:
        handle.seek(size - 1)
        if handle.read(1) != b"\n":
            raise MemstackError(
                f"{relpath}: I7 the last line is incomplete (a torn write, e.g. a crash mid-append)"
                " — remove the partial last line (`git checkout -- <file>` if it was committed,"
                " or truncate the file after its last newline), then retry"
            )


def append_line(store: Path, relpath: str, line: bytes) -> None:
    """Append one whole line (ending in a newline) to a store file, under its lock."""
    if not line.endswith(b"\n") or b"\n" in line[:-1]:
        raise ValueError("append_line takes exactly one line ending in a newline")
    path = store / relpath
    path.parent.mkdir(parents=True, exist_ok=True)
    refuse_symlinks(store, path)
    with locked(store, relpath):
        append_held(path, relpath, line)


def append_held(path: Path, relpath: str, data: bytes) -> None:
    """Append whole lines in one write, the caller holding the file's lock (see `locked`)."""
    if data and not data.endswith(b"\n"):
        raise ValueError("append_held takes whole lines, each ending in a newline")
    check_tail(path, relpath)
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        view = memoryview(data)
        while view:  # a regular file takes it in one write, short of a huge batch
            view = view[os.write(fd, view):]
        os.fsync(fd)
    finally:
        os.close(fd)


def _temp_beside(path: Path, data: bytes) -> str:
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
    except BaseException:
        os.unlink(tmp)
        raise
    os.chmod(tmp, 0o644)
    return tmp


def _fsync_dir(folder: Path) -> None:
    fd = os.open(folder, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def write_atomic(path: Path, data: bytes) -> None:
    """Replace `path` with `data`: a reader or a crash sees the old file or the new, never half."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = _temp_beside(path, data)
    os.replace(tmp, path)
    _fsync_dir(path.parent)


def write_changed(store: Path, outputs: dict[str, bytes]) -> list[str]:
    """Write each derived file whose bytes differ (atomically); returns the paths rewritten."""
    changed = []
    for relpath, data in outputs.items():
        path = store / relpath
        if not path.exists() or path.read_bytes() != data:
            write_atomic(path, data)
            changed.append(relpath)
    return changed


def create_exclusive(path: Path, data: bytes) -> bool:
    """Create `path` with `data` atomically; return False (and write nothing) if it exists."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = _temp_beside(path, data)
    try:
        os.link(tmp, path)
    except FileExistsError:
        return False
    finally:
        os.unlink(tmp)
    _fsync_dir(path.parent)
    return True


def read_jsonl(path: Path, relpath: str) -> list[dict]:  # type: ignore[type-arg]
    """Every record of a JSONL file; a torn last line or a bad line is an error naming the line."""
    from memstack import jsonio

    data = path.read_bytes()
    if data and not data.endswith(b"\n"):
        check_tail(path, relpath)
    return jsonio.parse_jsonl(data, relpath)
