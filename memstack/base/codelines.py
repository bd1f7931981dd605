"""Lines of code as code anchors see them: a file's text split into lines, a line whitespace-normalised, the
hash of a run of lines (`lines_sha256`), and where a run with that hash stands in a text. Pure functions,
shared by the anchors (anchors/) and the boot context's list of facts to re-verify (boot/)."""

import hashlib
from collections.abc import Sequence

from memstack.base.patterns import lazy

_SPACE = lazy(r"\s+")


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


def _digest(keys: Sequence[str]) -> str:
    """The hash of lines already normalised (`sha256` of the lines they were made from)."""
    return hashlib.sha256("\n".join(keys).encode()).hexdigest()


def runs(keys: Sequence[str], count: int) -> set[str]:
    """The hash of every run of `count` lines of a text (`keys`: its lines normalised): to ask of many anchors
    into one text whether their lines are somewhere in it, each run hashed once."""
    return {_digest(keys[at:at + count]) for at in range(len(keys) - count + 1)} if count > 0 else set()


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
        if _digest(keys[at:at + count]) == digest:
            if best is None or abs(at + 1 - near) < abs(best - near):
                best = at + 1
    return best
