"""Bounded answers: every verb that lists takes `--limit N` and `--cursor C` and says where to go on.

A cursor is the sort key of the last item handed out, with the name of the verb
that handed it out and, for a verb whose list depends on its arguments (a
subject, a collection, an agent, the words searched), a short hash of those,
written as opaque base64url JSON (`[verb, key]` or `[verb, key, hash]`). A
cursor is taken back only by the verb that made it, only with a key of that
verb's shape (`shaped`: how many parts, of which types) and only for the same
arguments, so a forged or foreign cursor is refused (exit 2) before any item is
read, never compared with an item of another type or of another list (where it
would skip that list's items silently). Continuing skips every item whose key
is not past it in the list's own order, so a cursor is stable under concurrent
appends: no item is handed out twice, and none that existed at the first call
is skipped (items that sort before the cursor after it was made are simply not
shown).

`page(items, limit=, cursor=, key=)` walks an iterable in its order (ascending
keys, or descending with `descending=True`), keeps at most `limit` items and
counts the rest without keeping them.
"""

import base64
import binascii
import hashlib
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

import orjson

from memstack.base.errors import bad

T = TypeVar("T")

MCP_DEFAULT_LIMIT = 50  # what an MCP list tool hands out when the agent gives no limit
MAX_LIMIT = 10_000      # the largest page one call may ask for
MCP_MAX_BYTES = 128 * 1024  # an MCP answer (its document, compact JSON) stops a page before it passes this
ENVELOPE_BYTES = 64  # `{"items":[],"next_cursor":"","remaining":N}` around a page's items and cursor


@dataclass(frozen=True)
class Page(Generic[T]):
    items: list[T]
    next_cursor: str | None  # None: nothing more
    remaining: int           # items after this page (0 when next_cursor is None)

    def fields(self) -> dict[str, Any]:
        """The keys a `--json` document carries beside its items."""
        return {"next_cursor": self.next_cursor, "remaining": self.remaining}

    def document(self, items: list[Any] | None = None) -> dict[str, Any]:
        """A list verb's `--json` document (and its MCP tool's result): `{"items", "next_cursor", "remaining"}`."""
        return {"items": self.items if items is None else items, **self.fields()}


Shape = Callable[[list[Any]], bool]  # whether a decoded key is one the verb's items could have


def shaped(*kinds: type | tuple[type, ...]) -> Shape:
    """A key of exactly these parts, each of its type (or one of its types; a bool is never an int)."""
    allowed = [kind if isinstance(kind, tuple) else (kind,) for kind in kinds]

    def fits(key: list[Any]) -> bool:
        return len(key) == len(allowed) and all(type(part) in types for part, types in zip(key, allowed, strict=True))

    return fits


def _scope(query: Any) -> str | None:
    """What a cursor holds of the arguments its list depends on (None: none): a hash, short and opaque."""
    return None if query is None else hashlib.blake2b(repr(query).encode(), digest_size=6).hexdigest()  # any value


def encode(key: Sequence[Any], verb: str, query: Any = None) -> str:
    return _encoded(key, verb, _scope(query))


def _encoded(key: Sequence[Any], verb: str, scope: str | None) -> str:
    held = [verb, list(key)] if scope is None else [verb, list(key), scope]
    return base64.urlsafe_b64encode(orjson.dumps(held)).decode().rstrip("=")


def decode(cursor: Any, verb: str, shape: Shape, field: str = "cursor", query: Any = None) -> list[Any]:
    """The key of a cursor `verb` handed out for the arguments `query` (what its list depends on, `page`);
    anything else (garbage, another verb's, a key of the wrong shape, another list's) is refused naming
    the verb."""
    try:
        text = cursor.strip()
        found = orjson.loads(base64.urlsafe_b64decode(text + "=" * (-len(text) % 4)))
    except (binascii.Error, ValueError, TypeError, orjson.JSONDecodeError, AttributeError):
        found = None
    if not (isinstance(found, list) and len(found) in (2, 3) and found[0] == verb and isinstance(found[1], list)
            and shape(found[1])):
        raise bad(field, repr(cursor), "not a cursor {verb:" + verb + "} handed out (pass its next_cursor as is)")
    if (found[2] if len(found) == 3 else None) != _scope(query):
        raise bad(field, repr(cursor), "a cursor {verb:" + verb + "} handed out for other arguments: it goes on"
                  " only with the arguments of the call that gave it")
    return found[1]


def check_limit(limit: Any, field: str = "limit") -> int | None:
    """None (no limit) or an integer in 1..MAX_LIMIT; the CLI passes strings, MCP integers."""
    if limit is None:
        return None
    try:
        value = int(limit) if not isinstance(limit, bool) else None
    except (TypeError, ValueError):
        value = None
    if value is None or not 1 <= value <= MAX_LIMIT:
        raise bad(field, repr(limit), "expected a whole number from 1 to {most}", most=MAX_LIMIT)
    return value


def page(items: Iterable[T], *, limit: Any, cursor: str | None, key: Callable[[T], Sequence[Any]], verb: str,
         shape: Shape, descending: bool = False, field: str = "cursor", max_bytes: int | None = None,
         weigh: Callable[[T], int] | None = None, uncounted: int = 0, query: Any = None) -> Page[T]:
    """At most `limit` items of `items` past `cursor`, in the iterable's order; `verb` names the verb (its
    cursors carry it), `shape` says which keys its items have (`shaped`), `query` the arguments the list
    depends on (its cursors carry a hash of their repr; None: none).

    With `max_bytes`, the page also ends before its document (`Page.document` as compact JSON: the items'
    sizes, `weigh`, default their JSON, a comma each, the cursor and ENVELOPE_BYTES) would pass it (`room`
    takes a document's other fields off first), but it always holds one item, so a caller can walk past an
    item larger than the budget.
    `uncounted`: items after all of `items`, counted elsewhere (a list read from SQL a page at a time).
    `items` is closed when the page is made, or fails (a generator reading an index ends its read)."""
    size = check_limit(limit)
    after = None if cursor in (None, "") else decode(cursor, verb, shape, field, query)
    try:
        return _page(iter(items), size, after, key, verb, descending, max_bytes, weigh, uncounted, _scope(query))
    finally:
        close = getattr(items, "close", None)
        if close is not None:
            close()


def _page(items: Iterator[T], size: int | None, after: list[Any] | None, key: Callable[[T], Sequence[Any]],
          verb: str, descending: bool, max_bytes: int | None, weigh: Callable[[T], int] | None,
          uncounted: int, scope: str | None) -> Page[T]:
    kept: list[T] = []
    remaining = uncounted
    used, full = ENVELOPE_BYTES, False
    for item in items:
        if after is not None:
            k = list(key(item))
            if (k <= after) if not descending else (k >= after):
                continue
        if not full and max_bytes is not None and (size is None or len(kept) < size):
            used += (weigh or _json_size)(item) + 1  # its comma
            full = used + len(_encoded(key(item), verb, scope)) > max_bytes and bool(kept)  # with it last, its cursor
        if not full and (size is None or len(kept) < size):
            kept.append(item)
        else:
            full = True
            remaining += 1
    more = remaining > 0 and kept
    return Page(kept, _encoded(key(kept[-1]), verb, scope) if more else None, remaining)


def room(max_bytes: int | None, **fields: Any) -> int | None:
    """What is left of a byte budget for a page whose document also holds `fields` (None: no budget)."""
    return None if max_bytes is None else max_bytes - len(orjson.dumps(fields))


def _json_size(item: Any) -> int:
    return len(orjson.dumps(item))
