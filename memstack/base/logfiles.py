"""JSONL log files read and continued safely: what an append checks first (a torn last line, a git conflict
marker in the last megabyte, a last line that is no JSON object), and whole or streamed reads that name a
bad line. `files.append_held` runs `check_appendable` before every append."""

from collections.abc import Iterator
from pathlib import Path

from memstack.base import jsonio
from memstack.base.errors import MemstackError


def check_tail(path: Path, relpath: str) -> None:
    """Refuse to append to a file whose last line is torn (no final newline)."""
    try:
        size = path.stat().st_size
    except FileNotFoundError:
        return
    if size == 0:
        return
    with path.open("rb") as handle:
        handle.seek(size - 1)
        if handle.read(1) != b"\n":
            raise MemstackError(
                f"{relpath}: I7 the last line is incomplete (a torn write, e.g. a crash mid-append)"
                " — remove the partial last line (`git checkout -- <file>` if it was committed,"
                " or truncate the file after its last newline), then retry"
            )


# What an append reads of the file it continues (`check_appendable`): the last megabyte, whatever the file's
# size. Memory files of a day or a month are mostly smaller, so in practice the whole file.
APPEND_WINDOW = 1 << 20
# The lines git leaves in a file it could not merge (and memstack's merge driver for a fact it cannot
# settle): `<<<<<<< ours`, `||||||| base` (diff3), `=======`, `>>>>>>> theirs`. No JSON line starts so.
CONFLICT_MARKERS = (b"<<<<<<<", b"|||||||", b"=======", b">>>>>>>")


def check_appendable(path: Path, relpath: str) -> None:
    """Refuse to append to a JSONL file an append would not continue as valid JSONL: a torn last line
    (`check_tail`), a git conflict marker line in its last megabyte (an unresolved merge), or a last
    line that is not a JSON object. The cost is bounded, whatever the file's size: one read of at most
    `APPEND_WINDOW` bytes from its end, a byte search per marker, one JSON parse of the last line. A
    marker further back is left to the readers and the checks, which name it; the file is counted
    whole only to name the line of a refusal."""
    check_tail(path, relpath)
    try:
        size = path.stat().st_size
    except FileNotFoundError:
        return
    if size == 0:
        return
    with path.open("rb") as handle:
        start = max(0, size - APPEND_WINDOW)
        handle.seek(start)
        window = handle.read()
        at = window.rfind(b"\n", 0, len(window) - 1) + 1
        while at == 0 and start > 0:  # the last line is longer than the window: read back to its start
            step = min(start, APPEND_WINDOW)
            handle.seek(start - step)
            window = handle.read(step) + window
            start -= step
            at = window.rfind(b"\n", 0, len(window) - 1) + 1
    where = conflict_marker(window, 0 if start == 0 else window.find(b"\n") + 1)  # from a whole line
    if where >= 0:
        raise conflicted(relpath, _line_of(path, start + where), window[where:where + 7])
    last = window[at:-1]
    try:
        record = jsonio.loads(last, relpath)
    except MemstackError as exc:
        problem = str(exc).split("invalid JSON ", 1)[-1]
        record, why = None, f"is not valid JSON {problem}"
    else:
        why = "is not a JSON object"
    if not isinstance(record, dict):
        raise MemstackError(
            f"{relpath}:{_line_of(path, start + at)}: I5 the last line {why} — repair or remove it"
            " (`git checkout -- <file>` if it was committed), then retry")


def conflict_marker(data: bytes, first: int = 0) -> int:
    """Where the first line of `data` from byte `first` (a line's start) that is a conflict marker starts;
    -1 when none is (a byte search per marker; first, two counts: a log whose every line begins a JSON
    object, as memstack writes them, holds no marker line)."""
    lines = data.count(b"\n", first) + (0 if data.endswith(b"\n") else 1)
    if data.startswith(b"{", first) and data.count(b"\n{", first) == lines - 1:
        return -1
    found = []
    for marker in CONFLICT_MARKERS:
        if data.startswith(marker, first):
            found.append(first)
        elif (at := data.find(b"\n" + marker, first)) >= 0:
            found.append(at + 1)
    return min(found, default=-1)


def conflicted(relpath: str, line: int, marker: bytes) -> MemstackError:
    return MemstackError(f"{relpath}:{line}: I5 a git conflict marker ({marker.decode()}): the file holds an"
                         " unresolved merge — resolve it (keep the lines of both sides, remove the marker"
                         " lines), then retry")


def _line_of(path: Path, offset: int) -> int:
    """The number of the line starting at byte `offset` (the file read in pieces: only for a refusal)."""
    count, done = 1, 0
    with path.open("rb") as handle:
        while done < offset:
            piece = handle.read(min(APPEND_WINDOW, offset - done))
            if not piece:
                break
            count += piece.count(b"\n")
            done += len(piece)
    return count


def read_log(store: Path, relpath: str) -> list[dict]:
    """Every record of the store's log at `relpath` (none when it does not exist yet)."""
    path = store / relpath
    return read_jsonl(path, relpath) if path.exists() else []


def read_jsonl(path: Path, relpath: str) -> list[dict]:
    """Every record of a JSONL file; a torn last line or a bad line is an error naming the line."""

    data = path.read_bytes()
    if data and not data.endswith(b"\n"):
        check_tail(path, relpath)
    return jsonio.parse_jsonl(data, relpath)


def iter_jsonl(path: Path, relpath: str) -> Iterator[dict]:
    """The records of a JSONL file one by one, read a megabyte at a time (what read_jsonl lists): a
    reader that keeps a few of a long log's records never holds the rest, nor the whole file."""

    check_tail(path, relpath)
    number = 1
    with path.open("rb") as handle:
        while True:
            lines = handle.readlines(2**20)
            if not lines:
                return
            yield from jsonio.iter_jsonl(b"".join(lines), relpath, number)
            number += len(lines)
