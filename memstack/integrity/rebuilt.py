"""I4: a derived file a step changes equals what its builder makes from the sources of that same state.

The builders are found in `derived.DERIVED` by path. A KB view shard is made from its own source file
(kb/views.py): a step's check makes only the shards it changes. Files are compared by git's hash of what
a rebuild makes, so an unchanged file is never read. In an audit (`--all`) a view may lag its sources:
it is said (stale), not refused.
"""

from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

from memstack.base import files
from memstack.base.errors import MemstackError
from memstack.boot import context as boot
from memstack.boot import reverify
from memstack.integrity import derived, rules
from memstack.integrity.blobs import Blobs
from memstack.integrity.report import Step
from memstack.integrity.violations import Violation
from memstack.kb import views
from memstack.repo import git, objects
from memstack.repo.diffs import Change


def check(step: Step, changes: list[Change], repo: Path, folder: str, blobs: Blobs,
          stale: list[str]) -> list[Violation]:
    """I4 on the step's changed derived files; an audit's lagging views are added to `stale`."""
    groups: dict[derived.Derived, list[Change]] = {}
    for change in changes:
        entry = derived.find(change.path)
        if entry is not None:
            groups.setdefault(entry, []).append(change)
    found: list[Violation] = []
    for entry, changed in groups.items():
        if entry.builder is None and entry.shards is None:
            for change in changed:
                new = blobs.new(step, change)
                if new is not None:
                    found += rules.view_json(change.path, new, entry.rebuild)
            continue
        for members in _batches(entry, changed):
            found += _rebuilt(step, entry, members, blobs, stale)
    if step.audit:
        stale += missing_shards(step, {c.path for c in changes})
    return found


T = TypeVar("T")
SOURCES_AT_ONCE = 64  # source files whose shards are built and compared at a time: an audit's are all of them


def _batches(entry: derived.Derived, changes: list[Change]) -> list[list[Change]]:
    """A sharded view's changes, SOURCES_AT_ONCE source files' shards at a time (`by_sources`): what is built
    and held for comparing stays bounded also when a step changes every shard (an audit of a million
    records: 185 MB of views)."""
    return [changes] if entry.shards is None else by_sources(changes, lambda change: change.path)


def by_sources(items: list[T], path_of: Callable[[T], str]) -> list[list[T]]:
    """`items` (shard paths or changes of them) in batches of the shards of SOURCES_AT_ONCE source files, each
    source's shards together, so each source is read once."""
    grouped: dict[str, list[T]] = {}
    for item in items:
        found = views.source_of(path_of(item))
        grouped.setdefault(found[1] if found else path_of(item), []).append(item)
    ordered = [grouped[key] for key in sorted(grouped)]
    return [[item for group in ordered[at:at + SOURCES_AT_ONCE] for item in group]
            for at in range(0, len(ordered), SOURCES_AT_ONCE)]


def _rebuilt(step: Step, entry: derived.Derived, members: list[Change], blobs: Blobs,
             stale: list[str]) -> list[Violation]:
    """I4 on `members`, derived files of one builder, built together (those this process built from the
    same sources already, `known`, compared by id: a promotion's commit)."""
    found: list[Violation] = []
    try:
        known = entry.known(step.source, [c.path for c in members]) if entry.known is not None else {}
        members = [c for c in members if c.path not in known or known[c.path] != (None if c.deleted else c.new_sha)]
        if not members:
            return found
        built = entry.build(step.source, [c.path for c in members])
    except (MemstackError, KeyError, TypeError, ValueError) as exc:
        why = exc.message if isinstance(exc, MemstackError) else f"{type(exc).__name__}: {exc}"
        return [Violation(c.path, 0, "I4", f"cannot be rebuilt from the sources in this state ({why})",
                          f"fix the sources, then run `{entry.rebuild}`") for c in members]
    for change in members:
        expected = built.get(change.path)
        if expected is not None and not change.deleted \
                and objects.blob_id(expected, change.new_sha) == change.new_sha:
            continue  # the very bytes a rebuild makes (compared by git's hash: the blob is not read)
        if step.audit and (expected is not None or entry.shards is not None) and not change.deleted \
                and change.new_mode in git.REGULAR:
            stale.append(change.path)  # I4: views may lag (a shard a rebuild deletes too); said, not refused
            continue
        actual = blobs.new(step, change)
        if change.path == boot.WILLOW and actual is not None and expected is not None \
                and reverify.lags(actual, files.whole(expected), step.source):
            continue  # its To re-verify section was built against other code (a rebase): it lags, allowed
        made = None if expected is None else files.whole(expected)  # they differ: held for the diff
        found += compare(change.path, actual, made, entry.rebuild)
    return found


def missing_shards(step: Step, present: set[str]) -> list[str]:
    """In an audit: the view shards a rebuild would make from the step's sources that are not there
    (a source written since the last promotion, say): stale, as a lagging shard is."""
    wanted = views.touched(step.source, [c.path for c in step.changes], set(), [])
    absent = sorted(p for p in wanted or () if p not in present and not p.startswith("kb/binder_queue/"))
    made = []
    for paths in by_sources(absent, lambda path: path):  # a few sources' shards held at a time, as in `check`
        batch = set(paths)
        made += [p for p, data in views.Shards(step.source).of(batch).items() if data is not None and p in batch]
    return sorted(made)


def compare(path: str, actual: bytes | None, expected: bytes | None, rebuild: str) -> list[Violation]:
    if actual == expected:
        return []
    if expected is None:
        return [Violation(path, 0, "I4", "derived file that no rebuild makes from these sources",
                          f"delete it (`{rebuild}` makes every derived file there should be)")]
    if actual is None:
        return [Violation(path, 0, "I4", "derived file deleted, but a rebuild makes it",
                          f"run `{rebuild}` and commit the result")]
    old_lines, new_lines = rules.lines(actual), rules.lines(expected)
    line = next((i + 1 for i, (a, b) in enumerate(zip(old_lines, new_lines, strict=False)) if a != b),
                min(len(old_lines), len(new_lines)) + 1)
    return [Violation(path, line, "I4", "differs from what a rebuild makes from the sources in this state"
                                        " (edited by hand?)", f"run `{rebuild}` and commit the result; never edit it")]
