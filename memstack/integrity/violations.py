"""An invariant violation, reported as `path:line: I<n> what is wrong — how to fix it`; what is wrong with a
changed path itself (`path_problems`); violations found in a piece of a file, numbered in the file (`shifted`)."""

import dataclasses
from dataclasses import asdict, dataclass
from typing import Any

from memstack.base import layout
from memstack.base.layout import Place
from memstack.repo import git
from memstack.repo.diffs import Change


@dataclass(frozen=True, order=True)
class Violation:
    path: str
    line: int  # 0 when the violation is about the whole file
    rule: str  # "I1" .. "I7"
    what: str
    fix: str

    def __str__(self) -> str:
        where = f"{self.path}:{self.line}" if self.line else self.path
        return f"{where}: {self.rule} {self.what} — {self.fix}"

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def path_problems(change: Change, place: Place) -> list[Violation]:
    """I7 and stray files: what is wrong with a new or changed path itself."""
    path = change.path
    if change.new_mode == git.SYMLINK:
        return [Violation(path, 0, "I7", "is a symlink", "replace it with a regular file; memstack refuses symlinks")]
    if change.new_mode == git.GITLINK:
        return [Violation(path, 0, "I7", "is a submodule", "remove it; a store holds only regular files")]
    try:
        path.encode("utf-8")
    except UnicodeEncodeError:
        return [Violation(path.encode("utf-8", "surrogateescape").decode("utf-8", "replace"), 0, "I7",
                          "the path is not UTF-8", "rename it (`git mv`)")]
    if place.kind == layout.BAD_NAME:
        return [Violation(path, 0, "I7", place.problem, "rename it (`git mv`)")]
    if place.kind == layout.STRAY:
        return [Violation(path, 0, "I5", f"stray file: {place.problem}",
                          f"move it out of the layer folder (files there are {layout.expected_shape(path)})")]
    return []


def shifted(found: list[Violation], first: int) -> list[Violation]:
    """Violations found in a piece of a file whose first line is line `first` of the file."""
    return [dataclasses.replace(v, line=v.line + first - 1) if v.line else v for v in found]
