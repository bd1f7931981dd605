"""Derived files and the builders that make them (I4): a registry, "path pattern -> builder".

A builder is a function `build(source) -> {relpath: bytes}` that makes every file of its group from the
sources it reads through a `Source` (the work tree, the index or a commit). The check (rebuilt.py) calls
it only for a change that touches one of its files, with the `Source` of that same index or commit, and
compares only the files that changed.

To register a builder, add (or change) an entry of DERIVED.
"""

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from memstack.base import files
from memstack.boot import context as boot
from memstack.kb import views
from memstack.repo.sources import Source

Builder = Callable[[Source], Mapping[str, files.Data]]


@dataclass(frozen=True)
class Derived:
    pattern: re.Pattern[str]  # the store-relative paths this builder makes
    builder: Builder | None  # None while no builder is registered: the file is only checked to be JSON
    rebuild: str  # the command a user runs to rewrite these files
    patchable: bool = False  # the KB views: a check patches the last checked ones (kb/viewpatch.py)

    def matches(self, relpath: str) -> bool:
        return self.pattern.fullmatch(relpath) is not None

    def build(self, source: Source) -> dict[str, files.Data]:
        assert self.builder is not None
        return {path: data for path, data in self.builder(source).items() if self.matches(path)}


DERIVED: tuple[Derived, ...] = (
    Derived(re.compile(r"session_anchor_[^/]+\.json|willow\.md"), boot.build, "memstack boot rebuild"),
    # The KB views read every fact file of the state checked: O(store), paid only by a
    # commit that changes a view (a promotion or a rebuild), and patched where they can be.
    Derived(re.compile(r"kb/(?:knowledge|jeles_atoms|opus_atoms|binder_queue)\.json"), views.build,
            "memstack rebuild", patchable=True),
)


def find(relpath: str) -> Derived | None:
    for entry in DERIVED:
        if entry.matches(relpath):
            return entry
    return None
