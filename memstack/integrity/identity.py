"""Agent identity files, `identity/<agent>.md`, checked against forbidden patterns (I6)."""

import re
from pathlib import Path

from memstack.base.errors import MemstackError, bad
from memstack.base.names import check_name
from memstack.integrity.violations import Violation


def compile_patterns(patterns: list[str]) -> list[re.Pattern[str]]:
    compiled = []
    for pattern in patterns:
        try:
            compiled.append(re.compile(pattern, re.MULTILINE))
        except re.error as exc:
            raise MemstackError(f"memstack.yaml: bad identity.forbidden_patterns entry {pattern!r}: {exc}") from None
    return compiled


def violations_in(relpath: str, text: str, patterns: list[re.Pattern[str]]) -> list[Violation]:
    found = []
    for pattern in patterns:
        for match in pattern.finditer(text):
            line = text.count("\n", 0, match.start()) + 1
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
    for path in files:
        relpath = str(path.relative_to(store))
        try:
            text = path.read_text(encoding="utf-8")
        except UnicodeDecodeError:
            found.append(Violation(relpath, 0, "I7", "is not UTF-8", "save the file as UTF-8"))
            continue
        found.extend(violations_in(relpath, text, compiled))
    return sorted(found)
