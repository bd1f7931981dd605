"""Where derived files are built from: the work tree, or a commit or the index in git.

A derived file must equal what a rebuild makes from the sources *in the same
commit* (I4), so builders read through this small interface rather than the
file system, and the checks can hand them a commit's blobs instead.
"""

from pathlib import Path
from typing import Protocol


class Source(Protocol):
    def read(self, relpath: str) -> bytes | None:
        """The file's bytes, or None if it does not exist."""

    def listdir(self, relpath: str) -> list[str]:
        """The names of the entries directly inside a folder (empty if none)."""


class WorktreeSource:
    def __init__(self, root: Path) -> None:
        self.root = root

    def read(self, relpath: str) -> bytes | None:
        try:
            return (self.root / relpath).read_bytes()
        except (FileNotFoundError, IsADirectoryError, NotADirectoryError):
            return None

    def listdir(self, relpath: str) -> list[str]:
        folder = self.root / relpath
        return sorted(p.name for p in folder.iterdir()) if folder.is_dir() else []
