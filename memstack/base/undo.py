"""The undo log of `files.undone_on_error`: how to put back each file a block of work wrote, if the work
fails. One log a thread at most; `files` records every append and replace in it while one is active."""

import itertools
import os
import shutil
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path


class UndoLog:
    """How to put back each file first written under `files.undone_on_error`: ("size", n) an append (cut it back
    to n bytes), ("file", saved) a replaced file (its old bytes, hard-linked or copied to `saved`), ("absent",)
    a file that was not there."""

    _names = itertools.count()

    def __init__(self, store: Path, tmp: Path) -> None:
        self.store, self.tmp = store, tmp
        self.was: dict[Path, tuple[str, ...]] = {}

    def _saved(self) -> Path:
        return self.tmp / f"{os.getpid()}.undo.{next(self._names)}.tmp"  # removed by `_clean` if we are killed

    def appending(self, path: Path) -> None:
        if path not in self.was:
            self.was[path] = ("size", str(path.stat().st_size)) if path.exists() else ("absent",)

    def replacing(self, path: Path) -> None:
        was = self.was.get(path)
        if was is None:
            if not path.exists():
                self.was[path] = ("absent",)
                return
            saved = self._saved()
            try:
                os.link(path, saved)  # os.replace gives the path a new inode: the old one keeps the old bytes
            except OSError:
                shutil.copyfile(path, saved)
            self.was[path] = ("file", str(saved))
        elif was[0] == "size":  # appended to, now replaced: keep the bytes it had before the append
            saved = self._saved()
            with path.open("rb") as source, saved.open("wb") as copy:
                left = int(was[1])
                while left:
                    piece = source.read(min(left, 1 << 20))
                    if not piece:
                        break
                    copy.write(piece)
                    left -= len(piece)
            self.was[path] = ("file", str(saved))

    def undo(self) -> None:
        for path, was in reversed(list(self.was.items())):
            if was[0] == "size":
                os.truncate(path, int(was[1]))
            elif was[0] == "file":
                path.parent.mkdir(parents=True, exist_ok=True)  # a removed file's folder may have gone with it
                os.replace(was[1], path)
            else:
                path.unlink(missing_ok=True)
                for folder in path.parents:  # the folders the write made, if nothing else is in them now
                    if folder == self.store or self.store not in folder.parents:
                        break
                    try:
                        folder.rmdir()
                    except OSError:
                        break
        self.was.clear()

    def forget(self) -> None:
        for was in self.was.values():
            if was[0] == "file":
                Path(was[1]).unlink(missing_ok=True)
        self.was.clear()


_ACTIVE = threading.local()  # the undo log of this thread's block, if any


def current() -> UndoLog | None:
    return getattr(_ACTIVE, "log", None)


@contextmanager
def recording(log: UndoLog) -> Iterator[None]:
    """Record this thread's writes in `log` inside the block; put them back if it raises."""
    _ACTIVE.log = log
    try:
        yield
    except BaseException:
        log.undo()
        raise
    finally:
        _ACTIVE.log = None
        log.forget()
