"""One check's state and one step of it: every change of a new state against one base, by the kind of
file it touches.

Each change's path is classified (base/layout.py) and the rules of its kind run: a registry of history
rules by kind (I1 logs, I2 facts, I3 handoffs and filed documents, I7 the store's .gitattributes), then
I5/I7 on what is new (no CR in a memory file), I8 on every memory file, and what a kind gathers for
the end of the step (derived files for I4, identity files for I6, memstack.yaml for I5 and the
patterns and policies in force, SOIL records). A log that only grows is never held whole: what it appends
is found by hashing its start as git does, and a long log is checked a megabyte at a time. Successors a
closing names outside its own file wait for the end of the step (successors.py).
"""

import dataclasses
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from memstack.base import clock, config, files, jsonio, layout, secrets
from memstack.base.layout import Place
from memstack.base.times import now_ms
from memstack.integrity import binderlog, farm, landing, migration, policies, rebuilt, rules, successors, tombstones
from memstack.integrity.blobs import Blobs
from memstack.integrity.report import Step
from memstack.integrity.violations import Violation, path_problems, shifted
from memstack.repo import git, objects
from memstack.repo.counts import BlobCounts
from memstack.repo.diffs import Change
from memstack.repo.sources import GitSource

# A log at least this long is read as a stream when added whole or appended to: format 1's ledger reached 200 MB.
STREAM = 1 << 20


class Checker:
    """Runs steps against one repository, sharing one cat-file process."""

    def __init__(self, repo: Path, folder: str = "") -> None:
        self.repo = repo
        self.folder = folder  # the store's folder in the repository: "" or ".memory/"
        self.blobs = Blobs(repo)
        self.now = now_ms()  # transaction times are checked against the check's clock, never a commit's date
        self.pending = successors.Unresolved()  # successors a step's closings name outside their own file
        self.binder = binderlog.Entries()  # a step's new Binder lines and filed documents, checked at its end
        self.stale: list[str] = []  # derived files that lag their sources, where that is allowed (--all)
        self.clock = clock.Clock(self.now, lambda: config.DEFAULT_SKEW_SECONDS)  # each step's: policies.clock_for
        self.secrets = policies.Secrets()
        self.policy: secrets.Policy | None = None  # I8's `secrets:` block in force in this step, once read
        self.shown: Any = None  # a progress bar (progress.bar) counting the changes checked, if one is drawn
        self.ratified_intake = migration.RatifiedIntake(repo, folder)  # may an added intake record claim it
        self.tails: dict[str, tuple[bytes, int]] = {}  # each log's appended bytes, lines before them (I1), for I8
        self.counts = BlobCounts(repo / folder)  # the entries of the shards counted, by blob id (willow.md's)
        self.farm = farm.Records()  # a large check's records validated by a second process too (farm.py)
        self.history: dict[str, Callable[[Step, Change, Place, bool], list[Violation]]] = {
            **dict.fromkeys(layout.LOGS, self.log), layout.FACTS: self.fact_file,
            layout.BINDER_FILE: self.filed_document, layout.HANDOFF: self.handoff, layout.ATTRIBUTES: self.attributes}

    def source(self, rev: str | None) -> GitSource:
        """The files of commit `rev` (the index: None), read through this check's cat-file process."""
        return GitSource(self.repo, self.blobs.cat, rev, self.folder, self.counts)

    def close(self) -> None:
        self.counts.save()
        self.farm.close()
        self.blobs.close()
        objects.forget_appended()  # a long-lived process (the MCP server) keeps no log's tail

    def __enter__(self) -> "Checker":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ---- one step -----------------------------------------------------------------------------

    def step(self, step: Step) -> list[Violation]:
        moved = migration.check(step, self.blobs, self.folder)  # format 1 -> 2: the old ledger's lines moved
        found: list[Violation] = list(moved.found)
        self.pending = successors.Unresolved()
        self.binder = binderlog.Entries(lambda: self.ratified_intake(step))  # 0.1.0 facts: where its records
        self.tombstones = tombstones.Appended()
        self.clock = policies.clock_for(step, self.now, self.blobs)
        self.policy = None
        derived_changes: list[Change] = []
        identity_paths: list[str] = []
        patterns: policies.Patterns | None = None
        config_changed = all_identities = False
        for change in step.changes:
            if change.path in moved.covered:
                continue
            place = layout.classify(change.path)
            validate = step.prefix and change.path not in step.inherited
            if step.prefix and change.path in step.inherited and place.kind in (layout.CONFIG_KIND, layout.IDENTITY):
                # A merge meets one side's patterns with the other side's identities: each side
                # passed alone, so the merged state is checked as a whole (identity files are small).
                all_identities = True
            if validate and not change.deleted:
                found += path_problems(change, place)
                if change.added and place.kind in (layout.INTAKE, layout.FACTS):
                    found += rules.tag_clash(change.path, place, step.source.listdir(
                        "intake" if place.kind == layout.INTAKE else "kb/facts"))
                if change.added and place.kind == layout.BINDER_FILE:
                    self.binder.document(change.path)
            history = self.history.get(place.kind)
            file_found = history(step, change, place, validate) if history is not None else []
            if validate and not change.deleted:
                file_found += self.secrets_of(step, change, place)
            if validate:
                if place.kind in layout.DERIVED:
                    derived_changes.append(change)
                elif place.kind == layout.IDENTITY and not change.deleted:
                    identity_paths.append(change.path)
                elif place.kind == layout.CONFIG_KIND:
                    config_changed = True
                    more, patterns = policies.config_file(self.blobs.new(step, change), change.path,
                                                          step.restore.format(path=self.folder + change.path))
                    file_found += more
                elif place.kind == layout.SOIL:
                    new = self.blobs.new(step, change)
                    if new is not None:
                        file_found += rules.soil(change.path, place, new)
            found += rules.cap(file_found, change.path)
            if self.shown is not None:
                self.shown.update(1)
        changed_identities = list(identity_paths)
        if (config_changed and patterns is not None) or all_identities:
            identity_paths = [f"identity/{name}" for name in step.source.listdir("identity")
                              if layout.classify(f"identity/{name}").kind == layout.IDENTITY]
        if identity_paths:
            found += policies.identities(step, identity_paths, patterns, config_changed)
        if config_changed and changed_identities:
            found += policies.identities_before(step, changed_identities, self.blobs)
        lagging = len(self.stale)
        derived_found = [] if derived_changes and migration.older_format(step) else \
            rebuilt.check(step, derived_changes, self.repo, self.folder, self.blobs, self.stale)
        found += derived_found
        # I8 on a derived file that is not what its sources make (a stale one of the audit's included)
        differ = {v.path for v in derived_found} | set(self.stale[lagging:])
        for change in derived_changes:
            if change.path in differ and not change.deleted:
                found += rules.cap(self.secrets_of(step, change, layout.classify(change.path), derived=True),
                                   change.path)
        found += self.dangling(step) + self.tombstones.check(step.source) + self.farm.collect()
        found += self.binder.check(step, lambda: policies.binder_people(step, self.blobs))
        found += landing.violations(step, self.binder.lines, self.repo, self.blobs, self.source, self.folder)
        found = rules.redacted(found)
        if self.folder:
            found = [dataclasses.replace(v, path=self.folder + v.path) for v in found]
        return sorted(set(found))

    # ---- history, by kind of file (the registry `self.history`) ---------------------------------

    def log(self, step: Step, change: Change, place: Place, validate: bool) -> list[Violation]:
        """I1: an append-only log keeps every line of the base; I5/I7 on what it appends."""
        path = change.path
        streamed = self.streamed(step, change, place, validate)
        if streamed is not None:
            return streamed
        tail = self.appended(change, place) if step.prefix else None
        if tail is not None:
            data, before = tail
            if not isinstance(data, bytes):  # a bulk promotion's: spilled to a file
                return self.pieces_added(step, change, place, data.pieces(), before + 1, validate)
            # the base's lines kept, these appended: I5/I7 on them, I8 later
            found = shifted(rules.final_newline(path, data), before + 1) if validate else []
            if validate:
                self.tails[path] = (data, before)
                appended = rules.Numbered(data, 0, before + 1)
                found += self.farm.records(path, place, appended, ratified=lambda: self.ratified_intake(step))
                found += self.bindings(step, path, place, appended, 1)
            return found
        restore = step.restore.format(path=self.folder + path)
        new = self.blobs.new(step, change)
        old = self.blobs.old(change)
        if old is not None and new is None:
            return [Violation(path, 0, "I1", "append-only log deleted or renamed",
                              rules.I1_FIX.format(restore=restore))]
        if new is None:
            return []
        found, start = rules.append_only(path, old, new, prefix=step.prefix, restore=restore) \
            if old is not None else ([], 0)
        if validate:
            found += rules.final_newline(path, new)
            if start >= 0:
                self.tails[path] = (new[start:], new.count(b"\n", 0, start))
                appended = rules.appended_lines(new, start)
                found += self.farm.records(path, place, appended, old, ratified=lambda: self.ratified_intake(step))
                found += self.bindings(step, path, place, appended, 1)
        return found

    def fact_file(self, step: Step, change: Change, place: Place, validate: bool) -> list[Violation]:
        """I2: no fact removed, a superseded fact unchanged, an open one only closed; I5/I7 on new facts."""
        path = change.path
        restore = step.restore.format(path=self.folder + path)
        old = self.blobs.old(change)
        new = self.blobs.new(step, change)
        if old is not None and new is None:
            return [Violation(path, 0, "I2", "fact file deleted or renamed: its facts were removed",
                              rules.I2_FIX.format(restore=restore))]
        if new is None:
            return []
        found: list[Violation]
        check: Iterable[tuple[int, bytes]]
        if old is None:
            found, check = [], rules.appended_lines(new, 0)
        else:
            found, check = rules.facts(path, old, new, prefix=step.prefix, restore=restore, files=step.source)
        if validate:
            found += rules.final_newline(path, new) + self.farm.records(path, place, check)
            old_count = 0 if not old else old.count(b"\n") + (0 if old.endswith(b"\n") else 1)
            found += self.bindings(step, path, place, check, old_count + 1, new)
        return found

    def attributes(self, step: Step, change: Change, place: Place, validate: bool) -> list[Violation]:
        """I7: the store's .gitattributes keeps memstack's lines (line endings, the merge driver)."""
        return rules.attributes(change.path, self.blobs.old(change), self.blobs.new(step, change),
                                step.restore.format(path=self.folder + change.path))

    def filed_document(self, step: Step, change: Change, place: Place, validate: bool) -> list[Violation]:
        """A document filed in the Binder never changes; a new one must be UTF-8 text."""
        return self.sealed(step, change, validate, rules.filed_document,
                           lambda new: rules.binder_file(change.path, new))

    def handoff(self, step: Step, change: Change, place: Place, validate: bool) -> list[Violation]:
        """I3: a sealed handoff never changes; a new one must be complete."""
        return self.sealed(step, change, validate, rules.sealed_handoff,
                           lambda new: rules.handoff(change.path, place, new,
                                                     policies.handoff_bytes(step, self.blobs), self.clock))

    def sealed(self, step: Step, change: Change, validate: bool, changed: Callable[[str, bool, str], Violation],
               check_new: Callable[[bytes], list[Violation]]) -> list[Violation]:
        """A file that never changes once committed: any change of it is `changed` (deleted or edited); a new
        one is checked by `check_new`."""
        path = change.path
        if not change.added and change.old_mode in git.REGULAR:
            if change.deleted or change.new_mode not in git.REGULAR or change.old_sha != change.new_sha:
                return [changed(path, change.deleted, step.restore.format(path=self.folder + path))]
            return []
        new = self.blobs.new(step, change)
        return check_new(new) if validate and new is not None else []

    # ---- long logs ------------------------------------------------------------------------------

    def appended(self, change: Change, place: Place) -> tuple[files.Data, int] | None:
        """A long log the change only appends to (the promotion ledger grows with the store): the
        appended bytes and the number of lines before them, found by streaming the new side and hashing
        its start (objects.appended_to_blob): neither side is held whole. None: read both sides."""
        if change.added or change.deleted or place.kind == layout.INTAKE or git.is_zero(change.new_sha) \
                or change.old_mode not in git.REGULAR or change.new_mode not in git.REGULAR \
                or (self.blobs.cat.size(change.new_sha) or 0) < STREAM:
            return None
        return objects.appended_to_blob(self.repo, change.old_sha, self.blobs.cat.stream(change.new_sha),
                                        change.new_sha)

    def streamed(self, step: Step, change: Change, place: Place, validate: bool) -> list[Violation] | None:
        """A long log added whole (the audit of a store, or a first promotion: the ledger of a million
        records is 200 MB): its lines checked a megabyte at a time (I5, I7, I8), never held whole. None:
        not such a log (an intake file is read whole: its ids must differ from each other)."""
        if not change.added or place.kind == layout.INTAKE or change.new_mode not in git.REGULAR:
            return None
        if git.is_zero(change.new_sha):
            if step.worktree is None:
                return None
            path = step.worktree / change.path
            if not path.is_file() or path.is_symlink() or path.stat().st_size < STREAM:
                return None
            pieces = objects.file_pieces(path)
        elif (self.blobs.cat.size(change.new_sha) or 0) < STREAM:
            return None
        else:
            pieces = self.blobs.cat.stream(change.new_sha)
        return self.pieces_added(step, change, place, pieces, 1, validate)

    def pieces_added(self, step: Step, change: Change, place: Place, pieces: Iterable[bytes], first: int,
                     validate: bool) -> list[Violation]:
        """I5, I7 and I8 on the lines a log adds, given a megabyte at a time (the first numbered `first`)."""
        found: list[Violation] = []
        for number, run in jsonio.line_runs(pieces, first):  # read to the end, as a cat-file stream must be
            torn = not run.endswith(b"\n")  # the last line, without its newline
            if validate and (torn or len(found) <= rules.MAX_PER_FILE):
                found += self.lines_added(step, change, place, run, number)
            if validate and torn:
                found += shifted(rules.final_newline(change.path, run), number)
        self.tails[change.path] = (b"", 0)  # I8 is done: nothing left for secrets_of
        return found

    def lines_added(self, step: Step, change: Change, place: Place, data: bytes, first: int) -> list[Violation]:
        """I5, I7 and I8 on lines a log adds, the first numbered `first`."""
        numbered = rules.Numbered(data, 0, first)
        found = self.farm.records(change.path, place, numbered, ratified=lambda: self.ratified_intake(step))
        return found + self.bindings(step, change.path, place, numbered, 1) + self.secrets_in(step, change, place,
                                                                                                  data, first)

    # ---- I8 -----------------------------------------------------------------------------------

    def secrets_of(self, step: Step, change: Change, place: Place, derived: bool = False) -> list[Violation]:
        """I8 on the lines a change adds to any memory file and to memstack.yaml (a DSN with a password;
        .gitattributes and files outside the store's folders are not memory). A derived file is scanned only
        once I4 found it is not what its sources make (`derived`): one that is holds what I8 passed in its
        sources, and a view grows with the store."""
        if place.kind in (layout.OTHER, layout.ATTRIBUTES):
            return []
        if place.kind == layout.CONFIG_KIND:  # its detectors, not its extra patterns: they would match themselves
            new = self.blobs.new(step, change)
            return [] if new is None else rules.secrets(change.path, place, new, lambda: self.blobs.old(change),
                                                        secrets.Policy(self.policy_in_force(step).dropped))
        if place.kind in layout.DERIVED and not derived:
            return []
        tail = self.tails.pop(change.path, None)  # a log: only its appended lines are new (I1 checked the rest)
        if tail is not None:
            return self.secrets_in(step, change, place, tail[0], tail[1] + 1)
        if derived and step.audit and not git.is_zero(change.new_sha) and change.new_mode in git.REGULAR:
            # every line is new in an audit: a view that lags its sources (200 MB at a million records)
            # is scanned a megabyte at a time, never held whole
            return [v for number, run in jsonio.line_runs(self.blobs.cat.stream(change.new_sha))
                    for v in self.secrets_in(step, change, place, run, number)]
        new = self.blobs.new(step, change)
        return [] if new is None else rules.secrets(change.path, place, new, lambda: self.blobs.old(change),
                                                    self.policy_in_force(step))

    def secrets_in(self, step: Step, change: Change, place: Place, data: bytes, first: int) -> list[Violation]:
        """I8 on lines of a file that are all new, the first numbered `first` (a piece, or a log's tail)."""
        return shifted(rules.secrets(change.path, place, data, lambda: None, self.policy_in_force(step)), first)

    def policy_in_force(self, step: Step) -> secrets.Policy:
        """I8's policy of this step (policies.Secrets), read once a step."""
        if self.policy is None:
            self.policy = self.secrets.in_force(step, self.blobs)
        return self.policy

    # ---- bound ids, real closings, transaction times ------------------------------------------

    def bindings(self, step: Step, path: str, place: Place, numbered: Iterable[tuple[int, bytes]], new_from: int,
                 new: bytes | None = None) -> list[Violation]:
        """rules.bindings on the lines a change adds or closes; a fact file's successors are looked up
        in its own new lines, then in the whole new file, the rest at the end of the step."""
        found, named, new_ids = rules.bindings(path, place, numbered, new_from=new_from, clock=self.clock,
                                               legacy_ids=step.audit)
        if place.kind == layout.BINDER:
            self.binder.note(numbered)  # the lines a change appends: checked against the state at the step's end
        elif place.kind == layout.TOMBSTONES:
            self.tombstones.note(path, numbered)  # each names a record of the state at the step's end
        elif place.kind == layout.FACTS:
            self.binder.note_facts(path, numbered, new_from)  # a fact at tier ratified: from a ratification
        missing = [(n, s) for n, s in named if s not in new_ids]
        if missing and new is not None:
            present = rules.ids_in(new)
            missing = [(n, s) for n, s in missing if s not in present]
        for number, successor in missing:
            self.pending.add(successor, path, number)
        return found

    def dangling(self, step: Step) -> list[Violation]:
        """Each successor still unresolved must be a fact of this state (successors.Unresolved.resolve):
        each bound file read once, from this state."""
        if not self.pending:
            return []
        agents = [a for a in step.source.listdir("kb/facts") if layout.classify(f"kb/facts/{a}/2000-01.jsonl").agent]
        missing = self.pending.resolve(agents, lambda path: rules.ids_in(step.source.read(path) or b""),
                                       lambda agent: step.source.listdir(f"kb/facts/{agent}"))
        return [rules.dangling(path, number, successor) for path, number, successor in missing]  # step sorts
