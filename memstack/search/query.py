"""A search: free text turned into an FTS5 match, the filters, BM25 ranking, paging.

Free text never reaches FTS5 as syntax: each word (split on white space) becomes
a quoted phrase (`foo-bar` the phrase "foo bar", `"` or `AND` plain text), a
trailing `*` keeps its meaning of a prefix, and a word with no letter or digit
is dropped. The records holding every word come first; when fewer than FEW do
(after the filters), the records holding any of the words follow them, those
holding more of the words first, so an answer a question's other words missed
is not cut off: the answer says which (`matched`: `all words`, `all words, then
any word`, or `any word`).

Ranking is FTS5's BM25 with the record's head (a fact's subject, an intake
title, a handoff section's heading, a SOIL record's collection/key) weighted
twice its body; `score` is minus BM25 (higher is better).

Paging: hits sort by (how many of the words the record lacks, BM25, rowid of the
record in the index); a cursor is that key of the last hit handed out (pages.py). The rowid of a record never changes
while the record does not, so between pages of an index that did not change
nothing is repeated or skipped. BM25 scores depend on the whole index (how many
records hold a word), so when records are added between two pages every score
moves a little: a hit whose score crossed the cursor may then be repeated or
skipped. A new first page is exact again.

The bi-temporal filters reuse the fact index's rules (kb/index/queries.py's
VALID and VALID_AS_OF, facts.believed_at): `valid_at` keeps the facts valid then (other
layers have no validity window and are left out); `as_of` keeps what the store
knew at that transaction time: facts recorded by then and not closed as known
then (with `valid_at` too: valid at valid_at as the store believed at as_of),
with the window shown as known then; intake records created by then, handoffs
dated by then, SOIL records last changed by then.
"""

import sqlite3
from contextlib import nullcontext
from pathlib import Path
from typing import Any

import orjson

from memstack.base import limits, pages
from memstack.base.errors import bad
from memstack.base.forgotten import Forgotten
from memstack.base.names import check_name
from memstack.base.times import given_ts, iso
from memstack.intake import log as intake
from memstack.kb import facts
from memstack.kb.index.queries import VALID, VALID_AS_OF
from memstack.search import build, forgotten, index, records
from memstack.search.found import Found, Row
from memstack.search.words import terms, words

MARK = ("**", "**")  # around each matched word of a snippet (Markdown bold)
SNIPPET_TOKENS = 16
HEAD_WEIGHT, BODY_WEIGHT = 2.0, 1.0
_RANK = f"bm25(fts, {HEAD_WEIGHT}, {BODY_WEIGHT})"
FEW = 50  # fewer records than this hold every word: those holding any word follow them
_KNOWN_AS_OF = "recorded_at <= :as_of AND (expired_at IS NULL OR expired_at > :as_of)"


def check_query(query: Any, field: str = "query") -> str:
    if not isinstance(query, str) or not query.strip():
        raise bad(field, repr(query), "give the words to search for")
    return query


def _filters(layers: Any, agent: Any, tier: Any, table: Any, valid_at: Any, as_of: Any
             ) -> tuple[list[str], dict[str, Any], int | None]:
    """SQL conditions on `docs` and their parameters; also as_of as ms (the window is shown as known then)."""
    where: list[str] = []
    params: dict[str, Any] = {}
    chosen = list(layers or ())
    for layer in chosen:
        if layer not in records.LAYERS:
            raise bad("layer", repr(layer), "must be one of {layers}", layers=", ".join(records.LAYERS))
    if chosen:
        where.append("layer IN ({})".format(", ".join(f"'{layer}'" for layer in sorted(set(chosen)))))
    if agent is not None:
        where.append("agent = :agent")
        params["agent"] = check_name(agent, "agent")
    if tier is not None:
        if tier not in intake.TIERS:
            raise bad("tier", repr(tier), "must be one of {tiers}", tiers=", ".join(intake.TIERS))
        where.append("tier = :tier")
        params["tier"] = tier
    if table is not None:
        if table not in facts.TABLES:
            raise bad("table", repr(table), "must be one of {tables}", tables=", ".join(facts.TABLES))
        where.append("tbl = :table")
        params["table"] = table
    ts = None if valid_at is None else given_ts(valid_at, "valid-at")
    known = None if as_of is None else given_ts(as_of, "as-of")
    if ts is not None:
        rule = VALID if known is None else VALID_AS_OF
        where.append(f"layer = 'facts' AND {rule}")
    elif known is not None:
        where.append(f"((layer = 'facts' AND {_KNOWN_AS_OF}) OR (layer != 'facts' AND recorded_at <= :as_of))")
    params.update(ts=ts, as_of=known)
    return where, params, known


def checked(store: Path, query: Any, *, layer: Any, agent: Any, tier: Any, table: Any, valid_at: Any,
            as_of: Any) -> tuple[list[str], dict[str, Any], int | None]:
    """The query and the filters checked (a bad one refused before any read; a long query never searched):
    the filters' SQL conditions, their parameters and as_of in ms."""
    check_query(query)
    limits.check_text(store, "query", query, "query_bytes")
    return _filters(layer, agent, tier, table, valid_at, as_of)


def scope(text: Any, layer: Any, agent: Any, tier: Any, table: Any) -> list[Any]:
    """What a search's list depends on, which its cursors are bound to (pages.py): the words and the filters
    (not the times: `now` is another instant on every page)."""
    return [text, sorted(layer) if isinstance(layer, (list, tuple)) else layer, agent, tier, table]


def search(store: Path, query: Any, *, layer: Any = (), agent: Any = None, tier: Any = None, table: Any = None,
           valid_at: Any = None, as_of: Any = None, limit: Any = None, cursor: Any = None,
           max_bytes: int | None = None, opened: tuple[sqlite3.Connection, Any] | None = None) -> dict[str, Any]:
    """The `search --json` document: {query, matched, hits, next_cursor, remaining}; with `max_bytes`, a page
    ends before the document (compact JSON) would pass it (pages.py), one hit at least. `opened`: the index
    as `build.opened` gave it to a caller that reads it further (the fusion), else opened here."""
    where, params, known = checked(store, query, layer=layer, agent=agent, tier=tier, table=table,
                                   valid_at=valid_at, as_of=as_of)
    phrases = words(query)
    size = pages.check_limit(limit)
    asked = scope(query, layer, agent, tier, table)
    after = None if cursor in (None, "") else pages.decode(cursor, "search", _SHAPE, query=asked)  # before any read
    with nullcontext(opened) if opened is not None else build.opened(store) as (db, behind):
        common = index.common(db, [t for p in phrases for t in _phrase_terms(p)])
        rare = [p for p in phrases if not set(_phrase_terms(p)) & common]  # the words that rank
        found, matched = _all_words(db, phrases, rare, bool(common), where, params), "all words"
        if len(phrases) > 1 and found.few(FEW):
            more = _any_word(db, phrases, rare, where, params, tail=not found)
            held = {row[2] for row in found.ranked}
            more.ranked = [row for row in more.ranked if row[2] not in held]
            if more:
                matched = "all words, then any word" if found else "any word"
                found = more.after(found.ranked)
        rows = found.rows(after, size)
        made = _Hits(db, " OR ".join(phrases), rows, known, Forgotten.in_store(store))
        page = pages.page(rows, limit=limit, cursor=cursor, key=lambda row: row, verb="search", shape=_SHAPE,
                          max_bytes=pages.room(max_bytes, query=query, matched="all words, then any word",
                                               index=behind),
                          weigh=made.size, uncounted=found.uncounted, query=asked)
        hits = made.of(page.items)
    return {"query": query, "matched": matched, "hits": hits, **page.fields(), **({"index": behind} if behind else {})}


class _Hits:
    """The hits of ranked rows, made a chunk at a time only for rows a page weighs or hands out."""

    CHUNK = 64

    def __init__(self, db: sqlite3.Connection, match: str, rows: list[Row], as_of: int | None, gone: Forgotten):
        self.db, self.match, self.rows, self.as_of, self.gone = db, match, rows, as_of, gone
        self.made: dict[Row, dict[str, Any] | None] = {}
        self.at: dict[Row, int] | None = None  # a row's place, once a page weighs one

    def size(self, row: Row) -> int:
        if row not in self.made:
            self.at = self.at if self.at is not None else {r: n for n, r in enumerate(self.rows)}
            self._make(self.rows[self.at[row]:self.at[row] + self.CHUNK])
        hit = self.made[row]
        return 0 if hit is None else len(orjson.dumps(hit))

    def of(self, rows: list[Row]) -> list[dict[str, Any]]:
        self._make([row for row in rows if row not in self.made])
        return [hit for hit in (self.made[row] for row in rows) if hit is not None]

    def _make(self, rows: list[Row]) -> None:
        found = _details(self.db, self.match, [row[1:] for row in rows], self.as_of, self.gone)
        self.made.update((row, found.get(row[2])) for row in rows)


def _all_words(db: sqlite3.Connection, phrases: list[str], rare: list[str], any_common: bool, where: list[str],
               params: dict[str, Any]) -> Found:
    """Hits holding every word, ranked. A word most records hold (common: not in `rare`) weighs nothing in
    BM25, yet BM25 counts every record holding it: such words only filter (cheap), the others rank (found.py)."""
    if not any_common:
        return Found(db, _tier(_ranked(db, " AND ".join(phrases), where, params), 0))
    if not rare:
        return Found(db, [], " AND ".join(phrases), where, params)
    holding = {rowid for (rowid,) in db.execute("SELECT rowid FROM fts WHERE fts MATCH ?", (" AND ".join(phrases),))}
    return Found(db, _tier([row for row in _ranked(db, " AND ".join(rare), where, params) if row[1] in holding], 0))


def _any_word(db: sqlite3.Connection, phrases: list[str], rare: list[str], where: list[str],
              params: dict[str, Any], *, tail: bool) -> Found:
    """Hits holding any word, those holding more of the words first (each (1 + how many of the ranked
    words they lack, BM25, rowid): after those holding every word). A word most records hold (`common`)
    does not rank (it is not in `rare`); with `tail` (no record holds every word), the records holding only
    such words follow, unranked (found.py); a list topped up after the records holding every word leaves
    them out (they would add most of the store)."""
    if not rare:
        return Found(db, [], " OR ".join(phrases), where, params)
    found = _ranked(db, " OR ".join(rare), where, params)
    holding = [{r for (r,) in db.execute("SELECT rowid FROM fts WHERE fts MATCH ?", (p,))} for p in rare]
    ranked = sorted((1 + sum(rowid not in held for held in holding), score, rowid) for score, rowid in found)
    held = [p for p in phrases if p not in rare]
    rest = f"({' OR '.join(held)}) NOT ({' OR '.join(rare)})" if held and tail else None
    return Found(db, ranked, rest, where, params)


def _tier(rows: list[tuple[float, int]], tier: int) -> list[Row]:
    return [(tier, score, rowid) for score, rowid in rows]


def _phrase_terms(phrase: str) -> list[str]:
    """The single index terms of a query phrase (a one-token word and its twin); [] for a longer phrase."""
    found = []
    for quoted in phrase.strip("()").split(" OR "):
        if quoted.endswith(" *"):
            return []
        held = terms(quoted.strip('"').replace('""', '"'))
        if len(held) != 1:
            return []
        found += held
    return found


_SHAPE = pages.shaped(int, (int, float), int)  # a cursor: the Row of the last hit handed out
_PREFIX = '" *'  # how a prefix word ends in a match (words.py); a quoted word holds no space


def _ranked(db: sqlite3.Connection, match: str, where: list[str], params: dict[str, Any]) -> list[tuple[float, int]]:
    if not match:
        return []
    conditions = "".join(f" AND {w}" for w in where)
    sql = (f"SELECT {_RANK}, fts.rowid FROM fts JOIN docs ON docs.rowid = fts.rowid"
           f" WHERE fts MATCH :match{conditions} ORDER BY 1, 2")
    try:
        return [(score, rowid) for score, rowid in db.execute(sql, {**params, "match": match})]
    except sqlite3.OperationalError as exc:  # quoting makes this unreachable; never show FTS5's words to a user
        raise bad("query", None, "it cannot be searched ({exc})", exc=exc) from None


def _details(db: sqlite3.Connection, match: str, rows: list[tuple[float, int]], as_of: int | None,
             gone: Forgotten) -> dict[int, dict[str, Any]]:
    """The hit of each row (by rowid) the index still holds, but a record forgotten since it was indexed
    (`forgotten.unshown`)."""
    if not rows:
        return {}
    marks = ", ".join(str(rowid) for _, rowid in rows)
    # FTS5 looks each rowid of `rowid IN` up in the match: for a word, a seek in its list; for a prefix, a merge
    # of the lists of every term it begins, made again for each hit (14 ms a hit at 200,000 records). `+rowid`
    # keeps the rowids from FTS5: it walks the match once and SQLite keeps the rows asked for.
    rowid = "+fts.rowid" if _PREFIX in match else "fts.rowid"
    found = {r[0]: r for r in db.execute(
        f"SELECT fts.rowid, snippet(fts, -1, '{MARK[0]}', '{MARK[1]}', '…', {SNIPPET_TOKENS}), fts.head,"
        " docs.layer, docs.ref, docs.line, docs.agent, docs.tier, docs.tbl, docs.valid_from, docs.valid_to,"
        " docs.recorded_at, docs.expired_at, files.relpath, docs.fields FROM fts JOIN docs ON docs.rowid = fts.rowid"
        f" JOIN files ON files.file_id = docs.file_id WHERE fts MATCH :match AND {rowid} IN ({marks})",
        {"match": match})}
    return {rowid: _hit(found[rowid], score, as_of) for score, rowid in rows if rowid in found
            and not _unshown(gone, found[rowid])}


def _unshown(gone: Forgotten, row: tuple[Any, ...]) -> bool:
    """Whether a row (as _details and hits_of read it) holds the text of a record forgotten since."""
    return forgotten.unshown(gone, row[3], row[4], row[13], row[2])


def _hit(row: tuple[Any, ...], score: float, as_of: int | None) -> dict[str, Any]:
    (_, snippet, head, layer, ref, line, agent, tier, tbl, valid_from, valid_to, recorded_at, expired_at,
     relpath, fields) = row
    hit: dict[str, Any] = {"layer": layer, "path": relpath, "line": line,
                           "where": relpath if layer == "soil" else f"{relpath}:{line}",
                           "title": head, "snippet": snippet, "score": round(-score, 6) + 0.0, "agent": agent}
    if layer == "handoffs":
        hit["section"] = ref
    else:
        hit["id"] = ref
    if tier is not None:
        hit["tier"] = tier
    if fields is not None:
        hit.update(orjson.loads(fields))  # source; a fact's subject, predicate, object
    if layer == "facts":
        hit["table"] = tbl
        window = {"recorded_at": recorded_at, "expired_at": expired_at, "valid_to": valid_to, "superseded_by": None}
        if as_of is not None:
            window = facts.believed_at(window, as_of) or window
        hit.update(valid_from=valid_from, valid_to=window["valid_to"], valid_from_iso=iso(valid_from),
                   valid_to_iso=None if window["valid_to"] is None else iso(window["valid_to"]))
    return hit


def hits_of(db: sqlite3.Connection, ranked: list[tuple[float, int]], gone: Forgotten, *, layer: Any = (),
            agent: Any = None, tier: Any = None, table: Any = None, valid_at: Any = None, as_of: Any = None
            ) -> list[dict[str, Any]]:
    """The hits of records ranked some other way ((score, rowid), best first: semantic/fuse.py), those the
    filters keep, in that order, but a record forgotten since it was indexed (`gone`: the store's tombstones);
    `score` as given, the snippet the record's first words."""
    where, params, known = _filters(layer, agent, tier, table, valid_at, as_of)
    if not ranked:
        return []
    marks = ", ".join(str(rowid) for _, rowid in ranked)
    conditions = "".join(f" AND {w}" for w in where)
    found = {r[0]: r for r in db.execute(
        "SELECT fts.rowid, fts.body, fts.head, docs.layer, docs.ref, docs.line, docs.agent, docs.tier, docs.tbl,"
        " docs.valid_from, docs.valid_to, docs.recorded_at, docs.expired_at, files.relpath, docs.fields FROM fts"
        " JOIN docs ON docs.rowid = fts.rowid JOIN files ON files.file_id = docs.file_id"
        f" WHERE fts.rowid IN (SELECT rowid FROM docs WHERE rowid IN ({marks}){conditions})", params)}
    hits = []
    for score, rowid in ranked:
        if rowid in found and not _unshown(gone, found[rowid]):
            body = found[rowid][1].split()
            opening = " ".join(body[:SNIPPET_TOKENS]) + ("…" if len(body) > SNIPPET_TOKENS else "")
            hits.append(_hit((rowid, opening, *found[rowid][2:]), -score, known))
    return hits
