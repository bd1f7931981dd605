"""Forgotten records in the search index (docs/forgetting.md): the index never holds their text.

A record read for the index while it is forgotten enters it as `[forgotten: reason]` (`shown`); one
indexed before its tombstone was written has its text replaced once (`scrub`), and the `forgotten` table
remembers which records were scrubbed and the marker they show, so every later search pays one look at the
tombstone files. A tombstone that is gone again (a forget undone before its commit, a checkout of a branch
without it) gives its record back: the files holding it are read again (`restored`).
"""

import sqlite3
from collections.abc import Iterable, Iterator
from pathlib import Path

from memstack.base.forgotten import Forgotten, marker
from memstack.search.records import Doc

# The records (tombstones' `forgets`) scrubbed, and the marker each shows.
TABLE = "CREATE TABLE forgotten (ref TEXT PRIMARY KEY, shown TEXT NOT NULL)"
LAYER = {"intake": "intake", "fact": "facts", "soil": "soil"}
SHOWN_IN = {**LAYER, "handoff": "handoffs"}  # the layer a hit of each kind of forgotten record is in


def shown(forgotten: Forgotten, relpath: str, docs: Iterable[Doc]) -> Iterator[Doc]:
    """The records of one file as the index takes them: a forgotten one's head and body its marker, and
    none of its fields (source; a fact's subject, predicate and object)."""
    if not forgotten:
        yield from docs
        return
    whole = forgotten.reason(relpath)  # a forgotten handoff: every section of it
    for doc in docs:
        reason = whole if whole is not None else forgotten.reason(doc.ref)
        yield doc if reason is None else doc._replace(head=marker(reason), body=marker(reason), fields=None)


def _marker(tombstone: dict[str, object]) -> str:
    return marker(str(tombstone.get("reason", "")))


def unshown(forgotten: Forgotten, layer: str, ref: str, relpath: str, head: str) -> bool:
    """Whether a hit is of a record forgotten now (a handoff: its file) that the index still holds as it was,
    not as its marker: a search answering from an index a build is catching up (build.py) scrubs nothing,
    so each hit is looked up in the store's tombstones as they are and such a hit is left out."""
    tombstone = forgotten.by_id.get(relpath if layer == "handoffs" else ref) if forgotten else None
    if tombstone is None or SHOWN_IN.get(str(tombstone.get("kind"))) != layer:
        return False
    return head != _marker(tombstone)


def unscrubbed(db: sqlite3.Connection, forgotten: Forgotten) -> list[str]:
    """The forgotten records the index may still hold the text of, or shows with another reason."""
    if not forgotten:
        return []
    done = dict(db.execute("SELECT ref, shown FROM forgotten"))
    return [ref for ref, tombstone in forgotten.by_id.items() if done.get(ref) != _marker(tombstone)]


def restored(db: sqlite3.Connection, forgotten: Forgotten) -> list[str]:
    """The records scrubbed from the index that no tombstone forgets any more."""
    return [ref for (ref,) in db.execute("SELECT ref FROM forgotten") if ref not in forgotten]


def scrub(db: sqlite3.Connection, store: Path, forgotten: Forgotten, refs: list[str]) -> None:
    """Replace the text of `refs` in the index by their markers (inside the caller's write transaction), then
    merge the full-text index's segments, freed pages zeroed, so no byte of the old text stays in the file
    (`checkpoint` after the transaction empties the write-ahead log too)."""
    if not refs:
        return
    db.execute("PRAGMA secure_delete = ON")
    for ref in refs:
        tombstone = forgotten.by_id[ref]
        text = _marker(tombstone)
        if tombstone.get("kind") == "handoff":
            rows = db.execute("SELECT docs.rowid FROM docs JOIN files ON files.file_id = docs.file_id"
                              " WHERE files.relpath = ?", (ref,)).fetchall()
        else:
            rows = db.execute("SELECT rowid FROM docs WHERE ref = ? AND layer = ?",
                              (ref, LAYER.get(str(tombstone.get("kind")), ""))).fetchall()
        db.executemany("UPDATE fts SET head = ?, body = ? WHERE rowid = ?", ((text, text, r) for (r,) in rows))
        db.executemany("UPDATE docs SET fields = NULL WHERE rowid = ?", rows)  # a hit's source, subject, object
        _resigned(db, [r for (r,) in rows], text)
        db.execute("INSERT OR REPLACE INTO forgotten VALUES (?, ?)", (ref, text))
    db.execute("DELETE FROM terms")  # the words' counts (query.py) name the words: counted again on the next search
    db.execute("INSERT INTO fts (fts) VALUES ('optimize')")


def _resigned(db: sqlite3.Connection, rowids: list[int], text: str) -> None:
    """Give scrubbed rows the checksum of the record as `shown` makes it (its marker): a file read again keeps
    them, and the vectors of semantic search (semantic/vectors.py, which follow the checksums) embed the marker
    anew, so a forgotten record is no more found by the meaning of what it said."""
    for rowid in rowids:
        ref, agent, tier, tbl, valid_from, recorded_at = db.execute(
            "SELECT ref, agent, tier, tbl, valid_from, recorded_at FROM docs WHERE rowid = ?", (rowid,)).fetchone()
        doc = Doc(0, ref, agent, tier, tbl, valid_from, None, recorded_at, None, text, text)
        db.execute("UPDATE docs SET sig = ? WHERE rowid = ?", (doc.sig(), rowid))


def checkpoint(db: sqlite3.Connection) -> None:
    """Write the log into the database and truncate it (after a scrub: the log holds the old pages)."""
    db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
