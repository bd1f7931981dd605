"""Taking code anchors when a record is written: each `--anchor` checked against the code repository's work
tree (inside it, no `..`, no symlink, a UTF-8 text file, lines within it) and made into the record's
fields. A bad one refuses the whole write: nothing is written."""

import os
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from memstack.anchors import lines
from memstack.anchors.coderepo import code_repository, head
from memstack.base.errors import bad
from memstack.base.files import LOCAL
from memstack.repo import objects
from memstack.repo.store import Store

Anchor = dict[str, Any]


def take_all(store: Store, given: Iterable[str] | None, *, repo: str | None = None,
             here: Path | None = None) -> list[Anchor] | None:
    """The anchors of `given` (`PATH[:START[-END]]` texts), or None when none is given. A relative PATH is
    taken from `here` (the command line's folder) when that lies in the code repository, else from its top."""
    texts = list(given or ())
    if not texts:
        return None
    if len(texts) > lines.MAX_ANCHORS:
        raise bad("--anchor", None, "at most {most} anchors on one record", most=lines.MAX_ANCHORS)
    top = code_repository(store, repo)
    base = top
    if here is not None and here.resolve().is_relative_to(top):
        base = here.resolve()
    commit = head(top)
    taken: list[Anchor] = []
    for text in texts:
        anchor = take(top, base, text, commit)
        if anchor not in taken:
            taken.append(anchor)
    return taken


def relative_path(top: Path, base: Path, text: str, path: str) -> str:
    """The anchor's path from the repository's top (`/` between folders), or a refusal naming `text`."""
    if "\0" in path or any(part == ".." for part in Path(path).parts):
        raise bad("--anchor", repr(text), "a path with `..` is refused: name the file from inside the repository")
    full = Path(os.path.normpath(base / path))
    if not full.is_relative_to(top):
        raise bad("--anchor", repr(text), "outside the code repository {top}", top=str(top))
    relative = full.relative_to(top)
    if not relative.parts or relative.parts[0] == ".git":
        raise bad("--anchor", repr(text), "not a file of the code repository {top}", top=str(top))
    if LOCAL in relative.parts:  # a store's clone-local caches: in no other clone
        raise bad("--anchor", repr(text), "a file of a store's clone-local folder ({local}/), which no other clone"
                  " has: anchor a committed file", local=LOCAL)
    walked = top
    for part in relative.parts:
        walked = walked / part
        if walked.is_symlink():
            raise bad("--anchor", repr(text), "{name} is a symbolic link: anchor the file it points to",
                      name=str(walked.relative_to(top)))
    if not full.exists():
        here = "" if base == top else f" (a relative path is taken from the folder you run in: {base.relative_to(top)})"
        raise bad("--anchor", repr(text), "no such file {file} in the code repository {top}{here}",
                  file=relative.as_posix(), top=str(top), here=here)
    if not full.is_file():
        raise bad("--anchor", repr(text), "not a file")
    return relative.as_posix()


def take(top: Path, base: Path, text: str, commit: str | None) -> Anchor:
    path, start, end = lines.parse(text)
    relative = relative_path(top, base, text, path)
    data = (top / relative).read_bytes()
    found = lines.text_lines(data)
    if found is None:
        raise bad("--anchor", repr(text), "a binary file (not UTF-8 text): anchors point at lines of text")
    if end is not None and end > len(found):
        raise bad("--anchor", repr(text), "past the end of the file ({count} lines)", count=len(found))
    chosen = found if start is None or end is None else found[start - 1:end]
    return {"path": relative, "start": start, "end": end, "commit": commit,
            "blob": objects.blob_id(data, commit or objects.SHA1), "lines_sha256": lines.sha256(chosen)}
