"""The pending records of a promotion vetted as the intake is read: each a valid intake record, and none holding
a credential that reached memory past the checks (docs/forgetting.md); a large promotion's by a second process.

Validation against schemas/intake.schema.json and the credential screen cost ~10 µs a record: 2 s of a
promotion of 200,000. They are functions of the records' lines alone (`vetted`, a file's pending lines at a
time), so once START bytes of lines were vetted here, the next files' go to a second process (base/farm.py)
while this one goes on reading, and the answers are gathered before anything is routed (`Vetting.finish`): a
promotion stops at its first invalid record, in the order the files and their lines were read, either way.
"""

from dataclasses import dataclass, field
from typing import Any

from memstack.base import jsonio, schemas, secrets
from memstack.base.errors import MemstackError
from memstack.base.farm import Farm

START = 4 << 20  # bytes of pending lines vetted here before a second process is started
IN_FLIGHT = 1 << 20  # bytes of lines handed over and unanswered, at most: past it this process vets the next file
JOB = "memstack.workflows.promote.vetting:vetted"
INVALID, HELD = "invalid", "held"


def vetted(relpath: str, file_number: int, lines: list[tuple[int, bytes]],
           policy: secrets.Policy) -> list[tuple[str, int, int, str, str]]:
    """What is wrong with the pending lines of one intake file (its number among the files read): (INVALID,
    file number, line, the schema's first problem, "") for a line that is not a valid intake record, (HELD, file
    number, line, kind, field) for a record holding a credential (its first finding)."""
    found: list[tuple[str, int, int, str, str]] = []
    valid: list[tuple[int, dict[str, Any]]] = []
    for number, raw in lines:
        record = jsonio.loads(raw, f"{relpath}:{number}")
        problems = schemas.errors("intake", record)
        if problems:
            found.append((INVALID, file_number, number, f"invalid intake record: {problems[0]}", ""))
        else:
            valid.append((number, record))
    suspect = secrets.suspects([record for _, record in valid], policy)  # one search for the file
    for index in sorted(suspect):
        number, record = valid[index]
        credentials = secrets.scan(record, "", policy)
        if credentials:
            found.append((HELD, file_number, number, credentials[0].kind, credentials[0].field or "the record"))
    return found


def invalid(relpath: str, number: int, problem: str) -> MemstackError:
    return MemstackError(f"{relpath}:{number}: I5 {problem} — fix the record (`git checkout -- {relpath}` if it"
                         " was committed fine), then promote again")


@dataclass
class Vetting:
    """The pending lines of each intake file vetted (`file`), here or by a second process; `finish` raises for
    the first invalid record read and gives the records holding a credential, by file number and line."""

    policy: secrets.Policy
    farm: Farm = field(default_factory=lambda: Farm(JOB, START, IN_FLIGHT))
    found: list[tuple[str, int, int, str, str]] = field(default_factory=list)

    def file(self, relpath: str, file_number: int, data: bytes, numbers: list[int]) -> None:
        if not numbers:
            return
        split = data.split(b"\n")
        lines = [(number, split[number - 1]) for number in numbers]
        item = (relpath, file_number, lines, self.policy)
        if not self.farm.hand(item, sum(len(raw) for _, raw in lines)):
            self.found += vetted(*item)

    def refused(self, file_number: int, number: int, problem: str) -> None:
        """A record found wrong while it was read (no time to order it by), reported as `finish` says."""
        self.found.append((INVALID, file_number, number, problem, ""))

    def close(self) -> None:
        """Every answer of the second process taken in (`finish` gives them), and the process ended."""
        self.found += self.farm.collect()
        self.farm.close()

    def finish(self, files: list[str]) -> dict[tuple[int, int], tuple[str, str]]:
        """Once `close`d (every answer in): raise for the first invalid record in reading order; else the records
        holding a credential, (file number, line) -> (kind, field)."""
        bad = min(((f, n, problem) for kind, f, n, problem, _ in self.found if kind == INVALID), default=None)
        if bad is not None:
            raise invalid(files[bad[0]], bad[1], bad[2])
        return {(f, n): (what, where) for kind, f, n, what, where in self.found if kind == HELD}
