"""An invariant violation, reported as `path:line: I<n> what is wrong — how to fix it`."""

from dataclasses import asdict, dataclass
from typing import Any


@dataclass(frozen=True, order=True)
class Violation:
    path: str
    line: int  # 0 when the violation is about the whole file
    rule: str  # "I1" .. "I7"
    what: str
    fix: str

    def __str__(self) -> str:
        where = f"{self.path}:{self.line}" if self.line else self.path
        return f"{where}: {self.rule} {self.what} — {self.fix}"

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)
