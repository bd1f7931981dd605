"""A store's move from format 1 to format 2 (`memstack migrate`), as the checks see one commit of it.

Format 1 keeps the promotion ledger in one file, `kb/promotions.jsonl`; format 2 in one file per intake
file (`layout.ledger_shard`). A commit that deletes the old ledger, or changes memstack.yaml's `format`,
is accepted only as the whole migration, verified rather than trusted:

- memstack.yaml goes from format 1 (or no `format:`) to 2 and nothing else in it changes but `memstack.version`
  (the release that made the store: its CI installs it);
- every line of the old ledger is in the shard of its record's intake file, exactly once, unchanged, in
  its old order, and the shards hold nothing else (a shard's bytes are hashed as the old ledger is
  streamed: neither is held whole);
- nothing else changes but the derived files (views and boot files: I4 checks they equal a rebuild).

`Routing` says which shard a ledger line belongs in; `memstack migrate` writes the shards with it too.
"""

import hashlib
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from memstack.base import config, forgotten, ids, jsonio, layout
from memstack.base.errors import MemstackError
from memstack.base.resources import data_dir
from memstack.base.times import day, parse_ts
from memstack.integrity.blobs import Blobs
from memstack.integrity.report import Step
from memstack.integrity.rules.attributes import memstack_lines
from memstack.integrity.violations import Violation
from memstack.repo import git
from memstack.repo.diffs import Change
from memstack.repo.sources import Source

MIGRATE = "`memstack migrate` moves the ledger and sets the format in one commit it verifies; restore the" \
          " file ({restore}) and run it"
# A commit an older memstack made in a clone that had the migration: a fix on top leaves it in every push, and
# the commit may carry work of format 1 (a promotion replayed by a rebase), which only a migration can move.
OLDER = "undo the commit where it was made, rather than fix it on top: there, with this memstack, `git reset --keep`" \
        " to your last commit before the migration came in (in `git reflog`, the one before the pull, merge or" \
        " rebase that brought it), then `memstack migrate` and `memstack sync` (docs/migrate.md)"


class Routing:
    """Which ledger shard a format-1 ledger line goes to: its `file`; a line without one (written before
    lines named it), the intake file its record's bound id names (agent tag and day); a record of an id
    bound to no file, the intake file of the line's agent holding it (looked up once per agent, keeping
    only such ids)."""

    def __init__(self, source: Source) -> None:
        self.source = source
        self.unbound: dict[str, dict[str, str]] = {}

    def shard(self, line: bytes, number: int) -> str:
        entry = jsonio.loads(line, f"{layout.V1_LEDGER}:{number}")
        intake = self.intake_file(entry) if isinstance(entry, dict) else None
        if intake is None:
            raise MemstackError(f"{layout.V1_LEDGER}:{number}: no intake file holds the record this ledger line"
                                f" routed ({entry.get('intake_id') if isinstance(entry, dict) else entry!r})")
        return layout.ledger_shard(intake)

    def intake_file(self, entry: dict[str, Any]) -> str | None:
        named, ident, agent = entry.get("file"), entry.get("intake_id"), entry.get("agent")
        if isinstance(named, str) and layout.classify(named).kind == layout.INTAKE:
            return named
        if not (isinstance(ident, str) and isinstance(agent, str)) or not layout.classify(
                f"intake/{agent}/2000-01-01.jsonl").agent:
            return None
        match = ids.ID.match(ident)
        if match and match.group(3) == ids.agent_tag(agent):
            return f"intake/{agent}/{day(int(match.group(1), 16))}.jsonl"
        if agent not in self.unbound:
            self.unbound[agent] = dict(self._unbound_ids(agent))
        return self.unbound[agent].get(ident)

    def _unbound_ids(self, agent: str) -> Iterator[tuple[str, str]]:
        for name in self.source.listdir(f"intake/{agent}"):
            path = f"intake/{agent}/{name}"
            for _, run in jsonio.line_runs(self.source.stream(path)):
                for record in jsonio.iter_jsonl(run, path):
                    ident = record.get("id")
                    if isinstance(ident, str) and not ids.ID.match(ident):
                        yield ident, path


def format_attributes() -> list[str]:
    """The memstack lines of the store template's .gitattributes: those of this format's files (the drivers
    of the ledger's shards among them). A migration adds those a store lacks, and no other line."""
    return [text for _, text in memstack_lines((data_dir("store-template") / ".gitattributes").read_bytes())]


@dataclass
class Verdict:
    """What a step's migration check found, and the paths it answered for (their usual rules do not run:
    the old ledger's deletion, the shards it became)."""

    found: list[Violation] = field(default_factory=list)
    covered: frozenset[str] = frozenset()


def check(step: Step, blobs: Blobs, folder: str = "") -> Verdict:
    changes = {change.path: change for change in step.changes}
    ledger, settings = changes.get(layout.V1_LEDGER), changes.get(layout.CONFIG)
    deleted = ledger is not None and ledger.deleted and not ledger.added
    formats = _formats(step, blobs, settings)
    stale_views = [c.path for c in step.changes if c.path in layout.V1_VIEWS and not c.deleted]
    if stale_views and _format_of(step) == layout.FORMAT:  # format 1's views, written into a store of format 2
        return Verdict([Violation(path, 0, "I5", f"a store of format 2 has no {path} (a memstack older than"
                                  " format 2 wrote it)", OLDER) for path in stale_views], frozenset(stale_views))
    if ledger is not None and not ledger.deleted and _format_of(step) == layout.FORMAT:  # format 1's ledger
        return Verdict([Violation(layout.V1_LEDGER, 0, "I5", "a store of format 2 has no kb/promotions.jsonl (a"
                                  " memstack older than format 2 wrote it)", OLDER)],
                       frozenset({layout.V1_LEDGER}))
    if not deleted and formats[0] == formats[1]:
        return Verdict()
    if {layout.V1_LEDGER, layout.CONFIG} & step.inherited:  # a merge took the migration from the side that made it
        return Verdict(covered=frozenset({layout.V1_LEDGER} & step.inherited))
    restore = step.restore.format(path=folder + layout.V1_LEDGER)
    found = _format_change(step, blobs, settings, formats, folder)
    if formats != (1, 2):
        if deleted:
            found.append(Violation(layout.V1_LEDGER, 0, "I1", "the ledger of format 1 deleted outside a migration",
                                   MIGRATE.format(restore=restore)))
        return Verdict(found, frozenset({layout.V1_LEDGER} if deleted else ()))
    if not deleted and "promotions.jsonl" in step.source.listdir("kb"):
        found.append(Violation(layout.V1_LEDGER, 0, "I1", "a migration to format 2 keeps the ledger of format 1",
                               "`memstack migrate` moves its lines to kb/promotions/ and deletes it"))
    shards = {path: change for path, change in changes.items() if path.startswith(layout.LEDGER_DIR + "/")}
    found += _others(changes, shards, step.inherited)
    found += _attributes(step, blobs, changes.get(".gitattributes"))
    found += _shards(step, blobs, ledger if deleted else None, shards)
    return Verdict(found, frozenset({layout.V1_LEDGER, *shards}))


def older_format(step: Step) -> bool:
    """Whether the step's state is a store of an older format (its derived files were made by an older
    memstack, from views this one no longer builds: they are not compared with a rebuild)."""
    found = _format_of(step)
    return isinstance(found, int) and found < layout.FORMAT


class RatifiedIntake:
    """Whether an intake record a step adds may claim tier "ratified" (asked only of one that does): memstack
    0.1.0 wrote that tier (`intake write --tier ratified`), so yes in a state of format 1, and in the audit
    (`--all`) of a store migrated from format 1 (HEAD's history holds kb/promotions.jsonl), which cannot tell
    when a line was written (as with legacy ids); never in a commit of format 2, nor in the audit of a store
    that never was of format 1 (docs/migrate.md)."""

    def __init__(self, repo: Path, folder: str) -> None:
        self.repo, self.folder = repo, folder
        self._older: tuple[Step, bool] | None = None  # the step last asked of, and whether its state is older
        self._migrated: bool | None = None  # whether HEAD's history holds format 1's ledger, once asked

    def __call__(self, step: Step) -> bool:
        if self._older is None or self._older[0] is not step:
            self._older = (step, older_format(step))
        if self._older[1] or not step.audit:
            return self._older[1]
        if self._migrated is None:
            self._migrated = bool(git.out(self.repo, "log", "-1", "--format=%H", "HEAD", "--",
                                          self.folder + layout.V1_LEDGER).strip())
        return self._migrated


class MadeBy010:
    """Whether a fact at tier "ratified" is what memstack 0.1.0's promotion made of an intake record its writer put
    at that tier (asked only where such a record may be: RatifiedIntake): the state holds the record, at tier
    ratified, and the fact's id is the one promotion derives from it (`-f`: the record's time, its agent's tag).
    The intake file last read is kept: a promotion's facts come in the order of their records."""

    def __init__(self, source: Source) -> None:
        self.source, self.routing = source, Routing(source)
        self.last: tuple[str, bytes] = ("", b"")

    def __call__(self, path: str, fact_id: object, intake_id: object) -> bool:
        agent = layout.classify(path).agent
        if not (isinstance(fact_id, str) and isinstance(intake_id, str) and fact_id.endswith("-f") and agent):
            return False
        intake = self.routing.intake_file({"intake_id": intake_id, "agent": agent})
        if intake is None:
            return False
        if self.last[0] != intake:
            self.last = (intake, self.source.read(intake) or b"")
        record = forgotten.line_with(self.last[1], intake_id)
        try:
            return record is not None and record.get("tier") == "ratified" and record.get("agent") == agent \
                and fact_id == ids.derived(intake_id, "f", parse_ts(record.get("created_at"), "created_at"), agent)
        except MemstackError:  # a bad created_at: the intake rules report it
            return False


def format_in(data: bytes | None) -> Any:
    """The format a memstack.yaml's bytes say (none: format 1); None for one that does not parse (the config
    rules say what is wrong with it)."""
    try:
        return config.store_format(config.parse(data.decode("utf-8"), "") if data else {})
    except (MemstackError, UnicodeDecodeError):
        return None


def _format_of(step: Step) -> Any:
    """The format of the step's new state (its memstack.yaml)."""
    return format_in(step.source.read(layout.CONFIG))


def _formats(step: Step, blobs: Blobs, settings: Change | None) -> tuple[Any, Any]:
    """memstack.yaml's format before and after the step (the same when the step leaves it alone, makes the
    store or deletes it)."""
    if settings is None or settings.added or settings.deleted:
        return 0, 0
    return format_in(blobs.old(settings)), format_in(blobs.new(step, settings))


def _format_change(step: Step, blobs: Blobs, settings: Change | None, formats: tuple[Any, Any],
                   folder: str) -> list[Violation]:
    """memstack.yaml: from format 1 to 2, nothing else in it changed."""
    if formats[0] == formats[1] or settings is None:
        return []
    restore = step.restore.format(path=folder + layout.CONFIG)
    if formats != (1, 2):
        return [Violation(layout.CONFIG, 0, "I5", f"the store's format changed from {formats[0]} to {formats[1]}",
                          f"only `memstack migrate` changes it, from 1 to 2; restore the file ({restore})")]
    documents = []
    for data in (blobs.old(settings), blobs.new(step, settings)):
        document = config.parse((data or b"").decode("utf-8"), layout.CONFIG)
        made_by = document.get("memstack")
        if isinstance(made_by, dict):  # the release that made the store: the one that migrated it, from now on
            document = {**document, "memstack": {k: v for k, v in made_by.items() if k != "version"}}
        documents.append({k: v for k, v in document.items() if k != "format"})
    if documents[0] != documents[1]:
        return [Violation(layout.CONFIG, 0, "I5", "the migration to format 2 changes more of memstack.yaml than"
                          " its format and memstack.version",
                          "commit the other settings apart, before or after the migration")]
    return []


def _others(changes: dict[str, Change], shards: dict[str, Change], inherited: frozenset[str]) -> list[Violation]:
    """The migration commit changes the ledger, memstack.yaml's format and the derived files, nothing else."""
    found = []
    for path in sorted(changes):
        if path in inherited:
            continue
        kind = layout.classify(path).kind
        if path in shards or path in (layout.V1_LEDGER, layout.CONFIG) or kind in (*layout.DERIVED, layout.ATTRIBUTES) \
                or path in layout.V1_VIEWS or path.split("/")[:2] in (["kb", view] for view in layout.VIEWS):
            continue
        found.append(Violation(path, 0, "I5", "changed in the migration to format 2",
                               "the migration's commit holds the ledger, the views and memstack.yaml's format"
                               " only: commit this change apart"))
    return found


def _attributes(step: Step, blobs: Blobs, change: Change | None) -> list[Violation]:
    """The store's .gitattributes gains the template's lines for this format, nothing else (I7: keeps its own)."""
    if change is None or change.path in step.inherited:
        return []
    before = {raw.strip() for raw in (blobs.old(change) or b"").decode("utf-8", "replace").splitlines()}
    allowed = set(format_attributes())
    return [Violation(change.path, number, "I5", f"the migration to format 2 adds `{text}`",
                      "the migration adds only the template's lines for memstack's files: commit this apart")
            for number, raw in enumerate((blobs.new(step, change) or b"").decode("utf-8", "replace").splitlines(), 1)
            if (text := raw.strip()) and text not in before and text not in allowed and not text.startswith("#")]


def _shards(step: Step, blobs: Blobs, ledger: Change | None, shards: dict[str, Change]) -> list[Violation]:
    """Each shard holds exactly the old ledger's lines of its intake file, in order: compared by hash."""
    expected: dict[str, Any] = {}
    found: list[Violation] = []
    if ledger is not None:
        routing = Routing(step.source)
        for number, run in jsonio.line_runs(blobs.cat.stream(ledger.old_sha)):
            for offset, line in enumerate(run.splitlines(keepends=True)):
                try:
                    shard = routing.shard(line, number + offset)
                except MemstackError as exc:
                    found.append(Violation(layout.V1_LEDGER, number + offset, "I1", str(exc).split(": ", 2)[-1],
                                           "the line's record must be in an intake file to be moved"))
                    continue
                expected.setdefault(shard, hashlib.sha256()).update(line if line.endswith(b"\n") else line + b"\n")
    for path in sorted(set(expected) | set(shards)):
        change = shards.get(path)
        data = blobs.new(step, change) if change is not None else None
        if change is not None and not change.added:
            found.append(Violation(path, 0, "I1", "a ledger shard that existed before the migration changed",
                                   "the migration writes each shard new"))
        elif path not in expected:
            if data is not None:
                found.append(Violation(path, 0, "I1", "holds lines that are not the old ledger's",
                                       "`memstack migrate` writes the shards from kb/promotions.jsonl alone"))
        elif data is None or hashlib.sha256(data).digest() != expected[path].digest():
            found.append(Violation(path, 0, "I1", "is not exactly the old ledger's lines of its intake file, in"
                                   " order", "run `memstack migrate` again: it writes each shard from"
                                   " kb/promotions.jsonl"))
    return found
