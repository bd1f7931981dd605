"""Agent identity files, `identity/<agent>.md`, checked against forbidden patterns (I6).

The patterns come from memstack.yaml, which anyone who can commit may change, and they run in every
commit's hook and in the shared remote's pre-receive. Python's `re` has no time bound: one pattern that
backtracks without end (`(a|aa)+$` on a long line of a's) would hold every later commit and push. The
`regex` package matches the same syntax and stops a search after `TIME_LIMIT` seconds: a pattern that
does not finish is reported as a violation naming it, never waited for; and every pattern over every
identity file of one check shares a BUDGET, so that many such patterns over many files cannot add up to a
wait either (a pattern the budget leaves no time for is reported as not checked: the commit is refused).
"""

import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from memstack.base.errors import MemstackError, bad
from memstack.base.names import check_name
from memstack.integrity.violations import Violation

if TYPE_CHECKING:
    import regex
Patterns = list["regex.Pattern[str]"]  # memstack.yaml's, compiled
TIME_LIMIT = 1.0  # seconds for one pattern over one file (an identity file is a page: microseconds)
BUDGET = 2.0  # seconds for every pattern over every identity file of one check
FIX = ("rewrite that pattern in memstack.yaml identity.forbidden_patterns without nested repetition such as"
       " `(a|aa)+`, then commit it")


class Budget:
    """The time one check's patterns have left (BUDGET from its making)."""

    def __init__(self) -> None:
        self.end = time.monotonic() + BUDGET

    def left(self) -> float:
        return self.end - time.monotonic()


def compile_patterns(patterns: list[str]) -> Patterns:
    import regex  # deferred: ~19 ms to import, only where identity patterns are matched

    compiled: list[Any] = []
    for pattern in patterns:
        try:
            compiled.append(regex.compile(pattern, regex.MULTILINE))
        except (regex.error, OverflowError) as exc:
            raise MemstackError(f"memstack.yaml: bad identity.forbidden_patterns entry {pattern!r}: {exc}") from None
    return compiled


def violations_in(relpath: str, text: str, patterns: Patterns, budget: Budget | None = None) -> list[Violation]:
    """Where `text` matches a forbidden pattern; a pattern that does not finish in its time (TIME_LIMIT, or what
    the check's `budget` has left) is a violation naming it."""
    budget = budget or Budget()
    found = []
    for pattern in patterns:
        left = min(TIME_LIMIT, budget.left())
        if left <= 0:
            found.append(Violation(relpath, 0, "I6", f"forbidden pattern {pattern.pattern!r} was not checked: the"
                                   f" patterns took the {BUDGET:g} s a check gives them all", FIX))
            continue
        try:
            starts = [match.start() for match in pattern.finditer(text, timeout=left)]
        except TimeoutError:
            found.append(Violation(relpath, 0, "I6", f"forbidden pattern {pattern.pattern!r} did not finish within"
                                   f" {left:.3g} s on this file (it backtracks without bound)", FIX))
            continue
        for start in starts:
            line = text.count("\n", 0, start) + 1
            found.append(Violation(relpath, line, "I6", f"matches forbidden pattern {pattern.pattern!r}",
                                   "remove it from the identity file"
                                   " (forbidden in memstack.yaml identity.forbidden_patterns)"))
    return found


def check(store: Path, patterns: list[str], agent: str | None = None) -> list[Violation]:
    compiled = compile_patterns(patterns)
    if agent is not None:
        check_name(agent, "agent")
        files = [store / "identity" / f"{agent}.md"]
        if not files[0].exists():
            raise bad("agent", repr(agent), "no identity/{agent}.md in the store", agent=agent)
    else:
        files = sorted((store / "identity").glob("*.md"))
    found: list[Violation] = []
    budget = Budget()
    for path in files:
        relpath = str(path.relative_to(store))
        try:
            text = path.read_text(encoding="utf-8")
        except UnicodeDecodeError:
            found.append(Violation(relpath, 0, "I7", "is not UTF-8", "save the file as UTF-8"))
            continue
        found.extend(violations_in(relpath, text, compiled, budget))
    return sorted(found)
