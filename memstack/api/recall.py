"""`recall`: what an agent decided and prefers, most recent first, and why nothing was recalled."""

import shlex
from typing import Any

from memstack.anchors.used import with_code_status
from memstack.base.disputed import disputed_with
from memstack.base.times import given_or_none, now_ms
from memstack.kb.facts import RECALL_PREDICATES
from memstack.kb.readers import FactReader


def recall_document(reader: FactReader, *, subject: Any, now_ts: Any = None, limit: Any = None,
                    cursor: str | None = None, max_bytes: int | None = None) -> dict[str, Any]:
    """`recall --json` and the `recall` tool, from the files (no store at all answers nothing) or the replica:
    one page, `{"items": [facts], "next_cursor", "remaining"}`, and a `note` when nothing is recalled but
    the subject holds facts recall leaves out or records waiting in the Binder.

    Two agents that disagree: both sides are shown, each marked `disputed_with` the other. A fact with code
    anchors carries `code_status` (memstack/anchors/used.py)."""

    now = given_or_none(now_ts, "now-ts")
    now = now_ms() if now is None else now
    found = reader.recall_page(subject, now, limit=limit, cursor=cursor, max_bytes=max_bytes)
    others = disputed_with(found.items)
    document = found.document(with_code_status(reader.code_store(), [
        {**f, "disputed_with": others[f["id"]]} if f["id"] in others else f for f in found.items]))
    if not found.items and cursor in (None, ""):
        why = why_empty(reader, subject, now)
        if why:
            document["note"] = why
    return document


def why_empty(reader: FactReader, subject: str, now: int) -> str | None:
    """What the subject holds that recall does not show: facts of other predicates valid now, and intake
    records waiting in the Binder for a human (they become facts only once ratified)."""
    parts = []
    count, predicates = reader.other_predicates(subject, now)
    if count:
        shown = ", ".join(predicates[:5]) + (", …" if len(predicates) > 5 else "")
        parts.append(f"{count} fact{'s' if count != 1 else ''} about {subject!r} hold{'s' if count == 1 else ''}"
                     f" other predicates ({shown}): recall returns {'/'.join(RECALL_PREDICATES)};"
                     f" see `memstack fact get-valid-at --subject {shlex.quote(subject)} --ts now`")
    waiting = reader.binder_waiting(subject)
    if waiting:
        parts.append(f"{waiting} intake record{'s' if waiting != 1 else ''} about {subject!r}"
                     f" wait{'s' if waiting == 1 else ''} in the Binder for ratification by a human"
                     " (`memstack binder list`); a ratified record becomes a fact at the next promotion")
    return "; ".join(parts) or None
