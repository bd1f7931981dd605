"""The Binder's sections of a review, each item with the content it is about.

A decision names an intake record (`intake_id`) or one side of a disagreement between agents (`fact_id`);
a record the range routed to the Binder waits unless the range decided it too. Each item comes with what it
names: the record or fact as the range added or changed it (from the workspace), or, when it was recorded
before the range, as the store holds it at the range's end (B), read from the one file its id is bound to
(base/ids.py: the agent's folder and the day or month of its time). Items are read BATCH at a time, so a
section listed whole (`--full`) holds one batch.
"""

from collections.abc import Callable, Iterator
from typing import Any

import orjson

from memstack.base import ids
from memstack.base.times import day, month
from memstack.repo import objects
from memstack.repo.sources import GitSource
from memstack.review.gather import INTAKE_FIELDS, Review
from memstack.review.workspace import key

BATCH = 500
_WAITING = "FROM waiting WHERE rid NOT IN (SELECT id FROM decided)"  # routed to the Binder, not decided


def waiting(review: Review, limit: int = -1) -> Iterator[dict[str, Any]]:
    """`{intake_id, record}` of each record still waiting at the range's end, in the order routed."""
    rows = review.workspace.db.execute(f"SELECT rid {_WAITING} ORDER BY seq LIMIT ?", (limit,))
    with _Lookup(review) as lookup:
        while batch := [rid for rid, in rows.fetchmany(BATCH)]:
            records = lookup.intake(batch)
            yield from ({"intake_id": rid, "record": records.get(rid)} for rid in batch)


def decisions(review: Review, limit: int = -1) -> Iterator[dict[str, Any]]:
    """Each decision of the range as recorded, with `record` (the intake record it decided) or `fact` (the
    side of a disagreement it decided, as it is at the range's end); null when the store holds neither."""
    items = review.workspace.items("binder", limit)
    with _Lookup(review) as lookup:
        while batch := [item for _, item in zip(range(BATCH), items, strict=False)]:
            records = lookup.intake([str(d["intake_id"]) for d in batch if "fact_id" not in d])
            found = lookup.facts([str(d["fact_id"]) for d in batch if "fact_id" in d])
            yield from ({**d, "fact": found.get(str(d["fact_id"]))} if "fact_id" in d
                        else {**d, "record": records.get(str(d.get("intake_id")))} for d in batch)


class _Lookup:
    """Records and facts by id: the workspace first, then the commit at the range's end."""

    def __init__(self, review: Review) -> None:
        self.review = review
        self.db = review.workspace.db
        self.blobs: objects.CatFile | None = None
        self.agents: dict[str, list[str]] = {}

    def __enter__(self) -> "_Lookup":
        return self

    def __exit__(self, *exc: object) -> None:
        if self.blobs is not None:
            self.blobs.close()

    def intake(self, wanted: list[str]) -> dict[str, Any]:
        self.review.workspace.index("intake_by_id", "intake (rid, created, id, seq)")
        found: dict[str, Any] = {}
        for rid in dict.fromkeys(wanted):
            row = self.db.execute("SELECT data FROM intake WHERE rid = ? ORDER BY created DESC, id DESC, seq DESC"
                                  " LIMIT 1", (rid,)).fetchone()
            if row is not None:
                found[rid] = orjson.loads(row[0])
        at_tip = self._at_tip("intake", [i for i in wanted if i not in found], day)
        found.update(zip(at_tip, self._redacted([{k: r.get(k) for k in INTAKE_FIELDS} for r in at_tip.values()]),
                         strict=True))
        return found

    def facts(self, wanted: list[str]) -> dict[str, Any]:
        self.review.workspace.index("superseded_by_id", "superseded (id)")
        found: dict[str, Any] = {}
        for fact_id in dict.fromkeys(wanted):
            row = self.db.execute("SELECT data FROM facts WHERE id = ?", (fact_id,)).fetchone()
            if row is not None:
                found[fact_id] = orjson.loads(row[0])
                continue
            row = self.db.execute("SELECT data FROM superseded WHERE id = ?", (key(fact_id),)).fetchone()
            if row is not None:
                found[fact_id] = orjson.loads(row[0])["after"]
        at_tip = self._at_tip("kb/facts", [i for i in wanted if i not in found], month)
        found.update(zip(at_tip, self._redacted(list(at_tip.values())), strict=True))
        return found

    def _redacted(self, items: list[Any]) -> list[Any]:
        return self.review.shown(items)

    def _at_tip(self, folder: str, wanted: list[str], period: Callable[[int], str]) -> dict[str, Any]:
        """The records of ids `wanted` that the commit at the range's end holds, each file read once."""
        if not wanted or not self.review.tip:
            return {}
        if self.blobs is None:
            self.blobs = objects.CatFile(self.review.repo)
        source = GitSource(self.review.repo, self.blobs, self.review.tip, self.review.folder)
        agents = self.agents.setdefault(folder, source.listdir(folder))
        by_path: dict[str, set[str]] = {}
        for record_id in wanted:
            match = ids.ID.match(record_id)
            if match is None:  # an id of no bound form: its file is unknown, and the store is not searched whole
                continue
            for agent in agents:
                if ids.agent_tag(agent) == match.group(3):
                    by_path.setdefault(f"{folder}/{agent}/{period(int(match.group(1), 16))}.jsonl",
                                       set()).add(record_id)
        found: dict[str, Any] = {}
        for path, names in sorted(by_path.items()):
            for line in objects.lines(source.stream(path)):
                try:
                    record = orjson.loads(line)
                except orjson.JSONDecodeError:
                    continue
                if isinstance(record, dict) and record.get("id") in names:
                    found[record["id"]] = record  # a fact file's line is the fact as it is now
        return found
