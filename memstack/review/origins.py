"""Which commit added a line to an append-only memory file, and which merge brought it into a branch.

Memory files never lose a line (I1 for logs, I2 for facts: a fact is closed in place, its id stays), so
"the file holds this id" is false, then true for ever along a branch's first-parent line. The commit that
added the line is therefore found by a binary search over the commits that changed that one file on the
first-parent line (`git rev-list --first-parent REV -- FILE`), reading the file's blob at a dozen of them
through one `git cat-file --batch`: the cost follows the file's own history, logarithmically, never the
repository's (`git log -S` would diff every version of a multi-megabyte fact file). When the first commit
on the line that holds it is a merge, the line came from a merged side: that merge is what brought it in,
and the same search runs again on the side that held it.
"""

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from memstack.repo import git, history
from memstack.repo.objects import CatFile
from memstack.repo.store import folder_in


@dataclass(frozen=True, slots=True)
class Origin:
    added: history.CommitDetails  # the commit whose change to the file added the line
    merge: history.CommitDetails | None  # the merge on the branch's first-parent line that brought it in, if any


def commit_document(commit: history.CommitDetails | None) -> dict[str, Any] | None:
    if commit is None:
        return None
    return {"commit": commit.sha, "author": commit.author, "email": commit.email, "date": commit.date,
            "message": commit.subject, "parents": list(commit.parents)}


class History:
    """Origins of lines in the files of one store, read from the commit `rev` (HEAD) back."""

    def __init__(self, root: Path, rev: str = "HEAD") -> None:
        self.root = root
        top = git.worktree_top(root)
        self.top = top or root
        self.prefix = (folder_in(root, top) or "") if top else ""  # the store's folder in the repository
        self.head = git.rev_parse(root, f"{rev}^{{commit}}") if top else None  # None: no commit yet
        self._cat: CatFile | None = None
        self._details: dict[str, history.CommitDetails] = {}
        self._lines: dict[tuple[str, str], list[str]] = {}  # (rev, file): its first-parent line, asked once
        self._held: dict[tuple[str, str, bytes], bool] = {}

    def close(self) -> None:
        if self._cat is not None:
            self._cat.close()

    def __enter__(self) -> "History":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _holds(self, relpath: str, needle: bytes) -> Callable[[str], bool]:
        if self._cat is None:
            self._cat = CatFile(self.top, env=git.no_git_env())
        cat, spec = self._cat, f"{self.prefix}{relpath}"

        def holds(sha: str) -> bool:
            if (sha, relpath, needle) not in self._held:
                self._held[sha, relpath, needle] = needle in (cat.read(f"{sha}:{spec}") or b"")
            return self._held[sha, relpath, needle]
        return holds

    def commit(self, sha: str) -> history.CommitDetails:
        if sha not in self._details:
            self._details.update(history.details(self.root, [sha]))
        return self._details[sha]

    def origin(self, relpath: str, needle: bytes) -> Origin | None:
        """Where the line of store file `relpath` holding `needle` came from, or None when the branch's
        commit does not hold it (written, not committed yet)."""
        if self.head is None:
            return None
        return self._origin(self.head, relpath, needle, self._holds(relpath, needle))

    def _origin(self, rev: str, relpath: str, needle: bytes, holds: Callable[[str], bool]) -> Origin | None:
        if (rev, relpath) not in self._lines:
            self._lines[rev, relpath] = history.first_parent_touching(self.root, rev, relpath)  # newest first
        line = self._lines[rev, relpath]
        if not line or not holds(line[0]):
            return None
        newest, oldest = 0, len(line) - 1  # holds(line[newest]) is true; find the oldest that holds it
        while newest < oldest:
            middle = (newest + oldest + 1) // 2
            if holds(line[middle]):
                newest = middle
            else:
                oldest = middle - 1
        first = self.commit(line[newest])
        if len(first.parents) < 2:
            return Origin(first, None)
        for parent in first.parents[1:]:
            inner = self._origin(parent, relpath, needle, holds) if holds(parent) else None
            if inner is not None:
                return Origin(inner.added, first)
        return Origin(first, None)  # the merge itself wrote it (a resolution): it added the line
