"""A build remembered with the inputs it read: `Traced` wraps a `Source` and writes down every answer the
build was given (a file's blob id, a folder's names, a shard's count, code blob ids); `Trace.holds` asks
another source the same questions, in the same order, and says whether every answer is the same.

A builder that is a pure function of what its source answers (no clock, no other file) makes the same
bytes from two sources that answer alike, so its result can be taken again without building: the
promotion builds the boot files from the work tree, and the commit's check (I4) builds them from the
index it commits; when the index holds the very files the work-tree build read, the check takes that
build, and compares it with the staged blobs as always. A file is compared by git's blob id (sha1),
never by its name or its time: in a sha256 repository the answers differ and the build is made again.
"""

from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any

from memstack.repo import objects
from memstack.repo.sources import Source

Counted = Callable[[str, Source], int]  # the entries of a shard, through a source (repo/counts.py)


def _id(data: bytes | None) -> str | None:
    return None if data is None else objects.blob_id(data, objects.SHA1)


class Trace:
    """The questions a build asked of its source and the answers, in order."""

    def __init__(self) -> None:
        self.asked: list[tuple[str, Any, Any]] = []  # (what, of, answer)

    def holds(self, source: Source, counted: Counted) -> bool:
        """Whether `source` answers every question as the traced source did (stops at the first that
        differs: the build took another way from there)."""
        for what, of, answer in self.asked:
            if _answer(source, counted, what, of) != answer:
                return False
        return True


def _answer(source: Source, counted: Counted, what: str, of: Any) -> Any:
    if what == "read":
        return source.blob_id(of)
    if what == "listdir":
        return tuple(source.listdir(of))
    if what == "entries":
        return counted(of, source)
    if what == "blob_ids":
        return tuple(sorted(source.blob_ids(of).items()))
    if what == "code":
        found = source.code(of)
        return None if found is None else tuple(sorted(found.items()))
    assert what == "code_blobs"
    return tuple(sorted(source.code_blobs(of)))


class Traced:
    """`source`, each answer written down in `trace` (a `Source` itself). Its cache folder is the
    source's: what is kept there is keyed by content, so it is no input of the build."""

    def __init__(self, source: Source, trace: Trace) -> None:
        self.source, self.trace = source, trace

    def _noted(self, what: str, of: Any, answer: Any) -> None:
        self.trace.asked.append((what, of, answer))

    def counted(self, counted: Counted) -> Counted:
        """`counted` through this source, its answers written down."""
        def count(relpath: str, _: Source) -> int:
            found = counted(relpath, self.source)
            self._noted("entries", relpath, found)
            return found
        return count

    def read(self, relpath: str) -> bytes | None:
        data = self.source.read(relpath)
        self._noted("read", relpath, _id(data))
        return data

    def blob_id(self, relpath: str) -> str | None:
        found = self.source.blob_id(relpath)
        self._noted("read", relpath, found)
        return found

    def stream(self, relpath: str) -> Iterator[bytes]:
        pieces = list(self.source.stream(relpath))
        self._noted("read", relpath, _id(b"".join(pieces)) if pieces or self.source.blob_id(relpath) else None)
        return iter(pieces)

    def listdir(self, relpath: str) -> list[str]:
        names = self.source.listdir(relpath)
        self._noted("listdir", relpath, tuple(names))
        return names

    def entries(self, relpath: str) -> int:
        found = self.source.entries(relpath)
        self._noted("entries", relpath, found)
        return found

    def blob_ids(self, relpath: str) -> dict[str, str]:
        found = self.source.blob_ids(relpath)
        self._noted("blob_ids", relpath, tuple(sorted(found.items())))
        return found

    def code(self, paths: Iterable[str]) -> dict[str, str] | None:
        asked = tuple(sorted(set(paths)))
        found = self.source.code(asked)
        self._noted("code", asked, None if found is None else tuple(sorted(found.items())))
        return found

    def code_blobs(self, shas: Iterable[str]) -> dict[str, bytes]:
        asked = tuple(sorted(set(shas)))
        found = self.source.code_blobs(asked)
        self._noted("code_blobs", asked, tuple(sorted(found)))
        return found

    def cache_dir(self) -> Path | None:
        return self.source.cache_dir()
