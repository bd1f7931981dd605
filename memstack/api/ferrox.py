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

import sys
from typing import Any

from memstack.base.times import given_ts
from memstack.kb.facts import Fact
from memstack.repo.store import Store, locate, open_store


def emit(document: Any, raw: bool) -> None:
    """JSON always: indented as `--json` prints it, or compact on one line (`--raw`)."""
    if raw:
        from memstack.base import jsonio

        sys.stdout.write(jsonio.dumps_line(document).decode())
        return
    from memstack.base.output import render_json

    sys.stdout.write(render_json(document) + "\n")


def _ts(value: Any, field: str) -> int | None:
    return None if value is None else given_ts(value, field)


def _confidence(value: Any) -> Any:
    return "1.0" if value is None else value


def _no_store(store: str | None) -> bool:
    """True (and a note on stderr) when nothing names a store and none is around: reads answer nothing."""
    if locate(store) is not None:
        return False
    print("memstack: no memstack store here: nothing to read (pass --store PATH or set MEMSTACK_HOME)",
          file=sys.stderr)
    return True


def add(store: str | None, *, subject: Any, predicate: Any, object: Any, valid_from: Any, recorded_at: Any,
        confidence: Any = None, agent: str | None = None) -> Fact:
    from memstack.cli.commands.fact import add_document

    [fact] = add_document(open_store(store), subject=subject, predicate=predicate, object=object,
                          valid_from=_ts(valid_from, "valid-from"), recorded_at=_ts(recorded_at, "recorded-at"),
                          confidence=_confidence(confidence), agent=agent)
    return fact


def get_valid_at(store: str | None, *, ts: Any, subject: Any = None) -> list[Fact]:
    from memstack.cli.commands.fact import get_valid_at_document
    from memstack.kb import factstore
    from memstack.kb.readers import FileReader

    instant = given_ts(ts, "ts")
    if _no_store(store):
        factstore.query_args(instant, subject, None)  # bad input is still bad
        return []
    return get_valid_at_document(FileReader(open_store(store).root), ts=instant, subject=subject)["items"]


def history(store: str | None, *, subject: Any) -> list[Fact]:
    from memstack.cli.commands.fact import history_document
    from memstack.kb import facts
    from memstack.kb.readers import FileReader

    if _no_store(store):
        facts.text(subject, "subject")
        return []
    found = history_document(FileReader(open_store(store).root), subject=subject)["items"]
    return sorted(found, key=lambda f: f["recorded_at"])  # stable: memstack's order among equal times


def invalidate(store: str | None, *, subject: Any, predicate: Any, valid_to: Any, object: Any = None,
               recorded_at: Any = None) -> Fact | None:
    """Close what is open (memstack's `fact invalidate`); nothing open is no error here: null, as in the seed."""
    from memstack.cli.commands.fact import invalidate_document
    from memstack.kb import facts, factstore

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
    from memstack.base import pages
    from memstack.cli.commands.recall import recall_document
    from memstack.kb import factstore
    from memstack.kb.readers import FileReader

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
    from memstack.cli.commands.capture import capture_document

    new, *_closed = capture_document(open_store(store), subject=subject, predicate=predicate, object=object,
                                     valid_from=_ts(valid_from, "valid-from"),
                                     recorded_at=_ts(recorded_at, "recorded-at"), confidence=_confidence(confidence),
                                     agent=agent, contradicts=contradicts)
    return new
