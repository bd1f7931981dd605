"""Documents a human files in the Binder (Willow's `mem_binder_file`): confirmed knowledge, kept in the store.

`file_document` copies the document to `kb/files/<sha256>[.ext]` (named by its
content, so a copy never changes and two filings of one text are one file) and
appends a `kind: file` entry to `kb/binder.jsonl` naming who filed it and when.
Both are append-only: a filed document is never edited or deleted (the checks
refuse it, I1); a new version is filed as a new document.
"""

import hashlib
import re
from pathlib import Path
from typing import Any

from memstack.base import files, jsonio, layout
from memstack.base.errors import bad
from memstack.base.files import append_line, create_exclusive, locked
from memstack.base.secrets import refuse_secrets
from memstack.kb import binder

FOLDER = "kb/files"
_EXTENSION = re.compile(r"\.([a-z0-9]{1,16})$")
MAX_BYTES = 10 * 2**20  # a document an agent can read, not an archive


def stored_path(data: bytes, name: str) -> str:
    """Where a document is kept: its SHA-256, and its name's extension when it has a plain one."""
    ext = _EXTENSION.search(name.lower())
    return f"{FOLDER}/{hashlib.sha256(data).hexdigest()}" + (f".{ext.group(1)}" if ext else "")


def _read(path: Path) -> bytes:
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        raise bad("PATH", repr(str(path)), "no such file") from None
    except IsADirectoryError:
        raise bad("PATH", repr(str(path)), "is a folder, not a file") from None
    if not data.strip():
        raise bad("PATH", repr(str(path)), "empty, nothing to file")
    if len(data) > MAX_BYTES:
        raise bad("PATH", repr(str(path)), "{size:,} bytes, more than the {most:,} a filed document may hold",
                  size=len(data), most=MAX_BYTES)
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        raise bad("PATH", repr(str(path)), "not UTF-8 text (the Binder keeps documents an agent can read:"
                  " Markdown, text)") from None
    return data


def filed(store: Path) -> list[dict[str, Any]]:
    """Every document entry of the Binder, in the order filed."""
    return [d for d in files.read_log(store, layout.DECISIONS) if d.get("kind") == "file"]


def file_document(store: Path, path: Path, by: str, now_ms: int, note: str | None = None) -> dict[str, Any]:
    """Copy `path` into the store and enter it in the Binder; returns the entry."""
    data = _read(path)
    refuse_secrets(data.decode("utf-8"), "PATH", store=store)
    rel = stored_path(data, path.name)
    entry: dict[str, Any] = {"kind": "file", "path": rel, "sha256": hashlib.sha256(data).hexdigest(),
                             "name": path.name, "decided_at": now_ms, "by": by}
    binder.check_entry(store, entry, note)
    with locked(store, layout.DECISIONS + ".decide"):
        earlier = [d for d in filed(store) if d.get("sha256") == entry["sha256"]]
        if earlier:
            raise bad("PATH", repr(str(path)), "already filed as {filed} by {by} (a filed document is kept once)",
                      filed=earlier[0]["path"], by=earlier[0]["by"])
        files.refuse_symlinks(store, store / rel)  # kb/files linked outside the store: the copy would land there
        create_exclusive(store / rel, data)  # already there (filed, then its entry lost): the same bytes
        append_line(store, layout.DECISIONS, jsonio.dumps_line(entry))
    return entry
