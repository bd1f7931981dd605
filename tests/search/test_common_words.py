"""Words most records hold: BM25 gives them no weight, so they filter and never rank (search/found.py).
A query made only of them lists its hits unranked, in index order, a page at a time; an ordinary query
ranks exactly as BM25 does."""

import sqlite3
from pathlib import Path

from test_search import INDEX, ids, intake, noise, search


def status_store(store: Path) -> tuple[list[str], str, str]:
    """Six records holding "status" (most of the store), one of them "zebra", and one other zebra."""
    reports = [intake(store, f"status report {n}: all green") for n in range(5)]
    zebra = intake(store, "status report: the zebra crossing is closed", "--title", "zebra")
    other = intake(store, "a zebra was seen near the gate")
    return [*reports, zebra], zebra, other


def test_a_query_of_common_words_only_lists_every_hit_once_unranked_in_index_order(store: Path) -> None:
    holding, _, _ = status_store(store)
    found = search(store, "status")
    assert (ids(found), found["matched"], found["remaining"]) == (holding, "all words", 0)
    assert {hit["score"] for hit in found["hits"]} == {0}
    seen: list[str] = []
    cursor: list[str] = []
    while True:
        page = search(store, "status report", "--limit", "4", *cursor)
        seen += ids(page)
        assert page["remaining"] == len(holding) - len(seen)
        if page["next_cursor"] is None:
            break
        cursor = ["--cursor", page["next_cursor"]]
    assert seen == holding


def test_any_word_ranks_the_other_words_then_lists_the_common_ones(store: Path) -> None:
    holding, zebra, other = status_store(store)
    found = search(store, "status zebra unicorn")
    assert found["matched"] == "any word"
    assert ids(found) == [zebra, other] + [i for i in holding if i != zebra]
    assert [hit["score"] > 0 for hit in found["hits"]] == [True, True] + [False] * 5
    page = search(store, "status zebra unicorn", "--limit", "3")
    assert (ids(page), page["remaining"]) == (ids(found)[:3], 4)
    rest = search(store, "status zebra unicorn", "--cursor", page["next_cursor"])
    assert (ids(rest), rest["remaining"], rest["next_cursor"]) == (ids(found)[3:], 0, None)


def test_an_ordinary_query_ranks_as_bm25_does(store: Path) -> None:
    noise(store, 14)  # no word of the queries is held by half the records
    for n in range(12):
        intake(store, f"the {('billing', 'search', 'deploy')[n % 3]} service {'rollback ' * (n % 4)}in zone {n % 5}",
               "--title", ("rollback", "incident", "plan")[n % 3])
    for query in ("rollback", "billing rollback", "zone 3", "incident service", "calendar sync", "search zone"):
        found = search(store, query, "--limit", "5")
        with sqlite3.connect(store / INDEX) as db:
            refs = [ref for (ref,) in db.execute(
                "SELECT docs.ref FROM fts JOIN docs ON docs.rowid = fts.rowid WHERE fts MATCH ?"
                " ORDER BY bm25(fts, 2.0, 1.0), fts.rowid LIMIT 5", (" AND ".join(f'"{w}"' for w in query.split()),))]
        assert ids(found)[:len(refs)] == refs, query  # those holding every word first, as BM25 ranks them
        assert len(refs) == 5 or found["matched"] == "all words, then any word", query  # then the others
