"""Derived files and the builders that make them (I4): "path pattern -> builder".

A builder is a function `build(source) -> {relpath: bytes}` that makes every file
of its group from the sources it reads through a `Source` (the work tree, the
index or a commit). The check calls it only for a change that touches one of its
files, with the `Source` of that same index or commit, and compares only the
files that changed. Builders are named "module:function" and imported on first
use, so a check that touches no derived file imports none of them.

To register a builder, add (or change) an entry of DERIVED.
"""

import importlib
import re
from collections.abc import Callable
from dataclasses import dataclass

from memstack.base import files
from memstack.repo.sources import Source

Builder = Callable[[Source], dict[str, bytes]]


@dataclass(frozen=True)
class Derived:
    pattern: re.Pattern[str]  # the store-relative paths this builder makes
    builder: str | None  # "module:function", or None while no builder is registered
    rebuild: str  # the command a user runs to rewrite these files

    def matches(self, relpath: str) -> bool:
        return self.pattern.fullmatch(relpath) is not None

    def build(self, source: Source) -> dict[str, files.Data]:
        assert self.builder is not None
        module, _, function = self.builder.partition(":")
        built: dict[str, files.Data] = getattr(importlib.import_module(module), function)(source)
        return {path: data for path, data in built.items() if self.matches(path)}


DERIVED: tuple[Derived, ...] = (
    Derived(re.compile(r"session_anchor_[^/]+\.json|willow\.md"), "memstack.boot.context:build", "memstack boot rebuild"),
    # The KB views read every fact file of the state checked: O(store), paid only by a
    # commit that changes a view (a promotion or a rebuild).
    Derived(re.compile(r"kb/(?:knowledge|jeles_atoms|opus_atoms|binder_queue)\.json"), "memstack.kb.views:build",
            "memstack rebuild"),
)


def find(relpath: str) -> Derived | None:
    for entry in DERIVED:
        if entry.matches(relpath):
            return entry
    return None
