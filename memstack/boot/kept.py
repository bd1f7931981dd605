"""A boot build's cache file in `.memstack/boot/` (per clone, never committed; none in a bare repository).

What it holds is keyed by content (blob ids), so it is never wrong, only missing: a file that is not
there, not readable or not JSON reads as empty. It is saved with only what the build used, and not at
all when that is what it already held or the store cannot be written to (the next build reads again).
"""

from pathlib import Path
from typing import Any

import orjson

from memstack.base import files
from memstack.base.errors import MemstackError
from memstack.repo.sources import Source


class KeptFile:
    """`.memstack/boot/<name>` of the source's clone: `held`, what it holds (a mapping)."""

    def __init__(self, source: Source, name: str) -> None:
        folder = source.cache_dir()
        self.path: Path | None = None
        held: Any = {}
        try:
            self.path = None if folder is None else files.local_dir(folder, "boot") / name
            held = {} if self.path is None else orjson.loads(self.path.read_bytes())
        except (OSError, MemstackError, orjson.JSONDecodeError):  # none yet, or a store we may not write to
            held = {}
        self.held: dict[str, Any] = held if isinstance(held, dict) else {}

    def save(self, used: dict[str, Any], held: dict[str, Any]) -> None:
        """Keep `used` in place of `held` (what was read, as the caller holds it) when they differ."""
        if self.path is not None and used != held:
            try:
                files.write_atomic(self.path, orjson.dumps(used), sync=False)
            except (OSError, MemstackError):  # a store we may not write to: the next build reads again
                self.path = None
