"""An anchor's lines: the `--anchor` text parsed, a file's text split into lines, the whitespace-normalised
hash of a run of lines, and where a run of lines is found again in a text."""

import hashlib
import re
from collections.abc import Sequence

from memstack.base.errors import bad

_RANGE = re.compile(r"^(\d+)(?:-(\d+))?$")
_SPACE = re.compile(r"\s+")
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


def text_lines(data: bytes) -> list[str] | None:
    """The lines of a text file (without their ends), or None when it is not UTF-8 text (binary)."""
    if b"\0" in data:
        return None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return None
    return text.splitlines()


def normalised(line: str) -> str:
    """A line as its hash sees it: whitespace runs made one space, none at either end."""
    return _SPACE.sub(" ", line).strip()


def sha256(lines: Sequence[str]) -> str:
    """`lines_sha256`: the lines normalised, joined with newlines, UTF-8, hashed."""
    return hashlib.sha256("\n".join(normalised(line) for line in lines).encode()).hexdigest()


def find(keys: Sequence[str], digest: str, count: int, near: int, first: str | None = None) -> int | None:
    """The 1-based start of a run of `count` lines hashing to `digest`, the one nearest line `near` when
    several do; None when none does. `keys`: the text's lines normalised (`normalised`); `first`: the run's
    first line normalised, when known (only the runs starting with it are hashed)."""
    if count <= 0 or count > len(keys):
        return None
    best: int | None = None
    for at in range(len(keys) - count + 1):
        if first is not None and keys[at] != first:
            continue
        if hashlib.sha256("\n".join(keys[at:at + count]).encode()).hexdigest() == digest:
            if best is None or abs(at + 1 - near) < abs(best - near):
                best = at + 1
    return best


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
