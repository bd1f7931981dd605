"""Full-text search across the memory layers: a derived SQLite FTS5 index in `.memstack/search.sqlite3`.

- `records`: what is indexed: which files of each layer, and the searchable records in a file.
- `index`: the index on disk, kept in step with the files incrementally (an appended line is
  indexed, not the store), rebuilt when deleted or corrupt.
- `build`: the index opened for a search; far behind, the search answers from what is built and a
  detached process (`python -m memstack.search STORE`) catches it up.
- `query`: a free-text query turned into an FTS5 match, the filters, BM25 ranking and paging.
- `found`: what a search found: the ranked hits, then those holding only words most records hold,
  unranked and read a page at a time.

docs/search.md is the reference.
"""
