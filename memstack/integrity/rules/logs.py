"""I1: append-only logs. Against the first parent (or HEAD) the base is a prefix of the new content;
against a merge's other parents and a force-pushed tip, each of its lines survives."""

from collections import Counter

from memstack.integrity.rules.text import lines
from memstack.integrity.violations import Violation

I1_FIX = ("restore the committed lines ({restore}) and add new records only as new lines at the end;"
          " append-only logs are never edited, reordered, truncated, deleted or renamed")


def _first_difference(old: list[bytes], new: list[bytes]) -> tuple[int, str]:
    """The 1-based line where `old` stops being a prefix of `new`, and what happened to it."""
    index = next((i for i, (a, b) in enumerate(zip(old, new, strict=False)) if a != b), min(len(old), len(new)))
    if index >= len(new):
        return index + 1, f"lines {index + 1}-{len(old)} were removed (the log was truncated)"
    if old[index] in set(new[index:]):
        return index + 1, f"line {index + 1} was moved (lines reordered or a line inserted before it)"
    return index + 1, f"line {index + 1} was edited or deleted"


def append_only(path: str, old: bytes, new: bytes, *, prefix: bool, restore: str) -> tuple[list[Violation], int]:
    """I1 on a log that exists on both sides. Returns the violations and, when `new` only
    appends whole lines to `old`, the byte offset in `new` where the appended lines start
    (-1 otherwise, or when not asked to find it: `prefix` False)."""
    fix = I1_FIX.format(restore=restore)
    base = old if not old or old.endswith(b"\n") else old + b"\n"  # a torn last line may be completed, never edited
    if new.startswith(base):
        return [], len(base) if prefix else -1
    old_lines, new_lines = lines(old), lines(new)
    if not prefix:
        missing = _first_lost(old_lines, new_lines)
        if missing is None:
            return [], -1
        return [Violation(path, missing + 1, "I1", f"line {missing + 1} of the other side is lost", fix)], -1
    if new.startswith(old):
        number = len(old_lines)
        return [Violation(path, number, "I1",
                          f"line {number}, committed without a final newline, was extended", fix)], -1
    number, what = _first_difference(old_lines, new_lines)
    return [Violation(path, number, "I1", what, fix)], -1


def _first_lost(old: list[bytes], new: list[bytes]) -> int | None:
    """The index of the first line of `old` that `new` lacks, or None when every line survives.

    Order is not required: a merge keeps the first parent's order, and the other
    side's records, already interleaved with it, land where the union puts them."""
    left = Counter(new)
    for index, line in enumerate(old):
        if left[line] == 0:
            return index
        left[line] -= 1
    return None
