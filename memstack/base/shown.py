"""What a read shows of a record (docs/forgetting.md): a forgotten record without its content
(forgotten.py), and a credential that reached memory past the checks as `[redacted: kind]` (secrets/),
unless a person at a terminal asked for it with `--reveal` (the command line sets `REVEAL`; the MCP
server never does). Every read verb asks `Shown.in_store(root).record(...)` for what it prints."""

from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from memstack.base import secrets
from memstack.base.forgotten import Forgotten

REVEAL = False  # set by the command line's --reveal (a person at a terminal), never by the MCP server


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
        masked = self.forgotten.mask(record, record_id)
        return masked if REVEAL else secrets.redact(masked, self.policy)

    def records(self, records: Iterable[Any]) -> Iterator[Any]:
        return (self.record(r) for r in records)
