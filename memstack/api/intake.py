"""The intake verbs: write a record, list records."""

from collections.abc import Iterable
from pathlib import Path
from typing import Any

from memstack.anchors.take import take_all
from memstack.base import pages
from memstack.base.times import given_or_none, now_ms
from memstack.intake import log as intake
from memstack.repo.store import Store, agent_filter, resolve_agent


def write_document(store: Store, *, agent: str | None, content: Any, title: Any = "", source: Any = "",
                   tier: Any = "observed", confidence: Any = 0.5, keyword: Iterable[str] = (),
                   tag: Iterable[str] = (), subject: Any = None, predicate: Any = None, object: Any = None,
                   relevance_score: Any = None, created_at: Any = None, anchor: Iterable[str] = (),
                   repo: str | None = None, here: Path | None = None) -> dict[str, Any]:
    """Append one record; the document `intake write --json` prints and the `intake_write` tool returns.
    `anchor`: code anchors (`PATH[:START[-END]]`, memstack/anchors/take.py) into `repo`, paths from `here`."""
    record = intake.make_record(
        agent=resolve_agent(store, agent), content=content, title=title, source=source, tier=tier,
        confidence=confidence, keywords=keyword, tags=tag, subject=subject, predicate=predicate, object=object,
        relevance_score=relevance_score, created_at=_now_if_none(given_or_none(created_at, "created-at")),
        anchors=take_all(store, anchor, repo=repo, here=here))
    return {"path": intake.write(store.root, record), "record": record}


def _now_if_none(ms: int | None) -> int:
    return now_ms() if ms is None else ms


_SHAPE = pages.shaped(str, str)  # (created_at, id)


def list_document(store: Store, agent: str | None = None, pending: bool = False, *, limit: Any = None,
                  cursor: str | None = None, max_bytes: int | None = None) -> dict[str, Any]:
    """`intake list --json`: one page of records, oldest first, `{"items", "next_cursor", "remaining"}`."""
    agent = agent_filter(store, agent)
    return pages.page(intake.each_record(store.root, agent, pending), limit=limit, cursor=cursor,
                      key=lambda r: (r["created_at"], r["id"]), verb="intake list", shape=_SHAPE,
                      max_bytes=max_bytes, query=[agent]).document()
