"""What a read shows of a record (docs/forgetting.md): a forgotten record without its content
(forgotten.py), and a credential that reached memory past the checks as `[redacted: kind]` (secrets/),
unless a person at a terminal asked for it with `--reveal` (the command line sets `REVEAL`; the MCP
server never does). Every read verb asks `Shown.in_store(root).record(...)` for what it prints."""

from collections.abc import Callable, Iterable, Iterator
from itertools import islice
from pathlib import Path
from typing import Any

import orjson

from memstack.base import secrets
from memstack.base.forgotten import Forgotten

REVEAL = False  # set by the command line's --reveal (a person at a terminal), never by the MCP server
CHUNK = 128  # records screened at a time by `Shown.records` (a few hundred KiB: reads run in 64 MiB too)


class Shown:
    """The store's tombstones and its I8 policy, applied to what a read hands out."""

    def __init__(self, forgotten: Forgotten, policy: secrets.Policy = secrets.DEFAULT) -> None:
        self.forgotten, self.policy = forgotten, policy

    @classmethod
    def in_store(cls, root: Path) -> "Shown":
        return cls(Forgotten.in_store(root), secrets.for_store(root))

    def __contains__(self, record_id: object) -> bool:
        return record_id in self.forgotten

    def __bool__(self) -> bool:
        return True

    def record(self, record: Any, record_id: str | None = None) -> Any:
        """`record` as a read shows it (`record_id`: what names it, when not its `id`: a SOIL record's
        collection/key, a handoff's path)."""
        return self.redacted(self.forgotten.mask(record, record_id))

    def redacted(self, value: Any) -> Any:
        """`value` (what a read hands out around records: a page of them, commit messages, code lines) with
        each credential `[redacted: kind]`, unless revealed; one call screens a long list at once."""
        return value if REVEAL else secrets.redact(value, self.policy)

    def redacted_where(self, items: list[Any], texts: Callable[[Any], list[Any]]) -> list[Any]:
        """`items` as `redacted` shows them, for a long list whose items are mostly ids, places and times
        (`memstack anchors`' 10,000 records): only the items whose `texts` (the parts that can hold a
        credential) the byte prefilter hits are walked."""
        if REVEAL or not items:
            return items
        hit = secrets.flagged([orjson.dumps(texts(item)) for item in items],
                              secrets.Policy(frozenset(), self.policy.extra))  # as redact: every detector
        return [self.redacted(item) if n in hit else item for n, item in enumerate(items)]

    def hides(self, record_id: object) -> str | None:
        """The reason a record was forgotten (its content and what it knew are not shown), or None."""
        return self.forgotten.reason(record_id) if isinstance(record_id, str) else None

    def records(self, records: Iterable[Any]) -> Iterator[Any]:
        """Each of `records` as `record` shows it, a chunk at a time: a chunk is screened as one list (the
        byte prefilter over each record's JSON; only the records it hits are walked), so a listing of every
        waiting record costs a prefilter pass, not a walk of each string of each record."""
        it = iter(records)
        while chunk := [self.forgotten.mask(r) for r in islice(it, CHUNK)]:
            yield from self.redacted(chunk)
