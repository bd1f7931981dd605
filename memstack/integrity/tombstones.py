"""The tombstones a change appends (`kb/forgotten/<agent>/YYYY-MM.jsonl`), checked at the end of its step
against the new state: each names a record that exists in it, of the kind it says, and repeats none of that
record's content (a tombstone stands in for the content; it must not carry it). That the log is never edited
or removed is I1 (rules/logs.py); who and why are required by schemas/tombstone.schema.json (I5)."""

from collections.abc import Iterable

import orjson

from memstack.base.forgotten import find
from memstack.base.reasons import repeats
from memstack.integrity.violations import Violation

FIX = ("name a record of this state (an intake or fact id, a SOIL record's collection/key, a handoff's path) and"
       " say why without its content: write tombstones with `memstack forget ID --reason TEXT`")


class Appended:
    """The tombstone lines of one step, by file and line number."""

    def __init__(self) -> None:
        self.lines: list[tuple[str, int, bytes]] = []

    def note(self, path: str, numbered: Iterable[tuple[int, bytes]]) -> None:
        self.lines += [(path, number, raw) for number, raw in numbered]

    def check(self, files: object) -> list[Violation]:
        found = []
        for path, number, raw in self.lines:
            try:
                tombstone = orjson.loads(raw)
            except orjson.JSONDecodeError:
                continue  # I5 names it (rules/records.py)
            if not isinstance(tombstone, dict) or not isinstance(tombstone.get("forgets"), str):
                continue
            record_id = tombstone["forgets"]
            where = find(files, record_id)  # type: ignore[arg-type]
            if where is None:
                found.append(Violation(path, number, "I5", f"the tombstone forgets {record_id!r}, which no record"
                                                           " of this state has", FIX))
                continue
            if where[0] != tombstone.get("kind"):
                found.append(Violation(path, number, "I5", f"the tombstone says {record_id!r} is a"
                                       f" {tombstone.get('kind')} record; it is a {where[0]} record", FIX))
            if repeats(files, *where, record_id, str(tombstone.get("reason", ""))):  # type: ignore[arg-type]
                found.append(Violation(path, number, "I5", "the tombstone's reason repeats the forgotten record's"
                                                           " content", FIX))
        return found
