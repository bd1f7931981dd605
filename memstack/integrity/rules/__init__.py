"""The invariants I1-I8 (docs/reference.md) as pure functions of a file's old and new bytes.

Each function looks at one file of one change and returns the violations it finds, every one of them
(capped per file, so a broken generator cannot drown the report). They never read the store: the
checker (integrity/checker.py) hands them the bytes git has, and reads only the files a change touches.

History rules (I1 logs, I2 facts, I3 handoffs) compare a file with its version in a base: the parent
commit, or HEAD for the staged index. They come in two strengths. Against the first parent (or HEAD)
the base must be a *prefix*: logs grow only at the end, old facts keep their lines. Against a merge's
other parents, and against the old tip of a force-pushed branch, the base must only *survive*: each of
its lines (facts: by id) is still there, in the same order (logs), while the other side's records may
be interleaved.

| module | rules |
|---|---|
| `text` | I7 text (UTF-8, final newline, no CR), line helpers |
| `records` | I5 records against their schemas, in their own files |
| `logs` | I1 append-only logs |
| `facts` | I2 supersede, don't delete |
| `sealed` | I3 sealed handoffs; the Binder's filed documents |
| `config` | I5 memstack.yaml (and the I6 patterns it holds) |
| `attributes` | I7 the store's .gitattributes keeps memstack's lines |
| `credentials` | I8 no credentials |
| `bindings` | bound ids, transaction times not in the future, id tags |
"""

from memstack.integrity.rules.attributes import attributes
from memstack.integrity.rules.bindings import FUTURE_FIX, ID_FIX, bindings, tag_clash, transaction_ms
from memstack.integrity.rules.config import config, secrets_policy
from memstack.integrity.rules.credentials import I8_FIX, TEXT_KINDS, redacted, secrets
from memstack.integrity.rules.facts import I2_FIX, closing_problems, dangling, fact_problems, facts, ids_in
from memstack.integrity.rules.logs import I1_FIX, append_only
from memstack.integrity.rules.records import SCHEMA_OF, records, soil, view_json
from memstack.integrity.rules.sealed import I3_FIX, binder_file, filed_document, handoff, sealed_handoff
from memstack.integrity.rules.text import (
           MAX_PER_FILE,
           Numbered,
           appended_lines,
           cap,
           final_newline,
           line_of,
           lines,
           text,
)

__all__ = ["FUTURE_FIX", "I1_FIX", "I2_FIX", "I3_FIX", "I8_FIX", "ID_FIX", "MAX_PER_FILE", "SCHEMA_OF",
           "TEXT_KINDS", "Numbered", "append_only", "appended_lines", "attributes", "binder_file", "bindings", "cap",
           "closing_problems", "config", "dangling", "fact_problems", "facts", "filed_document", "final_newline",
           "handoff", "ids_in", "line_of", "lines", "records", "redacted", "sealed_handoff", "secrets",
           "secrets_policy", "soil", "tag_clash", "text", "transaction_ms", "view_json"]
