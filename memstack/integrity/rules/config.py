"""I5 on memstack.yaml: it parses, validates against its schema, its forbidden patterns compile and its
`secrets:` block is one I8 can use."""

from pathlib import Path
from typing import Any

from memstack.base import config as config_module
from memstack.base.errors import MemstackError
from memstack.base.secrets import Policy, policy
from memstack.integrity import identity
from memstack.integrity.rules.records import schema_problems
from memstack.integrity.rules.text import text
from memstack.integrity.violations import Violation


def config(path: str, data: bytes) -> tuple[list[Violation], identity.Patterns | None]:
    """memstack.yaml parses, validates against its schema, and its forbidden patterns compile."""
    found = text(path, data, lf_only=False)
    if found:
        return found, None
    fix = "fix memstack.yaml (schemas/config.schema.json)"
    try:
        document = config_module.parse(data.decode("utf-8"), path)
    except MemstackError as exc:
        return [Violation(path, 0, "I5", exc.message.removeprefix(f"{path}: "), fix)], None
    problems = schema_problems("config", document)
    if problems:
        return [Violation(path, 0, "I5", f"invalid config: {problems}", fix)], None
    patterns = config_module.Config(Path(path), document).get("identity", "forbidden_patterns")
    try:
        compiled = identity.compile_patterns(list(patterns))
    except MemstackError as exc:
        return [Violation(path, 0, "I5", exc.message.removeprefix("memstack.yaml: "), fix)], None
    try:
        secrets_policy(document)
    except MemstackError as exc:
        return [Violation(path, 0, "I5", f"invalid config: {exc.message}", fix)], None
    return [], compiled


def secrets_policy(document: Any) -> Policy:
    """The `secrets:` block of a parsed memstack.yaml (I8's detectors off, its extra patterns)."""
    return policy(document)
