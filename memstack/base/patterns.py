"""Regular expressions compiled on first use.

Every `memstack` command is a process of its own, and an agent runs many. Compiling the expressions
memstack's modules define at import was about a tenth of a command's start (45 M of the 386 M
instructions `memstack recall` executes, measured with callgrind), though a command uses few of them.
`lazy(...)` stands where `re.compile(...)` stood: the expression is compiled when it is first used,
and from then on its methods are the compiled pattern's own, found on the instance (a hot loop pays
nothing for the delay). A bad expression is found on first use, not at import: the tests use them all.
"""

import re
from typing import Any, AnyStr, cast

# What memstack asks of a pattern; each is copied onto the instance from the compiled one.
_COPIED = ("search", "match", "fullmatch", "split", "findall", "finditer", "sub", "subn", "pattern", "flags",
         "groups", "groupindex")


class _Delayed:
    def __init__(self, pattern: Any, flags: int) -> None:
        self._given = (pattern, flags)

    def __getattr__(self, name: str) -> Any:  # only for what the instance does not hold yet
        if name.startswith("_"):
            raise AttributeError(name)  # not a pattern's: copy and pickle probing, `_given` before it is set
        compiled = re.compile(*self._given)
        for copied in _COPIED:
            setattr(self, copied, getattr(compiled, copied))
        return getattr(compiled, name)


def lazy(pattern: AnyStr, flags: int = 0) -> re.Pattern[AnyStr]:
    """`re.compile(pattern, flags)`, made when first used."""
    return cast(re.Pattern[AnyStr], _Delayed(pattern, flags))
