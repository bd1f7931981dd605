"""Timestamps: integer milliseconds since the epoch, or ISO-8601 on input; ISO-8601 UTC on output."""

import math
from datetime import UTC, datetime
from functools import lru_cache

from memstack.base.errors import bad
from memstack.base.patterns import lazy

_INT_RE = lazy(r"-?[0-9]+")

# What a timestamp may be anywhere: ISO-8601 output keeps four-digit years, SQLite holds it.
MIN_MS = -30610224000000  # 1000-01-01T00:00:00Z
MAX_MS = 253402300799999  # 9999-12-31T23:59:59.999Z


def _bounded(ms: int, value: object, field: str) -> int:
    if not MIN_MS <= ms <= MAX_MS:
        raise bad(field, repr(value), "must lie between 1000-01-01 and 9999-12-31 (UTC)")
    return ms


EXPECTED = "expected integer milliseconds or ISO-8601 (e.g. 2026-11-30T12:00:00Z)"
EXPECTED_OR_NOW = "expected integer milliseconds, ISO-8601 (e.g. 2026-11-30T12:00:00Z) or now"


def parse_ts(value: object, field: str, expected: str = EXPECTED) -> int:
    """Parse integer ms or ISO-8601 (a time without an offset is UTC) into integer ms."""
    if isinstance(value, bool):
        raise bad(field, repr(value), "expected integer milliseconds or ISO-8601")
    if isinstance(value, int):
        return _bounded(value, value, field)
    if isinstance(value, float):
        if math.isfinite(value) and value == int(value):
            return _bounded(int(value), value, field)
        raise bad(field, repr(value), "expected integer milliseconds or ISO-8601")
    if isinstance(value, str):
        ms = _text_ms(value)
        if ms is not None:
            return _bounded(ms, value, field)
    raise bad(field, repr(value), expected)


@lru_cache(maxsize=4096)  # a promotion reads each record's created_at several times (its key, its fact, its line)
def _text_ms(value: str) -> int | None:
    """The ms of a timestamp given as text (None: not one), not yet bounded."""
    text = value.strip()
    if _INT_RE.fullmatch(text):
        return int(text) if len(text) < 30 else MAX_MS + 1
    try:
        if not text.isascii():
            raise ValueError  # datetime and int() accept other scripts' digits; a timestamp is ASCII
        parsed = datetime.fromisoformat(text.replace("Z", "+00:00").replace("z", "+00:00"))
    except ValueError:
        return None
    if parsed.tzinfo is None:
        parsed = parsed.replace(tzinfo=UTC)
    return int(round(parsed.timestamp() * 1000))


def given_ts(value: object, field: str) -> int:
    """A time a user or an agent gives: `now` (the wall clock, read at this call) or what `parse_ts` takes.

    Only input from the command line and MCP goes through here; records on disk never say `now`."""
    if isinstance(value, str) and value.strip().lower() == "now":
        return now_ms()
    return parse_ts(value, field, EXPECTED_OR_NOW)


def given_or_none(value: object, field: str) -> int | None:
    """`given_ts` for an optional time: None (not given) stays None."""
    return None if value is None else given_ts(value, field)


def iso(ms: int) -> str:
    """ISO-8601 UTC with milliseconds, e.g. 2026-11-30T12:00:00.000Z."""
    moment = datetime.fromtimestamp(ms / 1000, tz=UTC)
    return moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{ms % 1000:03d}Z"


def day(ms: int) -> str:
    """The UTC date YYYY-MM-DD of a timestamp."""
    return _day(ms // 86_400_000)


@lru_cache(maxsize=4096)
def _day(number: int) -> str:
    """The date of a day number (days since 1970): a check or a promotion asks it of 100,000s of
    records, most of them of the same few days, and strftime is most of the cost."""
    return datetime.fromtimestamp(number * 86_400, tz=UTC).strftime("%Y-%m-%d")


def month(ms: int) -> str:
    """The UTC month YYYY-MM of a timestamp."""
    return day(ms)[:7]


def now_ms() -> int:
    """The wall clock; only the command line calls it, never the library's core."""
    return int(datetime.now(tz=UTC).timestamp() * 1000)
