"""Derived files and the builders that make them (I4): a registry, "path pattern -> builder".

A builder is a function `build(source) -> {relpath: bytes}` that makes every file of its group from the
sources it reads through a `Source` (the work tree, the index or a commit). The check (rebuilt.py) calls
it only for a change that touches one of its files, with the `Source` of that same index or commit, and
compares only the files that changed.

To register a builder, add (or change) an entry of DERIVED.
"""

import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass

from memstack.base import files
from memstack.base.patterns import lazy
from memstack.boot import context as boot
from memstack.kb import views
from memstack.repo.sources import Source

Builder = Callable[[Source], Mapping[str, files.Data]]
Shards = Callable[[Source, Iterable[str]], Mapping[str, bytes | None]]  # the files at these paths (None: none)
Known = Callable[[Source, Iterable[str]], Mapping[str, str | None]]  # blob ids of files built from these sources


@dataclass(frozen=True)
class Derived:
    pattern: re.Pattern[str]  # the store-relative paths this builder makes
    builder: Builder | None  # None while no builder is registered: the file is only checked to be JSON
    rebuild: str  # the command a user runs to rewrite these files
    shards: Shards | None = None  # files each built from their own sources: only those asked for are made
    known: Known | None = None  # of those, the blob ids of what this process built from the same sources

    def matches(self, relpath: str) -> bool:
        return self.pattern.fullmatch(relpath) is not None

    def build(self, source: Source, paths: Iterable[str]) -> Mapping[str, files.Data | None]:
        """What a rebuild makes of the group's files (at least those at `paths`) from `source`."""
        if self.shards is not None:
            return self.shards(source, paths)
        assert self.builder is not None
        return {path: data for path, data in self.builder(source).items() if self.matches(path)}


DERIVED: tuple[Derived, ...] = (
    Derived(lazy(r"session_anchor_[^/]+\.json|willow\.md"), boot.build, "memstack boot rebuild"),
    # The KB view shards: each made from its own source file (kb/views.py), so a commit's check
    # builds only the shards it changes.
    Derived(lazy(r"kb/(?:knowledge|jeles_atoms|opus_atoms)/[^/]+/[^/]+\.json|kb/binder_queue/[^/]+/[^/]+\.json"),
            None, "memstack rebuild", lambda source, paths: views.Shards(source).of(paths),
            lambda source, paths: views.Shards(source).remembered(paths)),
)


def find(relpath: str) -> Derived | None:
    for entry in DERIVED:
        if entry.matches(relpath):
            return entry
    return None
