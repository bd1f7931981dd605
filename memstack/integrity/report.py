"""What a check compares and what it finds: a step (a new state against one base), the violations of
one state (`Result`) and of a whole check (`Report`, what `memstack check --json` prints)."""

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from memstack.integrity.violations import Violation
from memstack.repo.diffs import Change
from memstack.repo.sources import Source


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
    commit: str | None = None  # the commit checked (None: the index or the work tree): whose signature counts
    others: tuple[str, ...] = ()  # a merge's other parents (the index's: MERGE_HEAD); the Binder lines they hold
    memo: dict[str, Any] = field(default_factory=dict, compare=False, repr=False)  # what is derived once a step


STALE = ("stale — differs from a rebuild of the sources; derived files may lag them between promotions, so this"
         " is no violation — `memstack rebuild` (or `memstack sync`) refreshes it")


def stale_line(path: str) -> str:
    """How `check --all` and `rebuild --check` say a derived file lags its sources: one word, one meaning
    (a committed change that no rebuild makes is the I4 violation, worded by `rebuilt.compare`)."""
    return f"{path}: {STALE}"


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
