"""The fact store's query index: SQLite in `<store>/.memstack/facts.sqlite3`; derived, never the truth.

Every query first brings the index up to date with the fact files, cheaply (base/follow.py): a
file whose (inode, size, mtime, ctime) is unchanged is skipped; a file that grew with the bytes
already indexed intact (their CRC-32 and Adler-32 still match) is read from where the index
stopped; any other change re-reads that file whole; a file that is gone drops its rows. A write
made by memstack tells the index what it changed, so the next query re-reads nothing. Deleting
`.memstack/` is always safe: the next query rebuilds it.

- schema.py: the file, its layout version and tables, a fact line as a row (`line_problem`);
- catchup.py: `sync` with the fact files, and the notes of memstack's own writes
  (`note_append`, `note_rewrite`);
- build.py: `opened` for a query, the detached build when the index is far behind
  (`python -m memstack.kb.index STORE`), `freshness` for `memstack status`;
- answers.py: the lines the rows point at, read and checked; a query retried when one moved;
- queries.py: the queries (`valid_at`, `history`, `recall`, `versions`, `locate`, ...).

The connection cache, WAL journal and layout versioning are base/sqlitecache.py's.
"""
