"""Transaction times may not lie in the future.

A record's transaction time (an intake record's `created_at`, a fact's
`recorded_at` and `expired_at`, a ledger line's `promoted_at`, a Binder
decision's `decided_at`) says when the store learned something: it cannot be
later than the wall clock, give or take the clock skew between the machines of
a team (`clock.max_skew_seconds` in memstack.yaml, default 300, at most one
day). Valid time (`valid_from`, `valid_to`) may lie in the future: a scheduled
decision.

This is the one place besides the command line that reads the wall clock: the
write paths refuse a future transaction time (exit 2, the field named) and the
checks refuse one at commit, in `--range`, at pre-push and pre-receive. There
"now" is the check's own clock, never a commit's date (which anyone can set).
memstack.yaml is read only when a time is later than now, so the common case
costs nothing.
"""

from collections.abc import Callable
from pathlib import Path

from memstack.base import config
from memstack.base.errors import MemstackError, bad
from memstack.base.times import iso, now_ms

TRANSACTION_FIELDS = {"intake": ("created_at",), "fact": ("recorded_at", "expired_at"),
                      "promotion": ("promoted_at",), "binder": ("decided_at",),
                      "tombstone": ("forgotten_at",), "erasure": ("excised_at",)}


class Clock:
    """`now` and the skew allowed beyond it; the skew is asked for only when a time exceeds `now`."""

    def __init__(self, now: int, skew: Callable[[], int]) -> None:
        self.now = now
        self._skew = skew
        self._seconds: int | None = None
        self.allowed = "allowed"  # whose skew it is, as a message says it (`skew` may say another's)

    @property
    def seconds(self) -> int:
        if self._seconds is None:
            self._seconds = self._skew()
        return self._seconds

    def too_late(self, ms: int) -> bool:
        return ms > self.now and ms > self.now + self.seconds * 1000

    def future(self, ms: int) -> str | None:
        """Why `ms` is refused as a transaction time; None: it is not."""
        if not self.too_late(ms):
            return None
        return (f"lies in the future (later than now, {iso(self.now)}, plus the {self.seconds} s clock skew"
                f" {self.allowed}); a transaction time is when the store learned it")

    def problem(self, field: str, ms: int) -> str | None:
        why = self.future(ms)
        return None if why is None else f"{field} {shown(ms)}: {why}"


def shown(ms: int) -> str:
    """A time as a message shows it: ISO-8601, or the number when it is none."""
    try:
        return iso(ms)
    except (OverflowError, ValueError, OSError):
        return str(ms)


def for_store(store: Path) -> Clock:
    """The wall clock with the skew of the store's memstack.yaml (read only if needed)."""
    def skew() -> int:
        try:
            return config.skew_seconds(config.read(store).document)
        except MemstackError:
            return config.DEFAULT_SKEW_SECONDS

    return Clock(now_ms(), skew)


def refuse_future(store: Path, *times: tuple[str, int | None]) -> None:
    """Raise (exit 2) naming the first (field, ms) of `times` that lies in the future."""
    clock: Clock | None = None
    for field, ms in times:
        if type(ms) is not int:
            continue
        if clock is None:
            clock = for_store(store)
        why = clock.future(ms)
        if why:
            raise bad(field, shown(ms), "{why}", why=why)
