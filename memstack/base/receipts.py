"""Erasure receipts: the lines `memstack excise` appends to `kb/erasures.jsonl` (docs/forgetting.md), one per
excise: its id, who, when, the records excised, and for each rewritten branch its head before (`old`) and
after (`new`) the rewrite. Read by the server's checks, `memstack sync` and the replica."""

from dataclasses import dataclass

import orjson

from memstack.base.times import iso


@dataclass(frozen=True)
class Receipt:
    id: str
    by: str
    excised_at: int
    records: tuple[str, ...]
    heads: dict[str, tuple[str, str]]  # ref -> (old head, rewritten head)
    line: int  # its line in kb/erasures.jsonl

    def named(self) -> str:
        """How a message names it: `erasure receipt ID (by NAME, TIME)`."""
        when = iso(self.excised_at) if isinstance(self.excised_at, int) else "?"
        return f"erasure receipt {self.id} (by {self.by}, {when})"


def parse(data: bytes) -> list[Receipt]:
    """The receipts of a `kb/erasures.jsonl`; a line that is not a receipt is passed over (the checks name it)."""
    found = []
    for number, line in enumerate(data.splitlines(), 1):
        try:
            record = orjson.loads(line)
            heads = {ref: (str(pair["old"]), str(pair["new"])) for ref, pair in record["heads"].items()}
            found.append(Receipt(str(record["id"]), str(record.get("by", "?")), record.get("excised_at", 0),
                                 tuple(str(r) for r in record.get("records", ())), heads, number))
        except (orjson.JSONDecodeError, KeyError, TypeError, AttributeError):
            continue
    return found
