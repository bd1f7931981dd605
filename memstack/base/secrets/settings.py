"""A store's `secrets:` block in memstack.yaml, read into a `Policy`."""

import re
from functools import cache
from pathlib import Path
from typing import Any

from memstack.base import config
from memstack.base.errors import MemstackError
from memstack.base.secrets.detect import DEFAULT, KIND, PLUGINS, Policy


def policy(document: Any) -> Policy:
    """The `secrets:` block of a parsed memstack.yaml that passed its schema; a MemstackError naming
    the field for an unknown detector or an extra pattern that does not compile."""
    section = document.get("secrets") if isinstance(document, dict) else None
    if not section:
        return DEFAULT
    dropped: set[str] = set()
    for index, name in enumerate(section.get("disable") or []):
        if name not in KIND:
            raise MemstackError(f"secrets.disable[{index}]: unknown detector {name!r} (known: {', '.join(PLUGINS)})")
        dropped.add(KIND[name])
    extra: list[tuple[str, re.Pattern[str]]] = []
    for index, item in enumerate(section.get("extra_patterns") or []):
        try:
            extra.append((str(item["name"]), re.compile(str(item["pattern"]))))
        except re.error as exc:
            raise MemstackError(f"secrets.extra_patterns[{index}].pattern: not a valid regular expression ({exc})") \
                from None
    return Policy(frozenset(dropped), tuple(extra))


def for_store(store: Path) -> Policy:
    """The `secrets:` block of the store's memstack.yaml (read once a process while the file is unchanged)."""
    path = store / "memstack.yaml"
    try:
        stat = path.stat()
    except FileNotFoundError:
        return DEFAULT
    return _loaded(path, stat.st_mtime_ns, stat.st_size)


@cache
def _loaded(path: Path, mtime_ns: int, size: int) -> Policy:

    try:
        return policy(config.read(path.parent).document)
    except MemstackError as exc:
        if exc.message.startswith(str(path)):
            raise
        raise MemstackError(f"{path}: invalid memstack.yaml: {exc.message}") from None
