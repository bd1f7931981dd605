"""`memstack check`: the invariants I1-I8 on a change, in O(size of the change).

Every mode comes down to *steps*: a new state (the index, a commit, the work
tree) against one base (HEAD, a parent, the empty tree). A step's changes come
from one raw diff (`git diff-index` / `git diff-tree`, renames split into a
deletion and an addition), and only the blobs those changes name are read,
through one long-running `git cat-file --batch`. Rules are in `rules.py`; which
file is which is `layout.py`'s; derived files are rebuilt through `derived.py`,
and only when a step touches one.

Modes:
- staged: the index against HEAD (the pre-commit hook);
- worktree: tracked and untracked files against HEAD (`memstack check` with no
  flag: what `git add -A && git commit` would be checked for);
- range: every commit of a rev-list range against each of its parents (merges:
  full rules against the first parent, survival of the other parents' records);
- push: the commits a push adds, plus, for a branch whose old tip is not an
  ancestor of its new one (a force push), the old tip's records surviving in the
  new tip;
- all: every file at HEAD as if added to an empty store (a full audit, O(store)).

A store may be a folder of a larger repository (`folder`, e.g. `.memory/`): git is
asked for that folder only and hands back store-relative paths (`git.py`), so the
rules never see the prefix; violations are reported with it, as git shows the paths.
"""

import dataclasses
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from memstack.base import clock, config, files, jsonio, layout, progress, secrets
from memstack.base.errors import MemstackError
from memstack.base.layout import Place
from memstack.base.times import now_ms
from memstack.integrity import derived, guard, rules, successors
from memstack.integrity.violations import Violation
from memstack.repo import git
from memstack.repo.git import Change
from memstack.repo.sources import GitSource, Source, WorktreeSource


@dataclass
class Step:
    """One comparison: a new state against one base."""

    changes: list[Change]
    source: Source  # the new state: what builders and memstack.yaml are read from
    restore: str  # how to get a file back from the base, for the fixes: "git checkout HEAD -- {path}"
    prefix: bool = True  # False: the base's records need only survive (a merge's other parent, a force push)
    inherited: frozenset[str] = frozenset()  # paths a merge took unchanged from another parent, checked there
    worktree: Path | None = None  # new sides with a ZERO sha are read from this folder
    audit: bool = False  # --all: derived files may lag (stale, not a violation); unbound legacy ids are accepted


@dataclass
class Result:
    """The violations of one new state (the index, the work tree or a commit)."""

    commit: str | None
    subject: str
    against: str
    violations: list[Violation]
    changes: int = 0


@dataclass
class Report:
    mode: str
    scope: str  # what was checked, in words
    results: list[Result] = field(default_factory=list)
    stale: list[str] = field(default_factory=list)  # derived files behind their sources (allowed; --all says so)

    @property
    def violations(self) -> list[Violation]:
        return [v for result in self.results for v in result.violations]

    def to_dict(self) -> dict[str, Any]:
        return {
            "ok": not self.violations, "mode": self.mode, "scope": self.scope,
            "checked": {"states": len(self.results), "changes": sum(r.changes for r in self.results)},
            "violations": [{"commit": r.commit, "against": r.against, **v.to_dict()}
                           for r in self.results for v in r.violations],
            **({"stale": self.stale} if self.mode == "all" else {}),
        }


# A log at least this long is read as a stream when it is added whole or appended to (_streamed,
# _appended): a promoted store's ledger of a million records is 200 MB.
_STREAM = 1 << 20

# A line of memstack.yaml that may hold the `secrets:` key: not a whole-line comment, and the word
# or a double-quoted escape (which could spell it).
_MENTIONS_SECRETS = re.compile(rb'^[ \t]*(?=[^#\s])[^\n]*(?:secrets|"[^"\n]*\\)', re.MULTILINE)


class Checker:
    """Runs steps against one repository, sharing one cat-file process."""

    def __init__(self, repo: Path, folder: str = "") -> None:
        self.repo = repo
        self.folder = folder  # the store's folder in the repository: "" or ".memory/"
        self.blobs = git.CatFile(repo)
        self._last: list[tuple[str, bytes]] = []  # the two blobs read last (a file's old and new): I8 reads them again
        self.now = now_ms()  # transaction times are checked against the check's clock, never a commit's date
        self.pending = successors.Unresolved()  # successors a step's closings name outside their own file
        self.stale: list[str] = []  # derived files that lag their sources, where that is allowed (--all)
        self.clock = clock.Clock(self.now, lambda: config.DEFAULT_SKEW_SECONDS)
        self.policy: secrets.Policy | None = None  # I8's `secrets:` block in force in this step, once read
        self._policies: dict[bytes, secrets.Policy] = {}  # by memstack.yaml's bytes
        self.shown: Any = None  # a progress bar (progress.bar) counting the changes checked, if one is drawn
        self.tails: dict[str, tuple[bytes, int]] = {}  # each log's appended bytes, lines before them (I1), for I8

    def close(self) -> None:
        self.blobs.close()
        git.forget_appended()  # a long-lived process (the MCP server) keeps no log's tail

    def __enter__(self) -> "Checker":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ---- reading ------------------------------------------------------------------------------

    def _blob(self, sha: str) -> bytes:
        for known, kept in self._last:
            if known == sha:
                return kept
        data = self.blobs.read(sha)
        if data is None:
            raise MemstackError(f"git has no object {sha} (a shallow or partial clone? fetch the full history)")
        self._last = [*self._last[-1:], (sha, data)]
        return data

    def _old(self, change: Change) -> bytes | None:
        return self._blob(change.old_sha) if not change.added and change.old_mode in git.REGULAR else None

    def _new(self, step: Step, change: Change) -> bytes | None:
        if change.deleted or change.new_mode not in git.REGULAR:
            return None
        if git.is_zero(change.new_sha) and step.worktree is not None:
            try:
                return (step.worktree / change.path).read_bytes()
            except (FileNotFoundError, IsADirectoryError):
                return None
        return self._blob(change.new_sha)

    # ---- one step -----------------------------------------------------------------------------

    def step(self, step: Step) -> list[Violation]:
        found: list[Violation] = []
        self.pending = successors.Unresolved()
        self.clock = self._clock(step)
        self.policy = None
        derived_changes: list[Change] = []
        identity_paths: list[str] = []
        patterns: list[re.Pattern[str]] | None = None
        config_changed = False
        all_identities = False
        for change in step.changes:
            place = layout.classify(change.path)
            validate = step.prefix and change.path not in step.inherited
            if step.prefix and change.path in step.inherited and place.kind in (layout.CONFIG_KIND, layout.IDENTITY):
                # A merge meets one side's patterns with the other side's identities: each side
                # passed alone, so the merged state is checked as a whole (identity files are small).
                all_identities = True
            if validate and not change.deleted:
                found += _path_problems(change, place)
                if change.added and place.kind in (layout.INTAKE, layout.FACTS):
                    found += self._tag_clash(step, change.path, place)
            file_found = self._history(step, change, place, validate)
            if validate and not change.deleted:
                file_found += self._secrets(step, change, place)
            if validate:
                if place.kind in layout.DERIVED:
                    derived_changes.append(change)
                elif place.kind == layout.IDENTITY and not change.deleted:
                    identity_paths.append(change.path)
                elif place.kind == layout.CONFIG_KIND:
                    config_changed = True
                    more, patterns = self._config(step, change)
                    file_found += more
                elif place.kind == layout.SOIL:
                    new = self._new(step, change)
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
            found += self._identity(step, identity_paths, patterns, config_changed)
        if config_changed and changed_identities:
            found += self._identity_before(step, changed_identities)
        lagging = len(self.stale)
        derived_found = self._derived(step, derived_changes)
        found += derived_found
        # I8 on a derived file that is not what its sources make (a stale one of the audit's included)
        differ = {v.path for v in derived_found} | set(self.stale[lagging:])
        for change in derived_changes:
            if change.path in differ and not change.deleted:
                found += rules.cap(self._secrets(step, change, layout.classify(change.path), derived=True), change.path)
        found += self._dangling(step)
        found = rules.redacted(found)
        if self.folder:
            found = [dataclasses.replace(v, path=self.folder + v.path) for v in found]
        return sorted(set(found))

    # ---- issue 11: bound ids, real closings, transaction times, patterns in force before -------

    def _clock(self, step: Step) -> clock.Clock:
        """The check's clock, with the skew of this state's memstack.yaml (read only if a time exceeds now)."""

        def skew() -> int:
            data = step.source.read(layout.CONFIG)
            try:
                from memstack.base import config

                return config.skew_seconds(config.parse(data.decode("utf-8"), layout.CONFIG)) if data else \
                    config.DEFAULT_SKEW_SECONDS
            except (MemstackError, UnicodeDecodeError):
                return config.DEFAULT_SKEW_SECONDS

        return clock.Clock(self.now, skew)

    def _bindings(self, step: Step, path: str, place: Place, numbered: Iterable[tuple[int, bytes]], new_from: int,
                  new: bytes | None = None) -> list[Violation]:
        """rules.bindings on the lines a change adds or closes; a fact file's successors are looked up
        in its own new lines, then in the whole new file, the rest at the end of the step."""
        found, named, new_ids = rules.bindings(path, place, numbered, new_from=new_from, clock=self.clock,
                                               legacy_ids=step.audit)
        missing = [(n, s) for n, s in named if s not in new_ids]
        if missing and new is not None:
            present = rules.ids_in(new)
            missing = [(n, s) for n, s in missing if s not in present]
        for number, successor in missing:
            self.pending.add(successor, path, number)
        return found

    def _dangling(self, step: Step) -> list[Violation]:
        """Each successor still unresolved must be a fact of this state (successors.Unresolved.resolve):
        each bound file read once, from this state."""
        if not self.pending:
            return []
        agents = [a for a in step.source.listdir("kb/facts") if layout.classify(f"kb/facts/{a}/2000-01.jsonl").agent]

        missing = self.pending.resolve(agents, lambda path: rules.ids_in(step.source.read(path) or b""),
                                       lambda agent: step.source.listdir(f"kb/facts/{agent}"))
        return [rules.dangling(path, number, successor) for path, number, successor in missing]  # step sorts

    def _tag_clash(self, step: Step, path: str, place: Place) -> list[Violation]:
        """A new agent folder's id tag must be no other agent's (ids are bound to a folder by that tag)."""
        from memstack.base import ids

        tag = ids.agent_tag(place.agent)
        top = "intake" if place.kind == layout.INTAKE else "kb/facts"
        return [rules.tag_clash(path, place.agent, other, tag) for other in step.source.listdir(top)
                if other != place.agent and ids.agent_tag(other) == tag]

    def _identity_before(self, step: Step, paths: list[str]) -> list[Violation]:
        """A commit that changes memstack.yaml and identity files: the identity files also meet the
        patterns in force before it (a commit cannot loosen the patterns and add what they forbade)."""
        from memstack.integrity import identity

        change = next((c for c in step.changes if layout.classify(c.path).kind == layout.CONFIG_KIND), None)
        old = self._old(change) if change is not None else None
        if old is None:
            return []
        problems, before = rules.config(layout.CONFIG, old)
        if problems or not before:
            return []
        found = []
        for path in paths:
            data = step.source.read(path)
            if data is None or rules.text(path, data):
                continue
            for violation in identity.violations_in(path, data.decode("utf-8"), before):
                found.append(dataclasses.replace(
                    violation, what=f"{violation.what} (a pattern of memstack.yaml before this change)",
                    fix="a change may not loosen identity.forbidden_patterns and add what they forbade: commit the"
                        " new patterns alone first (a reviewable change), then the identity"))
        return found

    def _appended(self, change: Change, place: Place) -> tuple[files.Data, int] | None:
        """A long log the change only appends to (the promotion ledger grows with the store): the
        appended bytes and the number of lines before them, found by streaming the new side and hashing
        its start (git.appended_to_blob): neither side is held whole. None: read both sides."""
        if change.added or change.deleted or place.kind == layout.INTAKE or git.is_zero(change.new_sha) \
                or change.old_mode not in git.REGULAR or change.new_mode not in git.REGULAR \
                or int(git.out(self.repo, "cat-file", "-s", change.new_sha)) < _STREAM:
            return None
        return git.appended_to_blob(self.repo, change.old_sha, self.blobs.stream(change.new_sha), change.new_sha)

    def _streamed(self, step: Step, change: Change, place: Place, validate: bool) -> list[Violation] | None:
        """A long log added whole (the audit of a store, or a first promotion: the ledger of a million
        records is 200 MB): its lines checked a megabyte at a time (I5, I7, I8), never held whole. None:
        not such a log (an intake file is read whole: its ids must differ from each other)."""
        if not change.added or place.kind == layout.INTAKE or change.new_mode not in git.REGULAR:
            return None
        on_disk = git.is_zero(change.new_sha)
        if on_disk:
            if step.worktree is None:
                return None
            path = step.worktree / change.path
            if not path.is_file() or path.is_symlink() or path.stat().st_size < _STREAM:
                return None
            pieces = git.file_pieces(path)
        elif int(git.out(self.repo, "cat-file", "-s", change.new_sha)) < _STREAM:
            return None
        else:
            pieces = self.blobs.stream(change.new_sha)
        return self._pieces_added(step, change, place, pieces, 1, validate)

    def _pieces_added(self, step: Step, change: Change, place: Place, pieces: Iterable[bytes], first: int,
                      validate: bool) -> list[Violation]:
        """I5, I7 and I8 on the lines a log adds, given a megabyte at a time (the first numbered `first`)."""
        found: list[Violation] = []
        for number, run in jsonio.line_runs(pieces, first):  # read to the end, as a cat-file stream must be
            torn = not run.endswith(b"\n")  # the last line, without its newline
            if validate and (torn or len(found) <= rules.MAX_PER_FILE):
                found += self._lines_added(step, change, place, run, number)
            if validate and torn:
                found += _shifted(rules.final_newline(change.path, run), number)
        self.tails[change.path] = (b"", 0)  # I8 is done: nothing left for _secrets
        return found

    def _lines_added(self, step: Step, change: Change, place: Place, data: bytes, first: int) -> list[Violation]:
        """I5, I7 and I8 on lines a log adds, the first numbered `first`."""
        numbered = rules.Numbered(data, 0, first)
        found = rules.records(change.path, place, numbered) + self._bindings(step, change.path, place, numbered, 1)
        return found + self._secrets_in(step, change, place, data, first)

    def _secrets_in(self, step: Step, change: Change, place: Place, data: bytes, first: int) -> list[Violation]:
        """I8 on lines of a file that are all new, the first numbered `first` (a piece, or a log's tail)."""
        return _shifted(rules.secrets(change.path, place, data, lambda: None, self._secrets_policy(step)), first)

    def _history(self, step: Step, change: Change, place: Place, validate: bool) -> list[Violation]:
        """I1 logs, I2 facts, I3 handoffs against the base; I5/I7 on what a log or fact file adds."""
        path = change.path
        restore = step.restore.format(path=self.folder + path)
        if place.kind in layout.LOGS:
            streamed = self._streamed(step, change, place, validate)
            if streamed is not None:
                return streamed
            tail = self._appended(change, place) if step.prefix else None
            if tail is not None and not isinstance(tail[0], bytes):  # a bulk promotion's: spilled to a file
                return self._pieces_added(step, change, place, tail[0].pieces(), tail[1] + 1, validate)
            if tail is not None:  # the base's lines kept, these appended: I5/I7 on them, I8 later
                found = _shifted(rules.final_newline(path, tail[0]), tail[1] + 1) if validate else []
                if validate:
                    self.tails[path] = tail
                    appended = rules.Numbered(tail[0], 0, tail[1] + 1)
                    found += rules.records(path, place, appended)
                    found += self._bindings(step, path, place, appended, 1)
                return found
            new = self._new(step, change)
            old = self._old(change)
            if old is not None and new is None:
                return [Violation(path, 0, "I1", "append-only log deleted or renamed", rules.I1_FIX.format(restore=restore))]
            if new is None:
                return []
            found, start = rules.append_only(path, old, new, prefix=step.prefix, restore=restore) \
                if old is not None else ([], 0)
            if validate:
                found += rules.final_newline(path, new)
                if start >= 0:
                    self.tails[path] = (new[start:], new.count(b"\n", 0, start))
                    appended = rules.appended_lines(new, start)
                    found += rules.records(path, place, appended, old or b"")
                    found += self._bindings(step, path, place, appended, 1)
            return found
        if place.kind == layout.FACTS:
            old = self._old(change)
            new = self._new(step, change)
            if old is not None and new is None:
                return [Violation(path, 0, "I2", "fact file deleted or renamed: its facts were removed",
                                  rules.I2_FIX.format(restore=restore))]
            if new is None:
                return []
            if old is None:
                found, check = [], rules.appended_lines(new, 0)
            else:
                found, check = rules.facts(path, old, new, prefix=step.prefix, restore=restore)
            if validate:
                found += rules.final_newline(path, new) + rules.records(path, place, check)
                old_count = 0 if not old else old.count(b"\n") + (0 if old.endswith(b"\n") else 1)
                found += self._bindings(step, path, place, check, old_count + 1, new)
            return found
        if place.kind == layout.BINDER_FILE:
            if not change.added and change.old_mode in git.REGULAR:
                if change.deleted or change.new_mode not in git.REGULAR or change.old_sha != change.new_sha:
                    return [rules.filed_document(path, change.deleted, restore)]
                return []
            new = self._new(step, change)
            return rules.binder_file(path, new) if validate and new is not None else []
        if place.kind == layout.HANDOFF:
            if not change.added and change.old_mode in git.REGULAR:
                if change.deleted or change.new_mode not in git.REGULAR or change.old_sha != change.new_sha:
                    return [rules.sealed_handoff(path, change.deleted, restore)]
                return []
            new = self._new(step, change)
            return rules.handoff(path, place, new) if validate and new is not None else []
        return []

    def _secrets(self, step: Step, change: Change, place: Place, derived: bool = False) -> list[Violation]:
        """I8 on the lines a change adds to any memory file (memstack.yaml and files outside the store's
        folders are not memory). A derived file is scanned only once I4 found it is not what its sources
        make (`derived`): one that is holds what I8 passed in its sources, and a view grows with the store."""
        if place.kind in (layout.OTHER, layout.CONFIG_KIND):
            return []
        if place.kind in layout.DERIVED and not derived:
            return []
        tail = self.tails.pop(change.path, None)  # a log: only its appended lines are new (I1 checked the rest)
        if tail is not None:
            return self._secrets_in(step, change, place, tail[0], tail[1] + 1)
        if derived and step.audit and not git.is_zero(change.new_sha) and change.new_mode in git.REGULAR:
            # every line is new in an audit: a view that lags its sources (200 MB at a million records)
            # is scanned a megabyte at a time, never held whole
            return [v for number, run in jsonio.line_runs(self.blobs.stream(change.new_sha))
                    for v in self._secrets_in(step, change, place, run, number)]
        new = self._new(step, change)
        return [] if new is None else rules.secrets(change.path, place, new, lambda: self._old(change),
                                                    self._secrets_policy(step))

    def _secrets_policy(self, step: Step) -> secrets.Policy:
        """The `secrets:` block in force: this state's, and where the step changes memstack.yaml, the
        base's too (a detector on in either is on, either's extra patterns apply), so one commit cannot
        switch a detector off and add what it finds. memstack.yaml is read once a step."""
        if self.policy is None:
            policy = self._policy_in(step.source.read(layout.CONFIG))
            change = next((c for c in step.changes if layout.classify(c.path).kind == layout.CONFIG_KIND), None)
            if change is not None:
                policy = policy.both(self._policy_in(self._old(change)))
            self.policy = policy
        return self.policy

    def _policy_in(self, data: bytes | None) -> secrets.Policy:
        """The `secrets:` block of one memstack.yaml; all detectors and no extras when it has none or is
        broken (I5 reports a broken one)."""
        if not data or not _MENTIONS_SECRETS.search(data):
            return secrets.DEFAULT  # no `secrets:` key can be there: no YAML parser started (~0.1 s)
        if data not in self._policies:
            from memstack.base import config, schemas

            try:
                document = config.parse(data.decode("utf-8"), layout.CONFIG)
                policy = secrets.DEFAULT if schemas.errors("config", document) else rules.secrets_policy(document)
            except (MemstackError, UnicodeDecodeError):
                policy = secrets.DEFAULT
            self._policies[data] = policy
        return self._policies[data]

    def _config(self, step: Step, change: Change) -> tuple[list[Violation], list[re.Pattern[str]] | None]:
        new = self._new(step, change)
        if new is None:
            return [Violation(change.path, 0, "I5", "memstack.yaml deleted: a store needs its config",
                              step.restore.format(path=self.folder + change.path))], None
        return rules.config(change.path, new)

    def _identity(self, step: Step, paths: list[str], patterns: list[re.Pattern[str]] | None,
                  config_changed: bool) -> list[Violation]:
        """I6 (and I7) on the identity files, with the forbidden patterns of this same state."""
        from memstack.integrity import identity

        if patterns is None:
            if config_changed:
                return []  # memstack.yaml is broken: reported as I5 already
            data = step.source.read(layout.CONFIG)
            found, patterns = rules.config(layout.CONFIG, data) if data is not None else ([], [])
            if found or patterns is None:
                return [Violation(layout.CONFIG, 0, "I5", f"cannot read the forbidden patterns: {v.what}", v.fix)
                        for v in found]
        found = []
        for path in paths:
            data = step.source.read(path)
            if data is None:
                continue
            problems = rules.text(path, data)
            found += problems or identity.violations_in(path, data.decode("utf-8"), patterns)
        return found

    def _views(self, step: Step) -> dict[str, files.Data]:
        """The KB views of the step's state: the last checked views patched with what changed since
        (viewpatch.py), or built from every fact file where they cannot be."""
        from memstack.kb import viewpatch, views

        target = _target(step)
        if target is False:
            return views.build(step.source)
        wanted = [c.path for c in step.changes if c.path in viewpatch.VIEWS]
        return viewpatch.views_of(self.repo, self.folder, self.blobs, target, step.source, wanted)

    def _derived(self, step: Step, changes: list[Change]) -> list[Violation]:
        """I4: each changed derived file equals what its builder makes from this same state."""
        groups: dict[derived.Derived, list[Change]] = {}
        for change in changes:
            entry = derived.find(change.path)
            if entry is not None:
                groups.setdefault(entry, []).append(change)
        found: list[Violation] = []
        for entry, members in groups.items():
            if entry.builder == VIEWS_BUILDER and _target(step) is None:  # the index: promote's build may answer
                from memstack.integrity import buildmemo

                known = buildmemo.accepted(self.repo, self.folder, step.source, members)
                members = [c for c in members if c.path not in known]
                if not members:
                    continue
            if entry.builder is None:
                for change in members:
                    new = self._new(step, change)
                    if new is not None:
                        found += rules.view_json(change.path, new, entry.rebuild)
                continue
            try:
                built = self._views(step) if entry.builder == VIEWS_BUILDER else entry.build(step.source)
            except (MemstackError, KeyError, TypeError, ValueError) as exc:
                why = exc.message if isinstance(exc, MemstackError) else f"{type(exc).__name__}: {exc}"
                found += [Violation(c.path, 0, "I4", f"cannot be rebuilt from the sources in this state ({why})",
                                    f"fix the sources, then run `{entry.rebuild}`") for c in members]
                continue
            for change in members:
                expected = built.get(change.path)
                if expected is not None and not change.deleted and git.blob_id(expected, change.new_sha) == change.new_sha:
                    continue  # the very bytes a rebuild makes (compared by git's hash: the blob is not read)
                if step.audit and expected is not None and not change.deleted and change.new_mode in git.REGULAR:
                    self.stale.append(change.path)  # I4: views may lag; said, not refused (their hashes differ)
                    continue
                actual = self._new(step, change)
                made = None if expected is None else files.whole(expected)  # they differ: held for the diff
                found += _compare_derived(change.path, actual, made, entry.rebuild)
        return found


VIEWS_BUILDER = "memstack.kb.views:build"


def _target(step: Step) -> str | None | bool:
    """What viewpatch.since calls the step's new state; False when its views are always built whole
    (`--all`, a merge's other parents: no one base to patch)."""
    if step.audit or not step.prefix:
        return False
    if isinstance(step.source, GitSource):
        return step.source.rev
    return git.WORKTREE if step.worktree is not None else False


def _path_problems(change: Change, place: Place) -> list[Violation]:
    """I7 and stray files: what is wrong with a new or changed path itself."""
    path = change.path
    if change.new_mode == git.SYMLINK:
        return [Violation(path, 0, "I7", "is a symlink", "replace it with a regular file; memstack refuses symlinks")]
    if change.new_mode == git.GITLINK:
        return [Violation(path, 0, "I7", "is a submodule", "remove it; a store holds only regular files")]
    try:
        path.encode("utf-8")
    except UnicodeEncodeError:
        return [Violation(path.encode("utf-8", "surrogateescape").decode("utf-8", "replace"), 0, "I7",
                          "the path is not UTF-8", "rename it (`git mv`)")]
    if place.kind == layout.BAD_NAME:
        return [Violation(path, 0, "I7", place.problem, "rename it (`git mv`)")]
    if place.kind == layout.STRAY:
        return [Violation(path, 0, "I5", f"stray file: {place.problem}",
                          f"move it out of the layer folder (files there are {layout.expected_shape(path)})")]
    return []


def _shifted(found: list[Violation], first: int) -> list[Violation]:
    """Violations found in a piece of a file whose first line is line `first` of the file."""
    return [dataclasses.replace(v, line=v.line + first - 1) if v.line else v for v in found]


def _compare_derived(path: str, actual: bytes | None, expected: bytes | None, rebuild: str) -> list[Violation]:
    if actual == expected:
        return []
    if expected is None:
        return [Violation(path, 0, "I4", "derived file that no rebuild makes from these sources",
                          f"delete it (`{rebuild}` makes every derived file there should be)")]
    if actual is None:
        return [Violation(path, 0, "I4", "derived file deleted, but a rebuild makes it",
                          f"run `{rebuild}` and commit the result")]
    old_lines, new_lines = rules.lines(actual), rules.lines(expected)
    line = next((i + 1 for i, (a, b) in enumerate(zip(old_lines, new_lines)) if a != b),
                min(len(old_lines), len(new_lines)) + 1)
    return [Violation(path, line, "I4", "differs from what a rebuild makes from the sources in this state"
                                        " (edited by hand?)", f"run `{rebuild}` and commit the result; never edit it")]


# ---- modes --------------------------------------------------------------------------------------

def staged(repo: Path, folder: str = "") -> Report:
    base, changes = git.staged_changes(repo, folder)
    against = "HEAD" if base == "HEAD" else "the empty tree"
    if not changes:  # a code-only commit: nothing of the store staged, nothing to read
        return Report("staged", f"the staged changes (against {against})", [Result(None, "", against, [], 0)])
    with Checker(repo, folder) as checker:
        step = Step(changes, GitSource(repo, checker.blobs, None, folder), restore="`git checkout HEAD -- {path}`")
        violations = checker.step(step)
    return Report("staged", f"the staged changes (against {against})",
                  [Result(None, "", against, violations, len(changes))])


def worktree(repo: Path, folder: str = "") -> Report:
    base, changes = git.worktree_changes(repo, folder)
    against = "HEAD" if base == "HEAD" else "the empty tree"
    with Checker(repo, folder) as checker:
        step = Step(changes, WorktreeSource(repo / folder), restore="`git checkout HEAD -- {path}`",
                    worktree=repo / folder)
        violations = checker.step(step)
    return Report("worktree", f"the work tree (against {against})",
                  [Result(None, "", against, violations, len(changes))])


def audit(repo: Path, folder: str = "") -> Report:
    """Every file at HEAD, as if added to an empty store: what a fresh clone would be checked for."""
    tree = git.rev_parse(repo, "HEAD^{tree}")
    if tree is None:
        return Report("all", "HEAD (no commits yet)")
    changes = git.tree_diffs(repo, [(git.EMPTY_TREE, tree)], folder)[0]
    with Checker(repo, folder) as checker, progress.bar(len(changes), "checking", "files") as checker.shown:
        step = Step(changes, GitSource(repo, checker.blobs, "HEAD", folder), restore="`git checkout HEAD -- {path}`",
                    audit=True)
        violations = checker.step(step)
    return Report("all", "every file at HEAD", [Result("HEAD", "", "the empty tree", violations, len(changes))],
                  sorted(checker.stale))


FORCE_PUSH = "force push: the old tip's memory must survive in the new tip"
RECREATED = "re-created branch: the memory of the deleted branch of that name must survive in it"


def commits(repo: Path, revs: Sequence[str], scope: str, rewrites: Iterable[tuple[str, str]] = (),
            mode: str = "range", folder: str = "", recreated: Iterable[tuple[str, str]] = ()) -> Report:
    """Every commit `git log REVS` lists, against each of its parents; then each (old, new) tip
    pair of `rewrites` (and of `recreated`: a deleted tip, a new one) whose old tip the new one
    does not contain, for survival of the old memory."""
    listed = git.commits(repo, *revs)
    trees = {c.sha: c.tree for c in listed}
    inside = [c for c in listed if not c.boundary]
    pairs = []
    for commit in inside:
        for parent in commit.parents or (None,):
            pairs.append((_tree(repo, trees, parent), commit.tree))
    rewritten = [(old, new, FORCE_PUSH) for old, new in rewrites if not git.is_ancestor(repo, old, new)]
    rewritten += [(old, new, RECREATED) for old, new in recreated if not git.is_ancestor(repo, old, new)]
    pairs += [(_tree(repo, trees, old), _tree(repo, trees, new)) for old, new, _ in rewritten]
    listed_diffs = git.tree_diffs(repo, pairs, folder)
    diffs = iter(listed_diffs)
    report = Report(mode, scope)
    with Checker(repo, folder) as checker, \
            progress.bar(sum(map(len, listed_diffs)), f"checking {len(inside)} commits", "files") as checker.shown:
        for commit in inside:
            parents = commit.parents or (git.EMPTY_TREE,)
            per_parent = [next(diffs) for _ in parents]
            # A merge: what it took unchanged from another parent was checked in that parent's commits.
            others = [frozenset(c.path for c in changes) for changes in per_parent[1:]]
            inherited = frozenset(c.path for c in per_parent[0] if any(c.path not in o for o in others))
            found: set[Violation] = set()
            for index, (parent, changes) in enumerate(zip(parents, per_parent)):
                step = Step(changes, GitSource(repo, checker.blobs, commit.sha, folder), prefix=index == 0,
                            restore=f"`git checkout {parent[:12]} -- {{path}}` in a rewrite of this commit",
                            inherited=inherited)
                found.update(checker.step(step))
            report.results.append(Result(commit.sha, commit.subject, ", ".join(p[:12] for p in parents),
                                         sorted(found), sum(map(len, per_parent))))
        for old, new, subject in rewritten:
            changes = next(diffs)
            step = Step(changes, GitSource(repo, checker.blobs, new, folder), prefix=False,
                        restore=f"`git checkout {old[:12]} -- {{path}}` in a new commit, or push without --force")
            report.results.append(Result(new, subject, old[:12], checker.step(step), len(changes)))
    return report


def _tree(repo: Path, trees: Mapping[str, str], rev: str | None) -> str:
    if rev is None:
        return git.EMPTY_TREE
    if rev in trees:
        return trees[rev]
    tree = git.rev_parse(repo, f"{rev}^{{tree}}")
    if tree is None:
        raise MemstackError(f"git has no commit {rev} (a shallow clone? fetch the full history)")
    return tree


def check_range(repo: Path, spec: str, folder: str = "") -> Report:
    """`A..B` (or `A...B`, or one revision: its whole history)."""
    ends = spec.replace("...", "..").split("..")
    if not spec or spec.startswith("-") or any(ch.isspace() for ch in spec) or len(ends) > 2:
        raise MemstackError.marked("bad {arg:--range} {spec!r}: expected A..B (or one revision: its whole history)",
                                   spec=spec)
    for end in ends:
        if end and git.rev_parse(repo, f"{end}^{{commit}}") is None:
            raise MemstackError.marked("bad {arg:--range} {spec!r}: no commit {end!r} in {repo}", spec=spec, end=end,
                                       repo=repo)
    return commits(repo, [spec], f"the commits of {spec}", folder=folder)


def pushed(repo: Path, updates: Sequence[tuple[str, str]], exclude: Sequence[str], mode: str,
           folder: str = "", recreated: Sequence[tuple[str, str]] = ()) -> Report:
    """What a push adds: the new tips' commits not in `exclude` (rev-list arguments) nor in the
    old tips, and the survival of each old tip a new tip does not contain (a force push).
    A deletion (new tip ZERO) is allowed."""
    tips = [new for _, new in updates if not git.is_zero(new)]
    if not tips:
        return Report(mode, "nothing (only deletions)")
    olds = [old for old, new in updates if not git.is_zero(old) and not git.is_zero(new)]
    scope = f"the commits pushed ({', '.join(t[:12] for t in tips)})"
    return commits(repo, [*tips, "--not", *exclude, *olds], scope, [(o, n) for o, n in updates
                                                                     if not git.is_zero(o) and not git.is_zero(n)],
                   mode=mode, folder=folder, recreated=recreated)


def pre_push(repo: Path, environ: Mapping[str, str], folder: str = "") -> Report:
    """pre-commit's pre-push stage: PRE_COMMIT_FROM_REF/TO_REF, or for a push that brings a root
    commit, the local branch's commits on no ref of the remote."""
    source, target = environ.get("PRE_COMMIT_FROM_REF"), environ.get("PRE_COMMIT_TO_REF")
    local, remote = environ.get("PRE_COMMIT_LOCAL_BRANCH"), environ.get("PRE_COMMIT_REMOTE_NAME")
    on_remote = [f"--remotes={remote}"] if remote else []  # commits the remote has were checked when pushed
    if source and target:
        return pushed(repo, [(source, target)], on_remote, "pre-push", folder)
    if local and remote:
        return pushed(repo, [(git.ZERO, local)], on_remote, "pre-push", folder)
    raise MemstackError.marked("{arg:--pre-push} runs in pre-commit's pre-push stage, which sets PRE_COMMIT_FROM_REF"
                               " and PRE_COMMIT_TO_REF (or PRE_COMMIT_LOCAL_BRANCH and PRE_COMMIT_REMOTE_NAME);"
                               " by hand, use {arg:--range} A..B")


def pre_receive(repo: Path, lines: Iterable[str], folder: str = "") -> Report:
    """A server-side pre-receive hook: `old new ref` lines; new refs' commits are those no
    existing ref reaches (the server's refs are not updated until the hook accepts)."""
    updates = []
    for line in lines:
        parts = line.split()
        if not parts:
            continue
        if len(parts) != 3:
            raise MemstackError.marked("{arg:--pre-receive}: expected `old new ref` lines on stdin, got {line!r}",
                                       line=line.strip())
        updates.append(guard.Update(*parts))
    verdict = guard.check(repo, updates, folder)
    report = pushed(repo, [(u.old, u.new) for u in updates], ["--all"], "pre-receive", folder, verdict.survive)
    olds = {u.ref: u.old if not git.is_zero(u.old) else u.new for u in updates}
    report.results += [Result(olds[ref], what, ref, violations) for ref, what, violations in verdict.refused]
    if not report.violations and verdict.remember:
        guard.remember_deletions(repo, verdict.remember)
    return report
