"""Full-text search across the memory layers: a derived SQLite FTS5 index in `.memstack/search.sqlite3`.

- `records`: what is indexed: which files of each layer, and the searchable records in a file.
- `index`: the index on disk, kept in step with the files incrementally (an appended line is
  indexed, not the store), rebuilt when deleted or corrupt.
- `words`: a free-text query's words as FTS5 expressions (stop words, possessives, stem twins).
- `query`: the match, the filters, the ranking (all words, then any) and paging.

docs/search.md is the reference.
"""
