"""Safe writes: whole-line appends under a lock, atomic replaces, no-overwrite creates.

Locks live in `<store>/.memstack/locks/` and the temporary files of atomic writes in `<store>/.memstack/tmp/`
(git-ignored, same file system, so the final rename stays atomic), never beside the memory files, so a killed
run can never leave something a commit picks up. Temporary files a killed process left are removed by the next
process that writes one.

`undone_on_error` puts every file written through this module back as it was when the work it wraps fails (a
promotion whose commit is refused leaves the work tree as it found it).

`MEMSTACK_TEST_KILL_AT=N` kills the process (SIGKILL) at its Nth write step (`crash_point`): crash tests.
"""

import contextlib
import os
import shutil
import signal
import tempfile
import threading
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager, nullcontext
from pathlib import Path
from typing import Any, Protocol, cast

from memstack.base import locks, undo
from memstack.base.errors import MemstackError
from memstack.base.logfiles import check_appendable

LOCAL = ".memstack"  # per clone, git-ignored: the fact index, locks, temporary files, pending work
_KILL_STEPS = [0]


def crash_point() -> None:
    """A write step; with MEMSTACK_TEST_KILL_AT=N the Nth one kills the process (crash tests only)."""
    at = os.environ.get("MEMSTACK_TEST_KILL_AT")
    if at:
        _KILL_STEPS[0] += 1
        if _KILL_STEPS[0] == int(at):
            os.kill(os.getpid(), signal.SIGKILL)


@contextmanager
def undone_on_error(store: Path) -> Iterator[None]:
    """Every file of `store` this thread writes through this module inside the block is put back as it was if
    the block raises: appends cut back, replaced files given their old bytes, new files (and the folders made
    for them) removed. A process killed inside leaves what it wrote (the next run finishes the work)."""
    if undo.current() is not None:  # already inside one: the outer block undoes
        yield
        return
    with undo.recording(undo.UndoLog(store, local_dir(store, "tmp"))):
        yield


def written() -> list[Path]:
    """The files written through this module so far in this thread's `undone_on_error` block (as their
    writers named them), none outside one."""
    log = undo.current()
    return list(log.was) if log is not None else []


def clear_local(store: Path, kept: tuple[str, ...]) -> None:
    """Empty `<store>/.memstack/` but for the entries named in `kept`: the indexes and caches there are
    rebuilt from the files (after a history rewrite they may hold what left the history)."""
    local = store / LOCAL
    for path in sorted(local.iterdir()) if local.is_dir() and not local.is_symlink() else []:
        if path.name in kept:
            continue
        if path.is_dir() and not path.is_symlink():
            shutil.rmtree(path, ignore_errors=True)
        else:
            with contextlib.suppress(OSError):
                path.unlink()


def local_dir(store: Path, name: str) -> Path:
    """`<store>/.memstack/<name>/`, made if missing; a clear error when something else sits there, and
    when `.memstack` or the folder in it is a symlink (I7): the index, locks and temporary files would
    land outside the store."""
    folder = store / LOCAL / name
    refuse_symlinks(store, folder)
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except (FileExistsError, NotADirectoryError):
        blocked = next((p for p in (store / LOCAL, folder) if p.exists() and not p.is_dir()), store / LOCAL)
        raise MemstackError(f"{blocked}: not a folder — memstack keeps its index, locks and temporary files"
                            f" there (never committed); move that file away, then retry") from None
    return folder


def lock_path(store: Path, name: str) -> str:
    """The lock file `name` in `<store>/.memstack/locks/` (made if missing)."""
    return str(local_dir(store, "locks") / (name.replace("/", "__") + ".lock"))


WAIT = 60  # seconds a write waits for a lock (the commit window, its file's) before it stops, saying which
_OWNERS: set[tuple[Path, int] | None] = set()  # (store, thread) holding the commit window exclusively


@contextmanager
def committing(store: Path, exclusive: bool = True) -> Iterator[None]:
    """The commit window: `memstack sync` (and `promote`) holds it exclusively while it commits, pulls and pushes (the
    pre-commit framework stashes unstaged changes in its pre-commit and pre-push hooks, so a write landing
    then could be lost); every write under `locked` holds it shared, so writes wait for sync's attempt to
    end, for WAIT seconds at most. Nothing that runs inside a git hook may take `locked`: the hook runs
    while sync holds the window; the thread holding it exclusively writes without waiting for itself."""
    key = (store.resolve(), threading.get_ident()) if exclusive else None
    with locks.acquire(lock_path(store, "commit-window"), shared=not exclusive):
        _OWNERS.add(key)
        try:
            yield
        finally:
            _OWNERS.discard(key)


@contextmanager
def locked(store: Path, relpath: str) -> Iterator[None]:
    """Hold an exclusive cross-process lock on one store file (by its store-relative path), inside the
    commit window (`committing`); either waited for WAIT seconds at most, then a clear error."""
    try:
        window: Any = nullcontext() if (store.resolve(), threading.get_ident()) in _OWNERS else \
            locks.acquire(lock_path(store, "commit-window"), wait=WAIT, poll=0.01, shared=True)
    except locks.Busy:
        raise MemstackError(f"{relpath}: nothing written: a `memstack sync`, `promote` or `migrate` of this clone"
                            f" has been committing for over {WAIT} s (writes wait for it); retry when it is done"
                            ) from None
    with window:
        try:
            # A short poll: 50 ms makes contended appends ~40x slower.
            held = locks.acquire(lock_path(store, relpath), wait=WAIT, poll=0.002)
        except locks.Busy:
            raise MemstackError(f"{relpath}: another memstack process holds its lock for over {WAIT} s") from None
        with held:
            yield


@contextmanager
def try_locked(store: Path, name: str) -> Iterator[bool]:
    """The lock `name` if no process holds it (True), else False at once, without waiting."""
    try:
        held = locks.acquire(lock_path(store, name), wait=0)
    except locks.Busy:
        yield False
        return
    with held:
        yield True


def refuse_symlinks(store: Path, path: Path) -> None:
    """Refuse a path inside the store that is, or passes through, a symlink (I7): every write and every
    read of memstack's own folders (`.memstack/`, `kb/files/`, the layers) goes through here first."""
    rel = path.relative_to(store)
    current = store
    for part in rel.parts:
        current = current / part
        if current.is_symlink():
            raise MemstackError(
                f"{current.relative_to(store)}: I7 is a symlink; memstack refuses symlinks inside the store"
                " — replace it with a real file or folder"
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


def append_held(path: Path, relpath: str, data: bytes, sync: bool = True) -> None:
    """Append whole lines in one write, the caller holding the file's lock (see `locked`); `sync=False`:
    the caller makes the fsync (base/synced.py: many files' together)."""
    if data and not data.endswith(b"\n"):
        raise ValueError("append_held takes whole lines, each ending in a newline")
    check_appendable(path, relpath)
    if (log := undo.current()) is not None:
        log.appending(path)
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        crash_point()
        view = memoryview(data)
        while view:  # a regular file takes it in one write, short of a huge batch
            view = view[os.write(fd, view):]
        if sync:
            os.fsync(fd)
    finally:
        os.close(fd)
    # Touch the folder too: the search index re-lists a folder only when its times move (search/index.py).
    os.utime(path.parent)


_CLEANED: set[Path] = set()


def _temp_dir(path: Path) -> Path:
    """Where the temporary file for `path` goes: its store's `.memstack/tmp/` (the nearest
    ancestor holding memstack.yaml), or beside it outside a store (e.g. a merge driver's %A)."""
    for folder in path.parents:
        if (folder / "memstack.yaml").is_file():
            tmp = local_dir(folder, "tmp")
            if tmp not in _CLEANED:
                _CLEANED.add(tmp)
                _clean(tmp)
            return tmp
    return path.parent


def _clean(tmp: Path) -> None:
    """Remove the temporary files of processes that are gone (killed mid-write)."""
    for entry in os.scandir(tmp):
        pid = entry.name.split(".", 1)[0]
        if pid.isdigit() and int(pid) != os.getpid():
            try:
                os.kill(int(pid), 0)
            except ProcessLookupError:
                os.unlink(entry.path)
            except PermissionError:  # alive, another user's
                pass


def temp_beside(path: Path, data: bytes | Iterable[bytes], sync: bool = True, mode: int = 0o644) -> str:
    """A temporary file holding `data`, on the file system of `path` (synced, unless `sync=False`), with
    the permissions `mode`."""
    fd, tmp = tempfile.mkstemp(dir=_temp_dir(path), prefix=f"{os.getpid()}.{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as handle:
            for piece in (data,) if isinstance(data, (bytes, bytearray)) else data:
                handle.write(piece)
            handle.flush()
            if sync:
                os.fsync(handle.fileno())
    except BaseException:
        os.unlink(tmp)
        raise
    os.chmod(tmp, mode)
    crash_point()
    return tmp


def _fsync_dir(folder: Path) -> None:
    fd = os.open(folder, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def write_atomic(path: Path, data: bytes | Iterable[bytes], sync: bool = True, mode: int = 0o644) -> None:
    """Replace `path` with `data` (bytes, or pieces of bytes written one after the other): a reader or a
    crash sees the old file or the new, never half; the new file has the permissions `mode`. `sync=False`:
    a cache in .memstack/ that its reader checks (keyed by content, or read as empty when it is no JSON),
    which a crash of the machine may leave old, new or empty: not synced to disk (two fsyncs, ~3 ms each on
    these disks, saved a write)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = temp_beside(path, data, sync, mode)
    try:
        if (log := undo.current()) is not None:
            log.replacing(path)
        os.replace(tmp, path)
    except BaseException:
        os.unlink(tmp)
        raise
    if sync:
        _fsync_dir(path.parent)
    crash_point()


class Pieces(Protocol):
    """Bytes given a piece at a time, their size known first: a view spilled to a temporary file or
    the bytes appended to a log (repo/objects.py), never held whole."""

    def size(self) -> int: ...

    def pieces(self) -> Iterable[bytes]: ...


Data = bytes | Pieces


def parts(data: Data, piece: int = 1 << 20) -> tuple[int, Iterable[bytes]]:
    """The size of `data` and its bytes in pieces."""
    if isinstance(data, (bytes, bytearray)):
        view = memoryview(data)
        # memoryview slices: bytes-like pieces, never copied (every consumer takes a buffer)
        return len(data), cast(Iterator[bytes], (view[at:at + piece] for at in range(0, len(data), piece)))
    return data.size(), data.pieces()


def whole(data: Data) -> bytes:
    """The bytes of `data`, held (for what reads a view whole: a diff, the boot files' builder)."""
    return data if isinstance(data, (bytes, bytearray)) else b"".join(data.pieces())


def write_changed(store: Path, outputs: Mapping[str, Data]) -> list[str]:
    """Write each derived file whose bytes differ (atomically); returns the paths rewritten."""
    changed = []
    for relpath, data in outputs.items():
        path = store / relpath
        if not holds(path, data):
            write_atomic(path, parts(data)[1])
            changed.append(relpath)
    return changed


def remove(path: Path) -> bool:
    """Delete a derived file that should not be there, and the folders it leaves empty (undone with the
    rest under `undone_on_error`); False when there was none."""
    if not path.is_file():
        return False
    if (log := undo.current()) is not None:
        log.replacing(path)
    path.unlink()
    for folder in path.parents:
        try:
            folder.rmdir()
        except OSError:  # not empty (the store's own folder never is: memstack.yaml)
            break
    crash_point()
    return True


def holds(path: Path, data: Data) -> bool:
    """Whether the file at `path` holds exactly `data`: sizes first, then a piece at a time (a view
    of a million records is never read whole beside the one built)."""
    size, pieces = parts(data)
    return holds_pieces(path, pieces, size)


def holds_pieces(path: Path, pieces: Iterable[bytes], size: int) -> bool:
    """Whether the file at `path` holds exactly the `size` bytes `pieces` give, one after the other:
    sizes first, then each piece against as many bytes of the file."""
    try:
        if path.stat().st_size != size:
            return False
        with path.open("rb") as handle:
            for data in pieces:
                if handle.read(len(data)) != data:
                    return False
            return not handle.read(1)
    except (FileNotFoundError, NotADirectoryError, IsADirectoryError):
        return False


def create_exclusive(path: Path, data: bytes) -> bool:
    """Create `path` with `data` atomically; return False (and write nothing) if it exists."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = temp_beside(path, data)
    try:
        if (log := undo.current()) is not None:
            log.replacing(path)  # not there: noted as absent (if it is there, the link fails and nothing changes)
        os.link(tmp, path)
    except FileExistsError:
        return False
    finally:
        os.unlink(tmp)
    _fsync_dir(path.parent)
    return True
