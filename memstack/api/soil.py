"""The SOIL verbs: put, update, get, expire, list, graduate."""

from typing import Any

from memstack.base import pages
from memstack.base.shown import Shown
from memstack.base.times import given_or_none, now_ms
from memstack.intake import log as intake
from memstack.repo.store import Store, resolve_agent
from memstack.soil import records as soil


def write_document(store: Store, verb: str, collection: str, key: str, value: Any) -> dict[str, Any]:
    """`put` or `update` one record; the document `soil put|update --json` prints and the tools return."""
    action = soil.put if verb == "put" else soil.update
    return action(store.root, collection, key, value, now_ms())


def get_document(store: Store, collection: str, key: str, include_expired: bool = False) -> dict[str, Any]:
    """The document `soil get --json` prints and the `soil_get` tool returns."""
    return Shown.in_store(store.root).record(soil.get(store.root, collection, key, now_ms(), include_expired),
                                             f"{collection}/{key}")


def expire_document(store: Store, collection: str, key: str, at: Any = None) -> dict[str, Any]:
    """Mark a record expired (kept); the document `soil expire --json` prints and the `soil_expire` tool returns."""
    return soil.expire(store.root, collection, key, now_ms(), given_or_none(at, "--at"))


def list_document(store: Store, collection: str, include_expired: bool = False, *, limit: Any = None,
                  cursor: str | None = None, max_bytes: int | None = None) -> dict[str, Any]:
    """`soil list --json`: one page of a collection's records by key, `{"items", "next_cursor", "remaining"}`."""
    shown = Shown.in_store(store.root)  # forgotten: without its content; a credential: redacted
    records = (shown.record(r, f"{collection}/{r['key']}")
               for r in soil.iter_records(store.root, collection, now_ms(), include_expired))
    return pages.page(records, limit=limit,
                      cursor=cursor, key=lambda r: (r["key"],), verb="soil list", shape=pages.shaped(str),
                      max_bytes=max_bytes, query=[collection]).document()


def graduate_document(store: Store, *, collection: str, key: str, agent: str | None = None, subject: Any = None,
                      predicate: Any = None, object: Any = None, tier: Any = "observed",
                      confidence: Any = 0.5) -> dict[str, Any]:
    """`soil graduate --json` and the `soil_graduate` tool: the intake record, its file, the retired SOIL record."""

    now = now_ms()
    who = resolve_agent(store, agent)

    def make(record: dict[str, Any], rel: str) -> dict[str, Any]:
        created_at, ident = soil.graduation(record, rel, who)
        return intake.make_record(agent=who, content=soil.content_of(record["value"]), created_at=created_at,
                                  id=ident, title=f"{collection}/{key}", source=f"soil:{rel}", tier=tier,
                                  confidence=confidence, tags=["soil"], subject=subject, predicate=predicate,
                                  object=object)

    made, path, retired = soil.graduate(store.root, collection, key, now, make)
    return {"intake": {"path": path, "record": made}, "soil": retired}
