"""A query's words: each one an FTS5 expression (quoted: never FTS5 syntax), the little words left out.

- Stop words: words most records hold and that say nothing of what a record is about
  (articles, pronouns, prepositions, the verbs of a question: `what did she say about
  it`) are left out of a query that has any other word. The check ignores the
  punctuation around a word ("have?", "(for" are stop words).
- The porter stemmer leaves one family of words on two stems: a final y turns to i
  ("deploys", "deployed", "deploy" are `deploi`) unless a suffix stood after it
  ("deployment" is `deploy`). A one-token word on either stem also matches the other
  (`deploys` is searched as `"deploys" OR "deployment"`, `deployment` as
  `"deployment" OR "deploy"`), so the family finds itself whichever form was written.
"""

import functools
import re
import sqlite3
import threading

from memstack.base.patterns import lazy
from memstack.search import index

STOPWORDS = frozenset("""
a an the this that these those some any each every all both either neither other such own same
i me my mine myself you your yours yourself he him his himself she her hers herself it its itself
we our ours ourselves they them their theirs themselves
am is are was were be been being have has had having do does did doing done will would shall should can could might must
what when where which who whom whose why how
about above across after against along among around at before behind below beneath beside besides
between beyond by during except for from in inside into near of off on onto out outside over per since
than through throughout till to toward towards under until unto upon via with within without
and or but nor so yet if then because while as though although whether
not no too very just also there here ever again else kind kinds type types sort many much
""".split())

_EDGES = lazy(r"^[^\w*]+|[^\w*]+$")  # the punctuation around a word (a trailing * is kept: a prefix)
# A possessive or a short form: "Caroline's" is searched as "Caroline", "she'll" as "she" (a stop word)
_CLITIC = lazy(r"['’](s|m|re|ve|ll|d)$", re.I)


def _stop(core: str) -> bool:
    """A stop word, or a negated short form ("don't", "wasn't")."""
    lower = core.lower().replace("’", "'")
    return lower in STOPWORDS or lower.endswith("n't")


def words(query: str) -> list[str]:
    """The query's words as FTS5 expressions, stop words left out (see the module's doc)."""
    found = []
    given = [(word.endswith("*"), _CLITIC.sub("", _EDGES.sub("", word).rstrip("*"))) for word in query.split()]
    if any(not _stop(core) for _, core in given):
        given = [(prefix, core) for prefix, core in given if not _stop(core)]
    for prefix, core in given:
        held = terms(core)
        if not held:
            continue
        phrase = '"' + core.replace('"', '""') + '"' + (" *" if prefix else "")
        if len(held) == 1 and core.islower():  # a capitalised word may be a name: "Melanie" has no twin
            other = _other_stem(held[0])
            if other is not None:
                phrase = f'({phrase} OR "{other}"{" *" if prefix else ""})'
        found.append(phrase)
    return found


def _other_stem(stem: str) -> str | None:
    """A word whose stem is `stem`'s y/i twin (see the module's doc), or None if there is none."""
    if stem.endswith("i"):
        word, twin = stem[:-1] + "yment", stem[:-1] + "y"
    elif stem.endswith("y"):
        word, twin = stem, stem[:-1] + "i"
    else:
        return None
    return word if word.isalpha() and terms(word) == [twin] else None


_STEMMER: list[sqlite3.Connection] = []
_STEMMING = threading.Lock()


def terms(text: str) -> list[str]:
    """The index's terms for `text` (its tokens, stemmed), from SQLite's own tokenizer."""
    return list(_cached_terms(text))


@functools.lru_cache(maxsize=4096)
def _cached_terms(text: str) -> tuple[str, ...]:
    if not _STEMMER:  # (under the GIL: two threads may both make one; one is kept)
        db = sqlite3.connect(":memory:", check_same_thread=False)
        db.execute(f"CREATE VIRTUAL TABLE words USING fts5(w, tokenize='{index.TOKENIZER}')")
        db.execute("CREATE VIRTUAL TABLE terms USING fts5vocab(words, 'instance')")
        _STEMMER.append(db)
    with _STEMMING:
        db = _STEMMER[0]
        db.execute("DELETE FROM words")
        db.execute("INSERT INTO words (w) VALUES (?)", (text,))
        return tuple(term for (term,) in db.execute("SELECT term FROM terms ORDER BY offset"))
