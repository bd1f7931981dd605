"""The Binder's log against the state it lands in (I5): what a rule on one line cannot see.

Every line of kb/binder.jsonl is a person's word, so a line appended by hand must hold up as memstack's
own writes do:

- `by`: with `binder.people` in memstack.yaml, every new line names one of those people (where the step
  changes memstack.yaml, one listed before it too: a commit cannot add a name and use it);
- a `kind: file` line names a document the state holds, whose name carries the line's SHA-256;
- a decision on an intake record names a record the state holds (a bound id names its one file: its
  agent by the tag, its day by the time, one read; a legacy id is looked for in every intake file), and
  one promotion routed to the Binder (a line of the ledger shard of that record's intake file; in a commit
  of format 1, a line of its one ledger file, kb/promotions.jsonl, streamed: docs/migrate.md);
- every document a step adds to kb/files is entered by a `kind: file` line of the state's log;
- a new fact at tier "ratified" is one promotion made from a ratification (its `-r` id derived from an
  intake id the state's Binder log ratifies): tier "ratified" is a person's word, never a writer's (where
  a state may hold a record memstack 0.1.0 let its writer put at that tier, the fact 0.1.0 made of it too);
- no facts the Binder's log ratifies are closed in favour of each other (cycles.py: two people who
  ratified opposite sides of one disagreement in different clones);
- no side of a disagreement is both ratified and rejected (two people who decided it differently in
  different clones: the ratification closed the other sides, the rejection this one, nothing is open);
- a decision that `settles` a record settles a dispute: the record's decisions made at or before that
  time disagree (kb/binder.py), so a line written by hand cannot overrule a decision no one disputed.

Only the step's new lines are gathered (compactly: the fields these rules read), and each lookup reads
what it names, never the whole store (a legacy intake id aside).
"""

from collections.abc import Callable, Iterable
from dataclasses import dataclass

from memstack.base import ids, jsonio, layout, ledger
from memstack.base.errors import MemstackError
from memstack.base.times import day
from memstack.integrity import cycles, migration
from memstack.integrity.cycles import RATIFY
from memstack.integrity.report import Step
from memstack.integrity.rules.text import COMMITTED_ID, parse
from memstack.integrity.violations import Violation

FILE_FIX = "file documents with `memstack binder file PATH`: it copies the document and enters it in one step"
RATIFIED_FIX = ("add facts at another tier (`memstack fact add`, `capture`, `promote`); a person ratifies a record"
                " waiting in the Binder (`memstack binder ratify ID`) and the next promotion makes the fact")
DECIDE_FIX = "decide with `memstack binder ratify|reject ID` on a record waiting in the Binder (`memstack binder list`)"


@dataclass(frozen=True)
class Line:
    number: int
    by: object
    path: object = None  # a `kind: file` line's document
    sha256: object = None
    intake_id: object = None  # a decision on an intake record
    via: object = None  # "mcp": an agent's, made over the MCP server
    raw: bytes = b""  # the line as committed (a merge's other parent may hold it: signed.py)
    settles: object = None  # a decision settling a dispute: the latest decision it was made against
    fact_id: object = None  # a decision on a side of a disagreement between agents


class Entries:
    """One step's new Binder lines and new filed documents, checked at the end of the step."""

    def __init__(self, legacy: Callable[[], bool] = lambda: False) -> None:
        self.legacy = legacy  # whether the step's state may hold what memstack 0.1.0 wrote (migration.RatifiedIntake)
        self.lines: list[Line] = []
        self.documents: list[str] = []
        self.ratified: list[tuple[str, int, object, object]] = []  # new facts at tier ratified: path, line, ids
        self.closings = cycles.Closings()  # the facts the step's closings name: no ratified facts in a cycle

    def note_facts(self, path: str, numbered: Iterable[tuple[int, bytes]], new_from: int) -> None:
        """A fact file's new lines: those at tier "ratified" must come from a Binder ratification; closings
        must not close ratified facts in favour of each other."""
        numbered = list(numbered)
        self.closings.note(numbered)
        for number, raw in numbered:
            if number < new_from or b'"ratified"' not in raw:
                continue
            record, problem = parse(raw)
            if not problem and isinstance(record, dict) and record.get("tier") == "ratified":
                self.ratified.append((path, number, record.get("id"), record.get("intake_id")))

    def note(self, numbered: Iterable[tuple[int, bytes]]) -> None:
        for number, raw in numbered:
            record, problem = parse(raw)
            if problem or not isinstance(record, dict):
                continue  # `records` reports it
            via, line = record.get("via"), raw.rstrip(b"\n")
            if record.get("kind") == "file":
                self.lines.append(Line(number, record.get("by"), record.get("path"), record.get("sha256"), via=via,
                                       raw=line))
            else:
                self.lines.append(Line(number, record.get("by"), intake_id=record.get("intake_id"), via=via, raw=line,
                                       settles=record.get("settles"), fact_id=record.get("fact_id")))

    def ratifications(self, step: Step) -> list[Violation]:
        """Each new fact at tier "ratified" is one promotion made from a person's ratification: its id is
        its intake id's with `-r` (ids.made_from), and the state's Binder log ratifies that intake id. Where the
        state may hold what memstack 0.1.0 wrote (`legacy`), also one that 0.1.0's promotion made of a record its
        writer put at tier ratified (migration.MadeBy010)."""
        if not self.ratified:
            return []
        ratified = ratified_ids(step.source.read(layout.DECISIONS) or b"")
        made_by_010 = migration.MadeBy010(step.source)  # where 0.1.0's records may be, the facts it made of them
        found = []
        for path, number, fact_id, intake_id in self.ratified:
            made = isinstance(fact_id, str) and isinstance(intake_id, str) and fact_id.endswith("-r") \
                and ids.made_from(fact_id, intake_id)
            if (made and intake_id in ratified) or (self.legacy() and made_by_010(path, fact_id, intake_id)):
                continue
            found.append(Violation(path, number, "I5", "fact at tier 'ratified' that no Binder ratification"
                                                       " made (only promotion makes one, from a person's"
                                                       " `memstack binder ratify`)", RATIFIED_FIX))
        return found

    def sides(self, step: Step) -> list[Violation]:
        """No side of a disagreement that a new decision names is both ratified and rejected in the state's log."""
        named = {line.fact_id: line for line in self.lines if isinstance(line.fact_id, str)}
        if not named:
            return []
        said: dict[str, dict[str, dict]] = {}
        for raw in (step.source.read(layout.DECISIONS) or b"").splitlines():
            if b'"fact_id"' in raw:
                d, problem = parse(raw)
                if not problem and isinstance(d, dict) and d.get("fact_id") in named:
                    said.setdefault(d["fact_id"], {}).setdefault(str(d.get("decision")), d)
        found = []
        for fid in sorted(named):
            both = said.get(fid, {})
            if {"ratify", "reject"} <= both.keys():
                first = min(both.values(), key=lambda d: str(d.get("decided_at")).rjust(20))
                found.append(Violation(
                    layout.DECISIONS, named[fid].number, "I5",
                    f"fact {fid} is ratified by {both['ratify'].get('by')} and rejected by {both['reject'].get('by')}:"
                    " the ratification closed the other sides and the rejection this one, so none is open",
                    "people decided one side differently in different clones; " + cycles.UNDO.format(
                        first=f"{first.get('by')}'s {first.get('decision')}")))
        return found

    def settlements(self, step: Step) -> list[Violation]:
        """Each new decision with `settles` answers a dispute: the record's other decisions made at or
        before that time disagree (what `memstack binder ratify|reject` writes when they do)."""
        settling = [line for line in self.lines if type(line.settles) is int and isinstance(line.intake_id, str)]
        if not settling:
            return []
        from memstack.kb import binder  # only here: a settlement is rare, and kb/binder.py imports the fact store

        log = step.source.read(layout.DECISIONS) or b""
        found = []
        for line in settling:
            assert isinstance(line.intake_id, str) and type(line.settles) is int
            key = line.intake_id.encode()
            earlier = [d for raw in log.splitlines() if key in raw and raw != line.raw
                       for d, problem in [parse(raw)] if not problem and isinstance(d, dict)
                       and d.get("intake_id") == line.intake_id and type(d.get("decided_at")) is int
                       and d["decided_at"] <= line.settles]
            if len(earlier) < 2 or binder.verdict(earlier) is not None:
                found.append(Violation(layout.DECISIONS, line.number, "I5",
                                       f"decision on intake record {line.intake_id} settles a dispute (settles"
                                       f" {line.settles}), but no one decided it differently by then",
                                       "a record is decided once; `settles` is written by `memstack binder"
                                       " ratify|reject ID` on a record people decided differently (`memstack"
                                       " binder list` shows it): remove the line"))
        return found

    def document(self, path: str) -> None:
        self.documents.append(path)

    def check(self, step: Step, people: Callable[[], tuple[frozenset[str] | None, str]]) -> list[Violation]:
        if step.prefix and any(layout.classify(path).kind == layout.FACTS for path in step.inherited):
            self.closings.every = True  # a merge took fact files from each side: their closings may meet in a cycle
        if not self.lines and not self.documents and not self.ratified and not self.closings:
            return []
        found: list[Violation] = self.ratifications(step) + (self.closings.violations(step) if self.closings else [])
        allowed, which = people() if self.lines else (None, "")
        filed = set(step.source.listdir("kb/files")) if any(line.path for line in self.lines) else set()
        for line in self.lines:
            if allowed is not None and line.by not in allowed:
                found.append(Violation(layout.DECISIONS, line.number, "I5",
                                       f"by {line.by!r} is not one of the people {which} lists under binder.people",
                                       "only they decide, file and confirm in the Binder: the person named decides"
                                       " (`memstack binder ratify|reject|file|edge`), or list them in memstack.yaml"
                                       " in a commit of its own"))
            if isinstance(line.path, str):
                name = line.path.rsplit("/", 1)[-1]
                if name not in filed:
                    found.append(Violation(layout.DECISIONS, line.number, "I5",
                                           f"filed document {line.path} is not in kb/files", FILE_FIX))
                elif not name.startswith(f"{line.sha256}"):
                    found.append(Violation(layout.DECISIONS, line.number, "I5",
                                           f"sha256 {line.sha256} is not the one {line.path} is named by", FILE_FIX))
        wanted = {line.intake_id for line in self.lines if isinstance(line.intake_id, str)}
        held = intake_held(step, sorted(wanted))
        one_file = bool(wanted & held) and migration.older_format(step)  # format 1: one ledger file
        routed = routed_in_one_file(step, wanted & held) if one_file else routed_to_binder(step, wanted & held)
        routed_in = layout.V1_LEDGER if one_file else f"its ledger shard in {layout.LEDGER_DIR}/"
        for line in self.lines:
            if not isinstance(line.intake_id, str):
                continue
            if line.intake_id not in held:
                found.append(Violation(layout.DECISIONS, line.number, "I5",
                                       f"decision on intake record {line.intake_id}, which the store does not hold",
                                       DECIDE_FIX))
            elif line.intake_id not in routed:
                found.append(Violation(layout.DECISIONS, line.number, "I5",
                                       f"decision on intake record {line.intake_id}, which promotion never routed to"
                                       f" the Binder (no line of {routed_in} puts it there)",
                                       DECIDE_FIX))
        found += self.settlements(step) + self.sides(step)
        entered = {line.path for line in self.lines if isinstance(line.path, str)}
        unentered = [path for path in self.documents if path not in entered]
        if unentered:
            log = step.source.read(layout.DECISIONS) or b""
            for path in unentered:
                if f'"path":"{path}"'.encode() not in log:
                    found.append(Violation(path, 0, "I5", "filed document that no `kind: file` line of"
                                                          " kb/binder.jsonl enters", FILE_FIX))
        return found


INTAKE_ID = b'"intake_id":"'


def routed_to_binder(step: Step, wanted: set[str]) -> set[str]:
    """Which of the intake ids `wanted` the state's promotion ledger routes to the Binder: for each, the
    shard of the intake file its id is bound to (base/ledger.py), only when the step adds decisions (a state
    of format 1: `routed_in_one_file`)."""
    found: set[str] = set()
    for intake_id in sorted(wanted):
        try:
            if any(line.get("sub_tier") == "binder" for line in ledger.record_lines(step.source, intake_id)):
                found.add(intake_id)
        except MemstackError:  # a torn or unreadable shard: I1/I5/I7 report it
            pass
    return found


def routed_in_one_file(step: Step, wanted: set[str]) -> set[str]:
    """`routed_to_binder` in a state of format 1: its ledger is one file, kb/promotions.jsonl, streamed a
    megabyte at a time (never held whole); only the lines naming a wanted id are parsed."""
    found: set[str] = set()
    keys = [(intake_id, intake_id.encode()) for intake_id in sorted(wanted)]
    try:
        runs = jsonio.line_runs(step.source.stream(layout.V1_LEDGER))
    except MemstackError:  # a torn last line (the work tree's): I1/I7 report it
        return found
    for _, run in runs:
        named = [key for intake_id, key in keys if key in run and intake_id not in found]
        for raw in run.splitlines() if named else ():
            if not any(key in raw for key in named):
                continue
            line, problem = parse(raw)
            if not problem and isinstance(line, dict) and line.get("intake_id") in wanted \
                    and line.get("sub_tier") == "binder":
                found.add(line["intake_id"])
    return found


def ratified_ids(log: bytes) -> set[str]:
    """The intake ids the Binder's log ratifies (byte searches for the decisions' lines, none parsed)."""
    found: set[str] = set()
    at = log.find(RATIFY)
    while at >= 0:
        start, end = log.rfind(b"\n", 0, at) + 1, log.find(b"\n", at)
        end = len(log) if end < 0 else end
        key = log.find(INTAKE_ID, start, end)
        if key >= 0:
            value = key + len(INTAKE_ID)
            found.add(log[value:log.find(b'"', value, end)].decode("utf-8", "replace"))
        at = log.find(RATIFY, end)
    return found


def intake_held(step: Step, wanted: list[str]) -> set[str]:
    """Which of the intake ids `wanted` the state holds, each file read once: a bound id in its one file
    (the agent whose tag it carries, the day of its time), a legacy one in any intake file."""
    if not wanted:
        return set()
    agents = step.source.listdir("intake")
    by_file: dict[str, set[str]] = {}
    legacy = set()
    for intake_id in wanted:
        match = ids.ID.match(intake_id)
        if match is None:
            legacy.add(intake_id)
            continue
        name = f"{day(int(match.group(1), 16))}.jsonl"
        for agent in agents:
            if ids.agent_tag(agent) == match.group(3):
                by_file.setdefault(f"intake/{agent}/{name}", set()).add(intake_id)
    if legacy:
        for agent in agents:
            for name in step.source.listdir(f"intake/{agent}"):
                by_file.setdefault(f"intake/{agent}/{name}", set()).update(legacy)
    held: set[str] = set()
    for path, names in sorted(by_file.items()):
        data = step.source.read(path)
        if data:
            held |= names & {found.decode() for found in COMMITTED_ID.findall(data)}
    return held
