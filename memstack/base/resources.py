"""Files shipped with memstack: schemas, the store template, server-side hooks.

In a wheel they sit in `memstack/_data/`; in a source checkout (editable
install, tests) they are the repository's top-level folders.
"""

from functools import cache
from pathlib import Path

_PACKAGE = Path(__file__).resolve().parent.parent  # memstack/, above base/


@cache
def data_dir(name: str) -> Path:
    for candidate in (_PACKAGE / "_data" / name, _PACKAGE.parent / name):
        if candidate.is_dir():
            return candidate
    raise FileNotFoundError(f"memstack is installed without its {name}/ folder")
