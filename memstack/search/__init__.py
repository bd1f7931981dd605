"""Full-text search across the memory layers: a derived SQLite FTS5 index in `.memstack/search.sqlite3`.

- `records`: what is indexed: which files of each layer, and the searchable records in a file.
- `index`: the index on disk, kept in step with the files incrementally (an appended line is
  indexed, not the store), rebuilt when deleted or corrupt.
- `build`: the index opened for a search; far behind, the search answers from what is built and a
  detached process (`python -m memstack.search STORE`) catches it up.
- `words`: a free-text query's words as FTS5 expressions (stop words, possessives, stem twins).
- `query`: the match, the filters, the ranking (all words, then any) and paging.
- `found`: what a search found: the ranked hits, then those holding only words most records hold,
  unranked and read a page at a time.

docs/search.md is the reference.
"""
