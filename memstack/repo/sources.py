"""Where derived files are built from: the work tree, or a commit or the index in git.

A derived file must equal what a rebuild makes from the sources *in the same
commit* (I4), so builders read through this small interface rather than the
file system, and the checks can hand them a commit's blobs instead.
"""

import os
from collections.abc import Iterator, MutableMapping
from pathlib import Path
from typing import Protocol

from memstack.base import logfiles
from memstack.repo import git, objects


class Source(Protocol):
    def read(self, relpath: str) -> bytes | None:
        """The file's bytes, or None if it does not exist."""

    def stream(self, relpath: str) -> Iterator[bytes]:
        """The file's bytes a piece at a time (nothing if it does not exist), read to the end."""

    def listdir(self, relpath: str) -> list[str]:
        """The names of the entries directly inside a folder (empty if none)."""

    def entries(self, relpath: str) -> int:
        """How many entries the derived shard at `relpath` holds (`shard_entries`; 0 if it does not exist)."""


def shard_entries(data: bytes | None) -> int:
    """The entries of a derived shard (a JSON array written one entry a line): its lines less the array's two."""
    return max((data or b"").count(b"\n") - 2, 0)


class WorktreeSource:
    def __init__(self, root: Path) -> None:
        self.root = root

    def read(self, relpath: str) -> bytes | None:
        try:
            return (self.root / relpath).read_bytes()
        except (FileNotFoundError, IsADirectoryError, NotADirectoryError):
            return None

    def stream(self, relpath: str) -> Iterator[bytes]:
        """The file's bytes a piece at a time (nothing when it does not exist); a torn last line is refused."""
        path = self.root / relpath
        if not path.is_file():
            return iter(())
        logfiles.check_tail(path, relpath)
        return objects.file_pieces(path)

    def listdir(self, relpath: str) -> list[str]:
        try:
            return sorted(os.listdir(os.path.join(self.root, relpath)))
        except (FileNotFoundError, NotADirectoryError):
            return []

    def entries(self, relpath: str) -> int:
        return shard_entries(self.read(relpath))


class GitSource:
    """The files of a commit (`rev`), or of the index when `rev` is None, read through one cat-file batch.

    Reading the index honours GIT_INDEX_FILE, so inside a pre-commit hook this is
    exactly what is being committed (also for `git commit -a` and `git commit PATH`).
    Paths are store-relative; `prefix` is the store's folder in the repository (`.memory/`).
    `counts`: the entries of shards already counted, by blob id (repo/counts.py keeps them between runs),
    so a shard is read to be counted only once in any version.
    """

    def __init__(self, repo: Path, blobs: objects.CatFile, rev: str | None, prefix: str = "",
                 counts: MutableMapping[str, int] | None = None) -> None:
        self.repo = repo
        self.blobs = blobs
        self.rev = rev
        self.prefix = prefix
        self.counts = counts
        self._trees: dict[str, dict[str, set[str]]] = {}  # the index: a folder listed -> its subfolders' names

    def _spec(self, relpath: str) -> str:
        relpath = self.prefix + relpath
        return f":{relpath}" if self.rev is None else f"{self.rev}:{relpath}"

    def read(self, relpath: str) -> bytes | None:
        found = self.blobs.read_object(self._spec(relpath))
        return found[1] if found is not None and found[0] == "blob" else None

    def stream(self, relpath: str) -> Iterator[bytes]:
        """The file's bytes a piece at a time (nothing when it does not exist); read to the end before
        reading another."""
        return self.blobs.stream(self._spec(relpath))

    def entries(self, relpath: str) -> int:
        if self.counts is None:
            return shard_entries(self.read(relpath))
        found = self.blobs.check(self._spec(relpath))
        if found is None or found[1] != "blob":
            return 0
        count = self.counts.get(found[0])
        if count is None:
            count = self.counts[found[0]] = shard_entries(self.blobs.read(found[0]))
        return count

    def listdir(self, relpath: str) -> list[str]:
        relpath = relpath.strip("/")
        if self.rev is None:
            return sorted(self._listed(relpath).get(relpath, ()))
        found = self.blobs.read_object(self._spec(relpath))
        return sorted(git.tree_names(found[1])) if found is not None and found[0] == "tree" else []

    def _listed(self, relpath: str) -> dict[str, set[str]]:
        """Each folder under `relpath` in the index, with the names directly in it, from one `git ls-files`
        of the first listed folder that holds it (the boot files list the knowledge view, then each
        agent's folder of it: one git process, not one an agent). The index does not change while a
        check reads it."""
        for top, listed in self._trees.items():
            if relpath == top or relpath.startswith(top + "/"):
                return listed
        folders: dict[str, set[str]] = {}
        first = relpath.count("/") + 1 if relpath else 0
        for path in git.ls_files(self.repo, self.prefix + relpath):
            parts = path[len(self.prefix):].split("/")
            for depth in range(first, len(parts)):
                folders.setdefault("/".join(parts[:depth]), set()).add(parts[depth])
        self._trees[relpath] = folders
        return folders
