"""Progress on long work: a bar on stderr while stderr is a terminal, nothing otherwise.

tqdm draws it (records or files done of total, rate, time left); it turns
itself off when stderr is not a terminal. `--json` (and the MCP server) call
`silence()`, so a document on stdout never comes with a bar beside it.
"""

import sys
from collections.abc import Iterable, Iterator
from typing import Any, TypeVar

T = TypeVar("T")

_silenced = False


def silence() -> None:
    global _silenced
    _silenced = True


class _Unshown:
    """The bar when none is drawn: tqdm is not even imported (~70 ms a process)."""

    def __enter__(self) -> "_Unshown":
        return self

    def __exit__(self, *exc: object) -> None:
        return None

    def update(self, n: int = 1) -> None:
        return None


def bar(total: int | None, what: str, unit: str = "records") -> Any:
    """A context manager with `.update(n)`; a no-op unless stderr is a terminal and nothing silenced it."""
    if _silenced or not sys.stderr.isatty():  # tqdm would draw nothing (its disable=None): not imported
        return _Unshown()
    from tqdm import tqdm  # imported here: short commands never pay for it

    return tqdm(total=total, desc=what, unit=f" {unit}", file=sys.stderr, leave=False, dynamic_ncols=True,
                disable=True if _silenced else None, mininterval=0.2, unit_scale=True)


def each(items: Iterable[T], total: int | None, what: str, unit: str = "records") -> Iterator[T]:
    """`items`, passed through a bar."""
    with bar(total, what, unit) as shown:
        for item in items:
            yield item
            shown.update(1)
