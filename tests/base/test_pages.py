"""The paging contract every list verb shares (memstack/base/pages.py)."""

import pytest

from memstack.base import pages
from memstack.base.errors import MemstackError
from memstack.base.times import given_ts, now_ms

ONE = {"verb": "test list", "shape": pages.shaped(int)}  # a list whose items are their own key


TEXT = {"verb": "test list", "shape": pages.shaped(str)}


def walk(items, limit, key=lambda i: (i,), descending=False):
    seen, cursor = [], None
    while True:
        got = pages.page(list(items), limit=limit, cursor=cursor, key=key, descending=descending, **ONE)
        seen += got.items
        if got.next_cursor is None:
            assert got.remaining == 0
            return seen
        cursor = got.next_cursor


def test_pages_cover_every_item_once_in_order():
    assert walk(range(23), 5) == list(range(23))
    assert walk(range(20, 0, -1), 7, descending=True) == list(range(20, 0, -1))


def test_a_cursor_survives_appends_between_calls():
    items = [1, 2, 3, 4]
    first = pages.page(items, limit=2, cursor=None, key=lambda i: (i,), **ONE)
    assert first.items == [1, 2] and first.remaining == 2
    items += [5, 6]  # another writer appended meanwhile
    second = pages.page(items, limit=10, cursor=first.next_cursor, key=lambda i: (i,), **ONE)
    assert second.items == [3, 4, 5, 6] and second.next_cursor is None


@pytest.mark.parametrize("limit", [0, -1, "x", 10_001, True])
def test_a_bad_limit_is_refused(limit):
    with pytest.raises(MemstackError, match="bad limit"):
        pages.page([1], limit=limit, cursor=None, key=lambda i: (i,), **ONE)


@pytest.mark.parametrize("cursor", ["not a cursor", "e30", "!!"])
def test_a_bad_cursor_is_refused(cursor):
    with pytest.raises(MemstackError, match="bad cursor"):
        pages.page([1], limit=1, cursor=cursor, key=lambda i: (i,), **ONE)


def test_now_is_a_time_a_user_can_give():
    before = now_ms()
    assert before <= given_ts("now", "valid-from") <= now_ms()
    assert given_ts(" NOW ", "valid-to") >= before
    assert given_ts("2026-11-30T12:00:00Z", "at") == 1796040000000
    with pytest.raises(MemstackError, match="bad at"):
        given_ts("later", "at")


def test_a_byte_budget_ends_a_page_early_but_never_before_its_first_item():
    items = ["a" * 10, "b" * 10, "c" * 100, "d"]
    budget = pages.ENVELOPE_BYTES + 2 * (12 + 1) + 40  # two items of 12 bytes (JSON) and a comma, a cursor
    first = pages.page(items, limit=50, cursor=None, key=lambda i: (i,), max_bytes=budget, **TEXT)
    assert first.items == ["a" * 10, "b" * 10] and first.remaining == 2
    second = pages.page(items, limit=50, cursor=first.next_cursor, key=lambda i: (i,), max_bytes=budget, **TEXT)
    assert second.items == ["c" * 100] and second.remaining == 1  # larger than the budget: alone
    third = pages.page(items, limit=50, cursor=second.next_cursor, key=lambda i: (i,), max_bytes=budget, **TEXT)
    assert third.items == ["d"] and third.next_cursor is None


@pytest.mark.parametrize("budget", [200, 1_000, 4_096, 20_000])
def test_a_page_document_with_its_cursor_and_other_fields_stays_within_the_byte_budget(budget):
    """The whole answer counts: items, commas, the cursor (as long as the last item's key) and the envelope."""
    import orjson

    items = [f"{n:04} " + "x" * (n * 37 % 900) for n in range(300)]
    seen, cursor = [], None
    while True:
        got = pages.page(items, limit=10_000, cursor=cursor, key=lambda i: (i,), **TEXT,
                         max_bytes=pages.room(budget, query="q" * 50))
        document = {**got.document(), "query": "q" * 50}
        assert len(orjson.dumps(document)) <= budget or len(got.items) == 1
        seen += got.items
        cursor = got.next_cursor
        if cursor is None:
            break
    assert seen == items


@pytest.mark.parametrize("key", [["a"], [1, 2], [True], [None], [1.5]])
def test_a_cursor_whose_key_has_another_shape_is_refused_before_any_item_is_read(key):
    forged = pages.encode(key, "test list")

    def items():
        raise AssertionError("read")
        yield 1

    with pytest.raises(MemstackError, match="not a cursor test list handed out"):
        pages.page(items(), limit=1, cursor=forged, key=lambda i: (i,), **ONE)


def test_a_cursor_of_another_verb_is_refused_naming_the_verb():
    theirs = pages.page([1, 2], limit=1, cursor=None, key=lambda i: (i,), verb="soil list", shape=pages.shaped(int))
    with pytest.raises(MemstackError, match="not a cursor test list handed out"):
        pages.page([1, 2], limit=1, cursor=theirs.next_cursor, key=lambda i: (i,), **ONE)


def test_the_items_are_closed_when_a_page_fails_half_way():
    closed = []

    def items():
        try:
            yield 1
            yield 2
        finally:
            closed.append(True)

    def weigh(item):
        raise RuntimeError("boom")

    with pytest.raises(RuntimeError):
        pages.page(items(), limit=1, cursor=None, key=lambda i: (i,), max_bytes=10, weigh=weigh, **ONE)
    assert closed == [True]
