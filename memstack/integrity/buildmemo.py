"""The promotion commit's I4 check takes promote's own build of the views.

A build of the views (`views.build`) is a pure function of the files it reads (`Source.read`) and
the folders it lists (`Source.listdir`). When `memstack promote` builds them from every fact file
(no base to patch, or too large a change), the build is recorded in the process: each path read
with the git blob id of the bytes it gave (None: missing), each folder listed with its names, and
the blob id of each view made (ids, never the bytes). The commit's check runs in the same process
(`promote.commit.check_here`); before it builds the views of the index again, it asks the memo: when
every path read has that blob in the index (one `git ls-files -s` of the store's folder) and every
folder lists the same names there, a build from the index reads the same bytes and makes the same
views, so a staged view whose blob id is the recorded one is what it makes, and is accepted without
building. Anything else (a source that differs, a view deleted, unknown to the memo or another
blob) is checked as before. Only promote records (`recording`): hashing what a build reads costs
about 0.3 s per 200 MB, paid back only by a check that follows in the same process.
"""

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from memstack.base import files
from memstack.base.spill import Spill
from memstack.kb import views
from memstack.repo import git, objects
from memstack.repo.diffs import Change
from memstack.repo.sources import Source

used = 0  # staged views accepted from a memo, in this process (observed by the tests)


@dataclass
class Memo:
    """One build: where (the work tree's top and the store's folder in it), what it read and made."""

    repo: Path
    folder: str
    reads: dict[str, str | None] = field(default_factory=dict)  # path -> blob id of the bytes read, None: missing
    listed: dict[str, list[str]] = field(default_factory=dict)  # folder -> the names listed
    views: dict[str, str] = field(default_factory=dict)  # view path -> blob id of the bytes built


_on = False  # set by `recording`: only promote records
_memo: Memo | None = None


@contextmanager
def recording() -> Iterator[None]:
    """Within: a full build of the views through `build` is recorded, and the check asks it; after,
    it is forgotten."""
    global _on, _memo
    _on, _memo = True, None
    try:
        yield
    finally:
        _on, _memo = False, None


class _Recorder:
    """A Source that notes what it gives; `same` turns False if a path or folder gives two answers."""

    def __init__(self, source: Source, memo: Memo, like: str) -> None:
        self.source, self.memo, self.like, self.same = source, memo, like, True

    def read(self, relpath: str) -> bytes | None:
        data = self.source.read(relpath)
        found = None if data is None else objects.blob_id(data, self.like)
        self.same = self.same and self.memo.reads.setdefault(relpath, found) == found
        return data

    def stream(self, relpath: str) -> Iterator[bytes]:
        """The source's stream, passed on as it comes (a log of 200 MB is never held); the blob id of
        what it gave is noted once it is read to the end."""
        spilled = Spill()
        for piece in self.source.stream(relpath):
            spilled.write(piece)
            yield piece
        found = objects.blob_id(spilled, self.like)
        self.same = self.same and self.memo.reads.setdefault(relpath, found) == found

    def listdir(self, relpath: str) -> list[str]:
        names = self.source.listdir(relpath)
        self.same = self.same and self.memo.listed.setdefault(relpath, names) == names
        return names


def build(repo: Path, folder: str, source: Source) -> dict[str, files.Data]:
    """`views.build(source)`, recorded as this process's memo while `recording` (the store at
    `folder` of the work tree `repo`)."""
    global _memo
    if not _on:
        return views.build(source)
    _memo = None
    like = git.rev_parse(repo, "HEAD")  # an id in the repository's hash (sha1 or sha256)
    if like is None:
        return views.build(source)
    memo = Memo(repo.resolve(), folder)
    recorder = _Recorder(source, memo, like)
    built = views.build(recorder)
    if recorder.same:
        memo.views = {path: objects.blob_id(data, like) for path, data in built.items()}
        _memo = memo
    return built


def accepted(repo: Path, folder: str, index: Source, changes: list[Change]) -> set[str]:
    """The paths of `changes` (staged views) that are what a build from the index (`index`, a
    GitSource of it) makes, known from the memo without building; the rest must be checked."""
    global used
    memo = _memo
    if memo is None or memo.folder != folder or memo.repo != repo.resolve():
        return set()
    blobs = git.index_blobs(repo, folder)
    if not (all(blobs.get(path) == sha for path, sha in memo.reads.items())
            and all(index.listdir(path) == names for path, names in memo.listed.items())):
        return set()
    found = {c.path for c in changes if not c.deleted and memo.views.get(c.path) == c.new_sha}
    used += len(found)
    return found


def held() -> Memo | None:
    """The build this process recorded and has not yet forgotten (None once promote is done)."""
    return _memo
