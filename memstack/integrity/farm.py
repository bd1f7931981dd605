"""I5 on the records of a large check, made by a second process while this one goes on (base/farm.py).

A check validates each line a change adds to a fact file or a ledger shard, or closes in a fact file (parse,
schema, the file it belongs in: rules/records.py), about 5 µs a line: a promotion of 200,000 records adds
300,000 such lines, a third of its commit's check. Once a check has validated START bytes of them itself,
the next ones go to a second process, and their violations come back to be reported with the rest at the
end of the step (`collect`): the machine's second core validates while this process reads blobs, compares
files, and screens for credentials. The answer is the same either way (`rules.records` is a function of a
file's lines; the lines of an intake file, whose check asks more of the repository, are validated here).
"""

from collections.abc import Callable, Iterable

from memstack.base import farm, layout
from memstack.base.layout import Place
from memstack.integrity import rules
from memstack.integrity.violations import Violation

START = 4 << 20  # bytes of lines a check validates itself before a second process is started
KINDS = (layout.FACTS, layout.PROMOTIONS)  # the lines handed over: those of fact files and ledger shards
JOB = "memstack.integrity.rules.records:records"


class Records(farm.Farm):
    """`rules.records`, done here or by a second process (`records`, then `collect` at a step's end)."""

    def __init__(self) -> None:
        super().__init__(JOB, START)

    def records(self, path: str, place: Place, numbered: Iterable[tuple[int, bytes]], old: bytes | None = None, *,
                ratified: Callable[[], bool] | None = None) -> list[Violation]:
        """`rules.records` of these lines: its violations, or [] when they are handed over (`collect` gives
        theirs)."""
        if place.kind not in KINDS:
            return rules.records(path, place, numbered, old or b"", ratified=ratified)
        lines = list(numbered)
        if self.hand((path, place, lines), sum(len(raw) for _, raw in lines)):
            return []
        return rules.records(path, place, lines)
