"""An anchor's lines: the `--anchor` text parsed, and a range of lines followed through an edit. A file's
lines, their whitespace-normalised hash and where a run of them is found again are base/codelines.py's
(the boot context's list of facts to re-verify uses them too), named here as well."""

from collections.abc import Sequence

from memstack.base.codelines import find, normalised, sha256, text_lines
from memstack.base.errors import bad
from memstack.base.patterns import lazy

__all__ = ["MAX_ANCHORS", "find", "follow_range", "normalised", "parse", "sha256", "text_lines"]

_RANGE = lazy(r"^(\d+)(?:-(\d+))?$")
MAX_ANCHORS = 64  # per record, as schemas/intake.schema.json and fact.schema.json say


def parse(text: str) -> tuple[str, int | None, int | None]:
    """`PATH`, `PATH:START` or `PATH:START-END` as (path, start, end); the path as given."""
    if not isinstance(text, str) or not text.strip():
        raise bad("--anchor", repr(text), "give PATH, PATH:LINE or PATH:START-END")
    path, colon, tail = text.rpartition(":")
    found = _RANGE.match(tail) if colon else None
    if found is None:
        return text, None, None
    start = int(found.group(1))
    end = int(found.group(2)) if found.group(2) else start
    if start < 1 or end < start:
        raise bad("--anchor", repr(text), "lines are numbered from 1 and START-END must not run backwards")
    if not path:
        raise bad("--anchor", repr(text), "give PATH, PATH:LINE or PATH:START-END")
    return path, start, end


def follow_range(old: Sequence[str], new: Sequence[str], start: int, end: int) -> tuple[int, int] | None:
    """Where lines `start`-`end` (1-based, inclusive) of `old` are in `new` after the edit between them
    (difflib's matching, whitespace-normalised): (start, end) in `new`, or None when they were deleted."""
    from difflib import SequenceMatcher  # deferred: only for an anchor whose lines changed

    matcher = SequenceMatcher(None, [normalised(line) for line in old], [normalised(line) for line in new],
                              autojunk=False)
    first, last = start - 1, end  # a half-open [first, last) in old
    new_first: int | None = None
    new_last: int | None = None
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if i2 <= first or i1 >= last or tag == "insert":
            continue
        low = j1 + (max(first, i1) - i1) if tag == "equal" else j1
        high = j1 + (min(last, i2) - i1) if tag == "equal" else j2
        if high > low:
            new_first = low if new_first is None else min(new_first, low)
            new_last = high if new_last is None else max(new_last, high)
    if new_first is None or new_last is None:
        return None
    return new_first + 1, new_last
