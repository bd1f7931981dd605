"""Documents a human files in the Binder (Willow's `mem_binder_file`): confirmed knowledge, kept in the store.

`file_document` copies the document to `kb/files/<sha256>[.ext]` (named by its
content, so a copy never changes and two filings of one text are one file) and
appends a `kind: file` entry to `kb/binder.jsonl` naming who filed it and when.
Both are append-only: a filed document is never edited or deleted (the checks
refuse it, I1); a new version is filed as a new document.
"""

import hashlib
import os
import stat
from pathlib import Path
from typing import Any

from memstack.base import files, jsonio, layout, limits, logfiles
from memstack.base.errors import bad, os_problem
from memstack.base.files import append_line, create_exclusive, locked
from memstack.base.names import check_printable
from memstack.base.patterns import lazy
from memstack.base.secrets import refuse_secrets
from memstack.kb import binder

FOLDER = "kb/files"
_EXTENSION = lazy(r"\.([a-z0-9]{1,16})$")
_SYSTEM = ("/proc", "/sys", "/dev")  # where the system shows processes and devices as files


def stored_path(data: bytes, name: str) -> str:
    """Where a document is kept: its SHA-256, and its name's extension when it has a plain one."""
    ext = _EXTENSION.search(name.lower())
    return f"{FOLDER}/{hashlib.sha256(data).hexdigest()}" + (f".{ext.group(1)}" if ext else "")


def _source(path: Path, within: Path | None) -> Path:
    """The document's real path: refused in /proc, /sys or /dev, and, unless `within` is None, outside
    the folder `within` (the repository that holds the store) or inside its .git."""
    shown = repr(str(path))
    real = Path(os.path.realpath(path))
    for folder in _SYSTEM:
        if real.is_relative_to(folder):
            raise bad("PATH", shown, "is in {folder}, where the system shows processes and devices as files,"
                      " not a document", folder=folder)
    if within is not None:
        top = Path(os.path.realpath(within))
        if not real.is_relative_to(top):
            raise bad("PATH", shown, "is outside the repository that holds the store ({top}): a filed document"
                      " comes from inside it (copy it in first; on the command line --outside-repo files it from"
                      " anywhere)", top=str(top))
        if ".git" in real.relative_to(top).parts:
            raise bad("PATH", shown, "is inside .git, git's own files, not a document")
    return real


def _read(path: Path, within: Path | None, most: int) -> bytes:
    """The bytes of a regular file (no symbolic link, FIFO, socket or device; opened without following a
    link, without waiting for a writer), at most `most` of them."""
    shown = repr(str(path))
    real = _source(path, within)
    try:
        seen = os.lstat(path)
    except (FileNotFoundError, NotADirectoryError):
        raise bad("PATH", shown, "no such file") from None
    if stat.S_ISLNK(seen.st_mode):
        raise bad("PATH", shown, "is a symbolic link: file the document itself")
    if stat.S_ISDIR(seen.st_mode):
        raise bad("PATH", shown, "is a folder, not a file")
    if not stat.S_ISREG(seen.st_mode):
        kind = ("a FIFO" if stat.S_ISFIFO(seen.st_mode) else "a socket" if stat.S_ISSOCK(seen.st_mode)
                else "a device")
        raise bad("PATH", shown, "is {kind}, not a regular file: only a document's bytes are filed", kind=kind)
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_NOCTTY)
    except OSError as exc:
        raise bad("PATH", shown, "{why}", why=os_problem(exc)) from None
    with os.fdopen(fd, "rb") as handle:
        opened = os.fstat(handle.fileno())
        same = (opened.st_dev, opened.st_ino)
        if not stat.S_ISREG(opened.st_mode) or same != (seen.st_dev, seen.st_ino) or same != _identity(real):
            raise bad("PATH", shown, "changed while it was opened: file it again")
        data = handle.read(most + 1)
    if len(data) > most:
        raise bad("PATH", shown, "more than the {most:,} bytes a filed document may hold (limits.file_bytes"
                  " in memstack.yaml)", most=most)
    if len(data) != opened.st_size:
        raise bad("PATH", shown, "its size changed as it was read (a file the system makes up): not a document")
    if not data.strip():
        raise bad("PATH", shown, "empty, nothing to file")
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        raise bad("PATH", shown, "not UTF-8 text (the Binder keeps documents an agent can read:"
                  " Markdown, text)") from None
    return data


def _identity(path: Path) -> tuple[int, int]:
    try:
        found = os.stat(path)
    except OSError:
        return (-1, -1)
    return (found.st_dev, found.st_ino)


def filed(store: Path) -> list[dict[str, Any]]:
    """Every document entry of the Binder, in the order filed."""
    return [d for d in logfiles.read_log(store, layout.DECISIONS) if d.get("kind") == "file"]


def file_document(store: Path, path: Path, by: str, now_ms: int, note: str | None = None, *,
                  within: Path | None, via: str | None = None) -> dict[str, Any]:
    """Copy `path` into the store and enter it in the Binder; returns the entry. `within`: the folder the
    document must come from (the repository that holds the store), None for anywhere (but /proc, /sys,
    /dev). The document is a regular file, at most `limits.file_bytes`, and holds no credential (I8)."""
    check_printable(path.name, "PATH")
    data = _read(path, within, limits.limit(store, "file_bytes"))
    refuse_secrets(data.decode("utf-8"), "PATH", store=store)
    rel = stored_path(data, path.name)
    entry: dict[str, Any] = {"kind": "file", "path": rel, "sha256": hashlib.sha256(data).hexdigest(),
                             "name": path.name, "decided_at": now_ms, "by": by}
    binder.check_entry(store, entry, note, via)
    with locked(store, layout.DECISIONS + ".decide"):
        earlier = [d for d in filed(store) if d.get("sha256") == entry["sha256"]]
        if earlier:
            raise bad("PATH", repr(str(path)), "already filed as {filed} by {by} (a filed document is kept once)",
                      filed=earlier[0]["path"], by=earlier[0]["by"])
        files.refuse_symlinks(store, store / rel)  # kb/files linked outside the store: the copy would land there
        create_exclusive(store / rel, data)  # already there (filed, then its entry lost): the same bytes
        append_line(store, layout.DECISIONS, jsonio.dumps_line(entry))
    return entry
