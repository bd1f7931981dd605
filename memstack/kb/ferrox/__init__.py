"""The ferrox seed's surface over memstack's fact store (docs/ferrox.md).

- `spellings`: `memstack query memory.fact|memory.recall|memory.capture`, the seed's flags and
  JSON documents, answered by memstack's own fact verbs.
- `storefile`: the seed's fact store file, `{"facts": [...]}`, read as a stream and checked a record at a time.
- `importing`: that file into the store, windows and closings kept, idempotent.

A ferrox fact is exactly these fields; every memstack fact has them too.
"""

FIELDS = ("subject", "predicate", "object", "valid_from", "valid_to", "confidence", "recorded_at")
