"""What `memstack search` ranks, on small hand-made conversations: a question's answer is not cut off
by the words of the question, its little words, a possessive or a name."""

from pathlib import Path

from test_search import ids, intake, noise, search


def test_when_few_records_hold_every_word_those_holding_any_follow(store: Path) -> None:
    noise(store)
    echo = intake(store, "Caroline, how was the support group?", "--title", "Melanie")
    answer = intake(store, "I went to the LGBTQ support meeting yesterday, it was powerful", "--title", "Caroline")
    found = search(store, "Caroline support group")
    assert ids(found)[0] == echo  # holds every word: first
    assert answer in ids(found) and found["matched"] == "all words, then any word"
    walked, cursor = [], None
    while True:  # the pages cross from the all-words hits to the any-word hits, each hit once
        page = search(store, "Caroline support group", "--limit", "1", *(["--cursor", cursor] if cursor else []))
        walked += ids(page)
        cursor = page["next_cursor"]
        if cursor is None:
            break
    assert walked == ids(found)
    assert search(store, "support unicorn")["matched"] == "any word"  # never empty while a word is in memory
