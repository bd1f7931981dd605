"""A code repository as code anchors read it: the work tree or a revision, what each file is (a file and its
blob id, a symbolic link, nothing), its bytes, and what changed since a commit (renames paired by git).
Everything through `git` and one `CatFile`; the work tree's unchanged files are named by the index.

The store's own folder (`store`, when it is a folder of this repository) is left out of git's look at the work
tree: memstack rewrites its files and commits them at once, so git's index holds them as "racily clean" and
would read every one of them (tens of MB) to tell whether it changed; an anchor into that folder is read from
the file itself. Nor is that folder part of what changed since a commit (`changes`): lines of code do not
move into memory, and every memstack commit changes its files (a fact file of a large store is tens of
thousands of lines, each read where an anchor's lines are looked for in the files that changed); an
anchor into that folder is followed in its own file alone (a rename there reads as a delete)."""

import os
from collections.abc import Iterable
from pathlib import Path
from typing import NamedTuple

from memstack.base.errors import bad
from memstack.repo import git, objects
from memstack.repo.store import folder_in


class Entry(NamedTuple):
    kind: str  # "file", "symlink" or "other" (a submodule, a folder)
    blob: str | None  # a file's blob id


class Change(NamedTuple):
    status: str  # git's letter: A, M, R, D, T, C
    old: str | None
    new: str | None


class CodeTree:
    """The work tree of the repository at `top` (rev None) or its revision `rev`; `store`: the memstack
    store whose folder git need not look at (module docstring)."""

    def __init__(self, top: Path, rev: str | None = None, store: Path | None = None) -> None:
        self.top, self.env = top, git.no_git_env()
        self.rev = None if rev is None else self._commit(rev)
        self.skip = None if store is None else folder_in(store, top)  # "": the store is the repository
        self._cat: objects.CatFile | None = None
        self._changes: dict[str, dict[str, Change]] = {}

    def _commit(self, rev: str) -> str:
        found = git.run(self.top, "rev-parse", "--verify", "-q", "--end-of-options", f"{rev}^{{commit}}",
                        env=self.env, ok=(0, 1, 128))
        if found.returncode != 0:
            raise bad("--rev", repr(rev), "no such commit in the code repository {top}", top=str(self.top))
        return found.stdout.decode().strip()

    @property
    def cat(self) -> objects.CatFile:
        if self._cat is None:
            self._cat = objects.CatFile(self.top, self.env)
        return self._cat

    def close(self) -> None:
        if self._cat is not None:
            self._cat.close()

    def entries(self, paths: Iterable[str]) -> dict[str, Entry]:
        """What each of `paths` is now (a path missing from the answer is no file)."""
        wanted = set(paths)
        if not wanted:
            return {}
        if self.rev is not None:
            data = git.run(self.top, "ls-tree", "-r", "-z", "--full-tree", self.rev, env=self.env).stdout
            return {name: entry for name, entry in _listed(data, " ", wanted)}
        data = git.run(self.top, "ls-files", "-s", "-z", env=self.env).stdout
        index = dict(_listed(data, "index", wanted))
        dirty = git.run(self.top, "diff-files", "--name-only", "-z", "--", *self._outside(), env=self.env).stdout
        changed = {git.decode_path(raw) for raw in dirty.split(b"\0") if raw} & wanted
        if self.skip:  # not looked at by git: read from the file
            changed |= {path for path in wanted if path.startswith(self.skip)}
        found = {}
        for path in wanted:
            entry = index.get(path)
            if entry is not None and entry.kind == "file" and path not in changed:
                found[path] = entry
                continue
            full = self.top / path
            if full.is_symlink():
                found[path] = Entry("symlink", None)
            elif full.is_file():
                found[path] = Entry("file", objects.blob_id(full.read_bytes(), (entry and entry.blob) or objects.SHA1))
            elif os.path.lexists(full):
                found[path] = Entry("other", None)
        return found

    def _outside(self) -> list[str]:
        """The pathspec of everything but the store's folder (module docstring)."""
        return [".", f":(exclude,literal){self.skip}"] if self.skip else []

    def read(self, path: str) -> bytes | None:
        """The bytes of file `path` now (None: no such file)."""
        if self.rev is not None:
            return self.cat.read(f"{self.rev}:{path}")
        full = self.top / path
        return full.read_bytes() if full.is_file() and not full.is_symlink() else None

    def blob(self, sha: str) -> bytes | None:
        """A blob's bytes, None when this repository does not hold it (never committed here)."""
        found = self.cat.read_object(sha)
        return found[1] if found is not None and found[0] == "blob" else None

    def changes(self, since: str | None) -> dict[str, Change]:
        """What changed from commit `since` to now, by the path it had then (renames paired by git's
        rename detection) and by the path it has now; {} when `since` is None or unknown here."""
        if since is None:
            return {}
        if since not in self._changes:
            known = git.run(self.top, "cat-file", "-e", f"{since}^{{commit}}", env=self.env, ok=(0, 1, 128))
            found: dict[str, Change] = {}
            if known.returncode == 0:
                to = () if self.rev is None else (self.rev,)
                data = git.run(self.top, "diff", "--name-status", "-z", "-M", "--no-ext-diff", since, *to, "--",
                               *self._outside(), env=self.env).stdout
                parts = [git.decode_path(raw) for raw in data.split(b"\0") if raw]
                at = 0
                while at < len(parts):
                    letter = parts[at][0]
                    if letter in "RC":
                        change = Change(letter, parts[at + 1], parts[at + 2])
                        at += 3
                    else:
                        path = parts[at + 1]
                        change = Change(letter, None if letter == "A" else path, None if letter == "D" else path)
                        at += 2
                    for named in (change.old, change.new):
                        if named is not None:
                            found.setdefault(named, change)
            self._changes[since] = found
        return self._changes[since]


def _listed(data: bytes, how: str, wanted: set[str]) -> Iterable[tuple[str, Entry]]:
    """`ls-tree -r` (how " ") or `ls-files -s` (how "index") lines: each wanted path and what it is."""
    for raw in data.split(b"\0"):
        meta, tab, name = raw.partition(b"\t")
        if not tab:
            continue
        path = git.decode_path(name)
        if path not in wanted:
            continue
        fields = meta.decode().split(" ")
        mode, sha = fields[0], fields[2] if how == " " else fields[1]
        if how == "index" and fields[2] != "0":
            continue
        kind = "file" if mode in git.REGULAR else "symlink" if mode == git.SYMLINK else "other"
        yield path, Entry(kind, sha if kind == "file" else None)
