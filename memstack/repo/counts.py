"""How many entries a derived shard holds (a JSON array, one entry a line), remembered between runs: a
reader that only counts the shards it does not show (`binder list`'s later days, the boot files' older
months of knowledge) reads only those written since it last counted."""

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson

from memstack.base import files
from memstack.base.errors import MemstackError
from memstack.repo.sources import Source

Counter = Callable[[str, Source], int]  # the entries of a shard (its path, read through the source)


def count_entries(path: str, source: Source) -> int:
    """How many entries a shard holds: its lines less the array's two (one entry a line)."""
    return source.entries(path)


class BlobCounts(dict[str, int]):
    """The entries of the shards a check counted in git (`GitSource.counts`), by blob id, kept in
    `.memstack/blob-counts.json` (never committed) where the check runs in a clone: a blob's count never
    changes, so the next check of a commit that changes a few shards reads only those. A server's
    repository (no store's work tree) keeps them for that one check. `save` keeps the ids used this run."""

    def __init__(self, store: Path) -> None:
        super().__init__()
        self.path: Path | None = None
        self.kept: dict[str, Any] = {}
        if not (store / "memstack.yaml").is_file():
            return
        try:
            self.path = files.local_dir(store, "") / "blob-counts.json"
            kept = orjson.loads(self.path.read_bytes())
            self.kept = kept if isinstance(kept, dict) else {}
        except (OSError, orjson.JSONDecodeError, MemstackError):  # a cache: missing or broken is counted again
            pass

    def get(self, key: str, default: Any = None) -> Any:
        found = super().get(key)
        if found is None and isinstance(self.kept.get(key), int):
            found = self[key] = self.kept[key]
        return default if found is None else found

    def save(self) -> None:
        if self.path is not None and dict(self) != self.kept:
            try:
                files.write_atomic(self.path, orjson.dumps(dict(self)), sync=False)
            except (OSError, MemstackError):  # not kept: counted again next time
                pass


class CachedCounts:
    """`count_entries`, remembered in `.memstack/queue-counts.json` (never committed) under the stat of
    each shard's folder (inode, mtime: a shard is replaced by a rename, which moves its folder's mtime):
    a later count reads only the shards of the folders that changed since (a promotion: one agent's)."""

    def __init__(self, store: Path) -> None:
        self.path = files.local_dir(store, "") / "queue-counts.json"
        self.root = str(store)  # joined as strings: pathlib's parsing would cost more than the stats
        try:
            kept = orjson.loads(self.path.read_bytes())
        except (FileNotFoundError, orjson.JSONDecodeError):
            kept = {}
        self.kept: dict[str, Any] = kept if isinstance(kept, dict) else {}
        self.seen: dict[str, list[Any]] = {}  # folder -> [inode, mtime, {name: count}]

    def __call__(self, path: str, source: Source) -> int:
        folder, name = path.rsplit("/", 1)
        if folder not in self.seen:
            st = os.stat(os.path.join(self.root, folder))
            kept = self.kept.get(folder)
            known = kept[2] if isinstance(kept, list) and len(kept) == 3 and isinstance(kept[2], dict) \
                and kept[:2] == [st.st_ino, st.st_mtime_ns] else {}
            self.seen[folder] = [st.st_ino, st.st_mtime_ns, dict(known)]
        counts = self.seen[folder][2]
        if name not in counts:
            counts[name] = count_entries(path, source)
        return int(counts[name])

    def save(self) -> None:
        merged = {**self.kept, **self.seen}
        if merged != self.kept:
            files.write_atomic(self.path, orjson.dumps(merged), sync=False)
