"""What `memstack search` ranks, on small hand-made conversations: a question's answer is not cut off
by the words of the question, its little words, a possessive or a name; and what a hit shows."""

from pathlib import Path

from test_search import ids, intake, noise, search, write

from helpers import memstack


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


def test_records_holding_more_of_the_words_come_first(store: Path) -> None:
    noise(store)
    one = intake(store, "ferry: the ferry, a ferry", "--title", "Ferry")  # one word, but often and in its title
    two = intake(store, "Gina says the keeper painted the lantern room of the lighthouse on a slow Sunday, then she"
                        " walked home by the harbour to rest after a long day of work at the docks with the crew",
                 "--title", "Gina")
    found = search(store, "lighthouse lantern painted ferry")  # no record holds all four
    assert ids(found) == [two, one] and found["matched"] == "any word"
    assert found["hits"][0]["score"] < found["hits"][1]["score"]  # though BM25 alone would put `one` first


def test_pronouns_prepositions_and_punctuation_are_not_required_words(store: Path) -> None:
    noise(store)
    distractor = intake(store, "she talked about it with her team for an hour", "--title", "Dana")
    answer = intake(store, "the archive is kept in a basement vault", "--title", "Dana")
    found = search(store, "Where has she kept her archive, and what about it? Is it in?")
    assert ids(found)[0] == answer and found["matched"] == "all words"  # "archive" is the word that counts
    assert distractor not in ids(found)


def test_a_possessive_is_searched_as_the_name(store: Path) -> None:
    noise(store)
    answer = intake(store, "Caroline paints sunsets over the lake", "--title", "Caroline")
    for query in ("Caroline's paintings", "Caroline’s sunsets?"):
        found = search(store, query)
        assert ids(found) == [answer] and found["matched"] == "all words", query


def test_a_capitalised_word_is_searched_without_its_stem_twin(store: Path) -> None:
    noise(store)
    name = intake(store, "Melanie brought the cake", "--title", "Caroline")
    twin = intake(store, "the melanyment code was filed", "--title", "Caroline")  # porter: "melany", Melanie's twin
    assert ids(search(store, "Melanie")) == [name]
    assert set(ids(search(store, "melanie"))) == {name, twin}  # a lowercase word keeps its twin


def test_a_hit_carries_its_source_and_a_facts_triple(store: Path) -> None:
    fact = write(store, "fact", "add", "--subject", "deploys", "--predicate", "decided", "--object", "monday",
                 "--source", "standup")[0]["id"]
    note = intake(store, "the canary deploys on monday", "--source", "slack")
    hits = {hit["id"]: hit for hit in search(store, "monday")["hits"]}
    assert {key: hits[fact].get(key) for key in ("source", "subject", "predicate", "object")} == {
        "source": "standup", "subject": "deploys", "predicate": "decided", "object": "monday"}
    assert hits[note]["source"] == "slack" and "predicate" not in hits[note]
    shown = memstack("search", "monday", cwd=store)
    assert shown.returncode == 0, shown.stderr
    assert "deploys | decided | monday" in shown.stdout and "source standup" in shown.stdout
    assert "source slack" in shown.stdout
