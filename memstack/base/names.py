"""Names of agents, collections and keys (docs/reference.md: store layout)."""

from typing import TypeGuard

from memstack.base.errors import bad
from memstack.base.patterns import lazy

NAME_RE = lazy(r"[a-z0-9][a-z0-9._-]{0,63}")
NAME_RULE = "^[a-z0-9][a-z0-9._-]{0,63}$"


# C0 and C1 control characters and DEL: newline, carriage return, escape (a terminal's commands) ...
CONTROL = lazy("[\x00-\x1f\x7f-\x9f]")


def check_printable(value: object, field: str) -> None:
    """Refuse text holding a control character (it is printed on terminals, where one rewrites the screen)."""
    if isinstance(value, str) and CONTROL.search(value):
        raise bad(field, repr(value), "holds a control character (newline, carriage return, escape, ...):"
                  " a name is printed on terminals, where one can rewrite the screen")


def is_name(value: object) -> TypeGuard[str]:
    """True for a valid agent, collection or key name (the rule, and no '..' anywhere)."""
    return isinstance(value, str) and NAME_RE.fullmatch(value) is not None and ".." not in value


def check_name(value: object, field: str) -> str:
    """Return `value` if it is a valid name, else raise naming the field and the rule."""
    if not is_name(value):
        article = "an" if field[:1] in "aeiou" else "a"
        raise bad(field, repr(value), article + " {field} must match {rule} (and contain no '..')", field=field,
                  rule=NAME_RULE)
    return value
