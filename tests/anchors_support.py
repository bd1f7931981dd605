"""Memory about a code repository (tests/anchors/conftest.py's `code`): capture a fact anchored to its lines,
edit the code."""

import json
from pathlib import Path

from helpers import memstack


def capture(code: Path, subject: str, obj: str, *anchors: str, store: Path | None = None) -> str:
    """`memstack capture` of `subject decided obj` with code anchors; returns the fact's id."""
    where = ["--store", str(store)] if store is not None else []
    result = memstack("capture", *where, "--subject", subject, "--predicate", "decided", "--object", obj, "--json",
                      *(arg for anchor in anchors for arg in ("--anchor", anchor)), cwd=code)
    assert result.returncode == 0, result.stderr
    return str(json.loads(result.stdout)[0]["id"])


def edit(code: Path, path: str, old: str, new: str) -> None:
    """Replace `old` (which must be there) by `new` in the code file `path`."""
    text = (code / path).read_text()
    assert old in text
    (code / path).write_text(text.replace(old, new))
