"""A search ranked by words and meaning: reciprocal-rank fusion of search/query.py's ranking and the model's.

Each ranking gives its best POOL records; a record's fused score is the sum, over the rankings that hold it,
of weight / (k + its rank there) (rank 1 the best): a record both rankings place well rises above one that
only one places first. The words' ranking is search/query.py's, untouched; the meaning's is the cosine of the
query's embedding with each record's (semantic/vectors.py), the same filters applied. Hits keep their
fields; `score` is the fused score. Pages walk the fused list as a search's pages walk BM25's.
"""

from pathlib import Path
from typing import Any

import orjson

from memstack.base import pages
from memstack.base.forgotten import Forgotten
from memstack.search import build, query
from memstack.search.semantic import model, vectors

POOL = 100  # records taken from each ranking
# Chosen on LoCoMo (docs/search.md): on half of the conversations, k and the meaning's weight that gave the
# best mean reciprocal rank. The usual k = 60 with equal weights lost to the words alone at the top of the
# list (29.9 vs 33.5 at @1): the words' first hits are right more often than the model's, so they weigh more.
RRF_K = 2
WORDS_WEIGHT, MEANING_WEIGHT = 1.0, 0.5
MIN_COSINE = 0.3  # a record less like the query than this is not an answer by meaning (unrelated: 0-0.15)
_SHAPE = pages.shaped((int, float), int)  # (minus the fused score, place in the fused list)


def fused(lexical: list[dict[str, Any]], semantic: list[dict[str, Any]], *, k: float = RRF_K,
          weights: tuple[float, float] = (WORDS_WEIGHT, MEANING_WEIGHT)) -> list[dict[str, Any]]:
    """The hits of both rankings (best first each), fused, best first; `score` the fused score."""
    scores: dict[tuple[Any, ...], float] = {}
    hits: dict[tuple[Any, ...], dict[str, Any]] = {}
    for ranking, weight in ((lexical, weights[0]), (semantic, weights[1])):
        for rank, hit in enumerate(ranking, 1):
            key = _key(hit)
            scores[key] = scores.get(key, 0.0) + weight / (k + rank)
            hits.setdefault(key, hit)  # the words' hit first: its snippet marks the words
    order = sorted(scores, key=lambda key: -scores[key])
    return [{**hits[key], "score": round(scores[key], 6)} for key in order]


def _with_unranked(fused_hits: list[dict[str, Any]], lexical: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The fused hits, then the words' unranked hits (`score` 0: found only through words most records hold,
    query.py) that meaning did not find: they carry no rank to fuse, and fused as ranks they would push
    the meaning's answers out of the list."""
    held = {_key(hit) for hit in fused_hits}
    return fused_hits + [{**hit, "score": 0.0} for hit in lexical if hit["score"] <= 0 and _key(hit) not in held]


def _key(hit: dict[str, Any]) -> tuple[Any, ...]:
    return (hit["path"], hit["line"], hit.get("id"), hit.get("section"))


def search(store: Path, text: Any, *, layer: Any = (), agent: Any = None, tier: Any = None, table: Any = None,
           valid_at: Any = None, as_of: Any = None, limit: Any = None, cursor: Any = None,
           max_bytes: int | None = None, k: float = RRF_K) -> dict[str, Any]:
    """The `search --json` document, ranked by words and meaning (query.search's arguments and answer)."""
    filters = {"layer": layer, "agent": agent, "tier": tier, "table": table, "valid_at": valid_at, "as_of": as_of}
    query.checked(store, text, **filters)  # refused before the index is opened
    pages.check_limit(limit)
    asked = query.scope(text, layer, agent, tier, table)
    if cursor not in (None, ""):
        pages.decode(cursor, "search", _SHAPE, query=asked)
    with build.opened(store) as (db, behind):
        words = query.search(store, text, **filters, limit=POOL, opened=(db, behind))
        semantic_db, _ = vectors.DB.repaired(store, lambda sdb: vectors.sync(sdb, store, db))
        near = [pair for pair in vectors.nearest(semantic_db, model.embedder().embed([text])[0], POOL)
                if pair[0] >= MIN_COSINE]
        meaning = query.hits_of(db, near, Forgotten.in_store(store), **filters)
    ranked = list(enumerate(_with_unranked(fused([h for h in words["hits"] if h["score"] > 0], meaning, k=k),
                                           words["hits"])))
    page = pages.page(ranked, limit=limit, cursor=cursor, key=lambda item: (-item[1]["score"], item[0]),
                      verb="search", shape=_SHAPE, weigh=lambda item: len(orjson.dumps(item[1])),
                      max_bytes=pages.room(max_bytes, query=text, matched="all words, then any word",
                                           index=words.get("index")), query=asked)
    return {"query": text, "matched": words["matched"], "hits": [hit for _, hit in page.items], **page.fields(),
            **({"index": words["index"]} if "index" in words else {})}
