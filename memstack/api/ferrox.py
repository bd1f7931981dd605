"""The ferrox seed's `query memory.<verb>` forms, answered by memstack's own fact verbs.

Each function takes the command line's values, calls the `*_document` function of the
memstack verb that does the work (one implementation), and returns the document the
seed returns:

| form | document |
|------|----------|
| `memory.fact --op add` | the fact added |
| `memory.fact --op get-valid-at` | the facts valid at `--ts` |
| `memory.fact --op history` | every version of the subject, `recorded_at` ascending |
| `memory.fact --op invalidate` | the last fact closed, or null when none was open |
| `memory.recall` | recall's facts, `recorded_at` descending, at most the limit |
| `memory.capture` | the fact added (`supersedes` names what `--contradicts` closed) |

As in the seed, reading from where there is no store answers nothing (a note on stderr says so).
"""

from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

from memstack.api.capture import capture_document
from memstack.api.fact import add_document, get_valid_at_document, history_document, invalidate_document
from memstack.api.recall import recall_document
from memstack.base import pages
from memstack.base.output import note
from memstack.base.times import given_ts
from memstack.kb import facts, factstore
from memstack.kb.facts import Fact
from memstack.kb.ferrox import importing, storefile
from memstack.kb.readers import FileReader
from memstack.repo.store import Store, locate, open_store, resolve_agent

# The same on every clone, so two clones importing one file write the same lines (merged as one).
SOURCE = "ferrox"


def _ts(value: Any, field: str) -> int | None:
    return None if value is None else given_ts(value, field)


def _confidence(value: Any) -> Any:
    return "1.0" if value is None else value


def _no_store(store: str | None) -> bool:
    """True (and a note on stderr) when nothing names a store and none is around: reads answer nothing."""
    if locate(store) is not None:
        return False
    note("memstack: no memstack store here: nothing to read (pass --store PATH or set MEMSTACK_HOME)")
    return True


def add(store: str | None, *, subject: Any, predicate: Any, object: Any, valid_from: Any, recorded_at: Any,
        confidence: Any = None, agent: str | None = None) -> Fact:

    [fact] = add_document(open_store(store), subject=subject, predicate=predicate, object=object,
                          valid_from=_ts(valid_from, "valid-from"), recorded_at=_ts(recorded_at, "recorded-at"),
                          confidence=_confidence(confidence), agent=agent)
    return fact


def get_valid_at(store: str | None, *, ts: Any, subject: Any = None) -> list[Fact]:

    instant = given_ts(ts, "ts")
    if _no_store(store):
        factstore.query_args(instant, subject, None)  # bad input is still bad
        return []
    return get_valid_at_document(FileReader(open_store(store).root), ts=instant, subject=subject)["items"]


def history(store: str | None, *, subject: Any) -> list[Fact]:

    if _no_store(store):
        facts.text(subject, "subject")
        return []
    found = history_document(FileReader(open_store(store).root), subject=subject)["items"]
    return sorted(found, key=lambda f: f["recorded_at"])  # stable: memstack's order among equal times


def invalidate(store: str | None, *, subject: Any, predicate: Any, valid_to: Any, object: Any = None,
               recorded_at: Any = None) -> Fact | None:
    """Close what is open (memstack's `fact invalidate`); nothing open is no error here: null, as in the seed."""
    found = open_store(store)
    end = given_ts(valid_to, "valid-to")
    recorded = _ts(recorded_at, "recorded-at")
    subject, predicate = facts.text(subject, "subject"), facts.text(predicate, "predicate")
    if not [f for f in factstore.open_facts(found.root, subject, predicate) if object is None or f["object"] == object]:
        return None
    closed = invalidate_document(found, subject=subject, predicate=predicate, valid_to=end, recorded_at=recorded,
                                 object=object)
    return closed[-1]


def recall(store: str | None, *, subject: Any, now_ts: Any, limit: Any = None) -> list[Fact]:
    """memstack's recall (the predicate set, case-insensitive; valid at now-ts), in the seed's order."""
    now = given_ts(now_ts, "now-ts")
    root = None if _no_store(store) else open_store(store).root
    if limit is None:
        limit = 1 if root is None else Store(root).config.get("memory", "recall_limit")
    factstore.recall_args(subject, now, limit)
    if root is None:
        return []
    everything, cursor = [], None
    while True:  # every fact recall gives, page after page, to order them as the seed does
        page = recall_document(FileReader(root), subject=subject, now_ts=now, limit=pages.MAX_LIMIT, cursor=cursor)
        everything += page["items"]
        cursor = page["next_cursor"]
        if cursor is None:
            break
    newest = sorted(everything, key=lambda f: (f["recorded_at"], f["valid_from"], f["id"]), reverse=True)
    return newest[:limit]


def capture(store: str | None, *, subject: Any, predicate: Any, object: Any, valid_from: Any, recorded_at: Any,
            confidence: Any = None, agent: str | None = None, contradicts: bool = False) -> Fact:

    new, *_closed = capture_document(open_store(store), subject=subject, predicate=predicate, object=object,
                                     valid_from=_ts(valid_from, "valid-from"),
                                     recorded_at=_ts(recorded_at, "recorded-at"), confidence=_confidence(confidence),
                                     agent=agent, contradicts=contradicts)
    return new


def import_document(store: Any, file: str, stream: IO[bytes], *, agent: str | None = None,
                    source: str | None = None) -> dict[str, Any]:
    """`import ferrox --json`: what the import did (counts of facts added, closed, present, differing).
    `stream` (seekable: a file, or stdin spooled to one) is read twice, from its start, never whole."""
    where = "stdin" if file == "-" else Path(file).name

    def read() -> Iterator[storefile.Record]:
        stream.seek(0)
        return storefile.records(stream, where)

    who = resolve_agent(store, agent)
    return importing.run(store.root, read, agent=who, source=SOURCE if source is None else source).document()
