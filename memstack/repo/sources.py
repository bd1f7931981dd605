"""Where derived files are built from: the work tree, or a commit or the index in git.

A derived file must equal what a rebuild makes from the sources *in the same
commit* (I4), so builders read through this small interface rather than the
file system, and the checks can hand them a commit's blobs instead.
"""

import os
from collections.abc import Iterable, Iterator, MutableMapping
from pathlib import Path
from typing import Protocol

from memstack.base import logfiles
from memstack.repo import git, objects

REGULAR = ("100644", "100755")  # git's modes of a regular file (not a symbolic link, not a submodule)


class Source(Protocol):
    def read(self, relpath: str) -> bytes | None:
        """The file's bytes, or None if it does not exist."""

    def blob_id(self, relpath: str) -> str | None:
        """The git blob id of the file (None: it does not exist), without reading it where git knows it."""

    def stream(self, relpath: str) -> Iterator[bytes]:
        """The file's bytes a piece at a time (nothing if it does not exist), read to the end."""

    def listdir(self, relpath: str) -> list[str]:
        """The names of the entries directly inside a folder (empty if none)."""

    def entries(self, relpath: str) -> int:
        """How many entries the derived shard at `relpath` holds (`shard_entries`; 0 if it does not exist)."""

    def blob_ids(self, relpath: str) -> dict[str, str]:
        """The git blob id of every file under a folder (recursively), by store-relative path."""

    def code(self, paths: Iterable[str]) -> dict[str, str] | None:
        """The blob id of each regular file (no symbolic link, no submodule) among `paths`, which are taken
        from the top of the git repository the store is a folder of; None when the store is no folder of
        one (it is a repository of its own, or in none)."""

    def code_blobs(self, shas: Iterable[str]) -> dict[str, bytes]:
        """The bytes of the blobs `shas` of that repository (by id; one missing is left out)."""

    def cache_dir(self) -> Path | None:
        """The store's folder in a work tree, where its per-clone caches live (None: a bare repository)."""


def shard_entries(data: bytes | None) -> int:
    """The entries of a derived shard (a JSON array written one entry a line): its lines less the array's two."""
    return max((data or b"").count(b"\n") - 2, 0)


def _entries(listing: bytes) -> Iterator[tuple[str, str, str]]:
    """(mode, blob id, path) of each blob of a `git ls-files -s -z` listing (stage 0 only: a conflicted path
    is no file there) or a `git ls-tree -z` one."""
    for raw in listing.split(b"\0"):
        meta, tab, path = raw.partition(b"\t")
        parts = meta.decode().split(" ")
        if not tab or len(parts) != 3:
            continue
        if parts[1] == "blob":  # ls-tree: mode, type, id
            yield parts[0], parts[2], git.decode_path(path)
        elif parts[2] == "0" and parts[1] not in ("tree", "commit"):  # ls-files: mode, id, stage
            yield parts[0], parts[1], git.decode_path(path)


def _code_files(listing: bytes, wanted: set[str]) -> dict[str, str]:
    """The regular files of a listing (`_entries`) that are among `wanted`, with their blob ids."""
    return {path: sha for mode, sha, path in _entries(listing) if path in wanted and mode in REGULAR}


def _read_blobs(cat: objects.CatFile, shas: Iterable[str]) -> dict[str, bytes]:
    found = {}
    for sha in shas:
        data = cat.read_object(sha)
        if data is not None and data[0] == "blob":
            found[sha] = data[1]
    return found


class WorktreeSource:
    """The store's files in its work tree. Code (`code`) is read as the index stages it: what the next
    commit of a derived file holds (HEAD's code, unless changes of the code are staged)."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self._code_top: Path | None = None
        self._asked = False

    def read(self, relpath: str) -> bytes | None:
        try:
            return (self.root / relpath).read_bytes()
        except (FileNotFoundError, IsADirectoryError, NotADirectoryError):
            return None

    def blob_id(self, relpath: str) -> str | None:
        """Hashed from the file (sha1, as a repository of the default format names blobs)."""
        data = self.read(relpath)
        return None if data is None else objects.blob_id(data, objects.SHA1)

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

    def blob_ids(self, relpath: str) -> dict[str, str]:
        """Each file's blob id: the index's for a file git says is unchanged (no read), else hashed."""
        folder = os.path.join(self.root, relpath)
        names = [os.path.relpath(os.path.join(d, n), self.root).replace(os.sep, "/")
                 for d, _, found in os.walk(folder) for n in found]
        top = git.worktree_top(self.root)
        known: dict[str, str] = {}
        if top is not None and names:
            env = git.no_git_env()
            prefix = self.root.resolve().relative_to(top.resolve()).as_posix()
            prefix = "" if prefix == "." else prefix + "/"
            listed = git.run(top, "--literal-pathspecs", "ls-files", "-s", "-z", "--", prefix + relpath, env=env)
            dirty = git.run(top, "--literal-pathspecs", "diff-files", "--name-only", "-z", "--", prefix + relpath,
                            env=env).stdout
            changed = {git.decode_path(raw) for raw in dirty.split(b"\0") if raw}
            known = {p[len(prefix):]: sha for p, sha in _code_files(listed.stdout, {prefix + n for n in names})
                     .items() if p not in changed}
        return {name: known.get(name) or objects.blob_id((self.root / name).read_bytes(), objects.SHA1)
                for name in sorted(names)}

    def _top(self) -> Path | None:
        """The top of the repository the store is a folder of (None: at its top, or in none); asked once."""
        if not self._asked:
            top = git.worktree_top(self.root)
            self._code_top = None if top is None or top.resolve() == self.root.resolve() else top
            self._asked = True
        return self._code_top

    def code(self, paths: Iterable[str]) -> dict[str, str] | None:
        top = self._top()
        if top is None:
            return None
        wanted = set(paths)
        if not wanted:
            return {}
        listed = git.run(top, "--literal-pathspecs", "ls-files", "-s", "-z", "--", *sorted(wanted),
                         env=git.no_git_env()).stdout
        return _code_files(listed, wanted)

    def code_blobs(self, shas: Iterable[str]) -> dict[str, bytes]:
        wanted = sorted(set(shas))
        top = self._top() if wanted else None
        if top is None:
            return {}
        with objects.CatFile(top, git.no_git_env()) as cat:
            return _read_blobs(cat, wanted)

    def cache_dir(self) -> Path | None:
        return self.root


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
        self._ids: dict[str, str] = {}  # the index: the blob id of each file listed (no cat-file asked for it)

    def _spec(self, relpath: str) -> str:
        relpath = self.prefix + relpath
        return f":{relpath}" if self.rev is None else f"{self.rev}:{relpath}"

    def read(self, relpath: str) -> bytes | None:
        found = self.blobs.read_object(self._spec(relpath))
        return found[1] if found is not None and found[0] == "blob" else None

    def blob_id(self, relpath: str) -> str | None:
        """From the listing of its folder when one was listed (no git asked), else `cat-file --batch-check`."""
        sha = self._ids.get(relpath) if self.rev is None else None
        if sha is not None:
            return sha
        found = self.blobs.check(self._spec(relpath))
        return found[0] if found is not None and found[1] == "blob" else None

    def stream(self, relpath: str) -> Iterator[bytes]:
        """The file's bytes a piece at a time (nothing when it does not exist); read to the end before
        reading another."""
        return self.blobs.stream(self._spec(relpath))

    def entries(self, relpath: str) -> int:
        if self.counts is None:
            return shard_entries(self.read(relpath))
        sha = self._ids.get(relpath) if self.rev is None else None  # a listed folder's file: its id known
        if sha is None:
            found = self.blobs.check(self._spec(relpath))
            if found is None or found[1] != "blob":
                return 0
            sha = found[0]
        count = self.counts.get(sha)
        if count is None:
            count = self.counts[sha] = shard_entries(self.blobs.read(sha))
        return count

    def listdir(self, relpath: str) -> list[str]:
        relpath = relpath.strip("/")
        if self.rev is None:
            return sorted(self._listed(relpath).get(relpath, ()))
        found = self.blobs.read_object(self._spec(relpath))
        return sorted(git.tree_names(found[1])) if found is not None and found[0] == "tree" else []

    def blob_ids(self, relpath: str) -> dict[str, str]:
        spec = self.prefix + relpath.strip("/")
        listed = git.run(self.repo, "--literal-pathspecs", "ls-files", "-s", "-z", "--", spec).stdout \
            if self.rev is None else \
            git.run(self.repo, "--literal-pathspecs", "ls-tree", "-r", "-z", "--full-tree", self.rev, "--", spec).stdout
        return {path[len(self.prefix):]: sha for _, sha, path in _entries(listed) if path.startswith(self.prefix)}

    def code(self, paths: Iterable[str]) -> dict[str, str] | None:
        if not self.prefix:
            return None
        wanted = set(paths)
        if not wanted:
            return {}
        listed = git.run(self.repo, "--literal-pathspecs", "ls-files", "-s", "-z", "--", *sorted(wanted)).stdout \
            if self.rev is None else \
            git.run(self.repo, "--literal-pathspecs", "ls-tree", "-r", "-z", "--full-tree", self.rev, "--",
                    *sorted(wanted)).stdout
        return _code_files(listed, wanted)

    def code_blobs(self, shas: Iterable[str]) -> dict[str, bytes]:
        return _read_blobs(self.blobs, sorted(set(shas)))

    def cache_dir(self) -> Path | None:
        folder = self.repo / self.prefix
        return folder if (folder / "memstack.yaml").is_file() else None

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
        listing = git.run(self.repo, "--literal-pathspecs", "ls-files", "-s", "-z", "--",
                          f"{self.prefix + relpath}/").stdout
        for raw in listing.split(b"\0"):
            meta, tab, name = raw.partition(b"\t")
            if not tab:
                continue
            mode, sha, stage = meta.decode().split(" ")
            path = git.decode_path(name)[len(self.prefix):]
            if stage == "0" and mode != git.GITLINK:
                self._ids[path] = sha
            parts = path.split("/")
            for depth in range(first, len(parts)):
                folders.setdefault("/".join(parts[:depth]), set()).add(parts[depth])
        self._trees[relpath] = folders
        return folders
