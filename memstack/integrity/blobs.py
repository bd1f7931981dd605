"""The two sides of a change, read for a check: the base's blob, the new state's blob or work-tree file.

One long-running `git cat-file --batch` serves a whole check; the last two blobs read (a file's old and
new side) are kept, as I8 reads them again after the history rules."""

from pathlib import Path

from memstack.base.errors import MemstackError
from memstack.integrity.report import Step
from memstack.repo import git, objects
from memstack.repo.diffs import Change


class Blobs:
    def __init__(self, repo: Path) -> None:
        self.cat = objects.CatFile(repo)
        self.last: list[tuple[str, bytes]] = []

    def close(self) -> None:
        self.cat.close()

    def blob(self, sha: str) -> bytes:
        for known, kept in self.last:
            if known == sha:
                return kept
        data = self.cat.read(sha)
        if data is None:
            raise MemstackError(f"git has no object {sha} (a shallow or partial clone? fetch the full history)")
        self.last = [*self.last[-1:], (sha, data)]
        return data

    def old(self, change: Change | None) -> bytes | None:
        """The base's side of a change (None: added, gone, or not a regular file)."""
        if change is None or change.added or change.old_mode not in git.REGULAR:
            return None
        return self.blob(change.old_sha)

    def new(self, step: Step, change: Change) -> bytes | None:
        """The new state's side (None: deleted, or not a regular file)."""
        if change.deleted or change.new_mode not in git.REGULAR:
            return None
        if git.is_zero(change.new_sha) and step.worktree is not None:
            try:
                return (step.worktree / change.path).read_bytes()
            except (FileNotFoundError, IsADirectoryError):
                return None
        return self.blob(change.new_sha)
