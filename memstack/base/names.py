"""Names of agents, collections and keys (docs/reference.md: store layout)."""

import re
from typing import TypeGuard

from memstack.base.errors import bad

NAME_RE = re.compile(r"[a-z0-9][a-z0-9._-]{0,63}")
NAME_RULE = "^[a-z0-9][a-z0-9._-]{0,63}$"


def is_name(value: object) -> TypeGuard[str]:
    """True for a valid agent, collection or key name (the rule, and no '..' anywhere)."""
    return isinstance(value, str) and NAME_RE.fullmatch(value) is not None and ".." not in value


def check_name(value: object, field: str) -> str:
    """Return `value` if it is a valid name, else raise naming the field and the rule."""
    if not is_name(value):
        raise bad(field, repr(value), "a {field} must match {rule} (and contain no '..')", field=field, rule=NAME_RULE)
    return value
