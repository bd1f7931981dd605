"""One module per verb; each exports `register(subparsers, common)`."""

import sys
from pathlib import Path

from memstack.errors import MemstackError


def read_text_input(file: str | None, what: str) -> str:
    """The text of FILE, or of stdin for '-' (or no FILE)."""
    if file in (None, "-"):
        return sys.stdin.read()
    try:
        return Path(file).read_text(encoding="utf-8")
    except FileNotFoundError:
        raise MemstackError(f"bad {what} {file!r}: no such file") from None
    except (IsADirectoryError, UnicodeDecodeError):
        raise MemstackError(f"bad {what} {file!r}: not a UTF-8 text file") from None
