"""The derived KB views, one shard per source file (docs/reference.md: store layout).

- `kb/<table>/<agent>/YYYY-MM.json` (table `knowledge`, `jeles_atoms`, `opus_atoms`): the open facts
  (`valid_to` null) of the table in `kb/facts/<agent>/YYYY-MM.jsonl`, sorted by subject, predicate,
  valid_from and id, each with `distilled_at` (ADR-0004). A pure function of that one fact file:
  `distilled_at` is the fact's `recorded_at`, the transaction time its promotion (or `fact add`,
  `capture`) gave it, so the same facts give the same bytes on every clone.
- `kb/binder_queue/<agent>/YYYY-MM-DD.json`: the records of `intake/<agent>/YYYY-MM-DD.jsonl` routed to
  the binder (its ledger shard, base/ledger.py), not decided (`kb/binder.jsonl`) nor forgotten (a tombstone),
  by created_at and id.

Each shard is a JSON array, one entry a line, so its diff reads as entries added and removed; a shard
with no entries is not written. Disagreements between agents are not written into any view: they are
found in the facts wherever they are shown (disputes.py: `binder list`, `review`).
"""

import hashlib
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from functools import cached_property
from typing import Any

import orjson

from memstack.base import ids, ledger, progress
from memstack.base.forgotten import Forgotten
from memstack.base.jsonio import compact, iter_jsonl
from memstack.base.layout import (
    DECISIONS,
    FACT_VIEWS,
    INTAKE,
    LEDGER_DIR,
    QUEUE_VIEW,
    classify,
    ledger_shard,
    view_shard,
)
from memstack.base.spill import sorted_runs
from memstack.repo import objects
from memstack.repo.counts import Counter, count_entries
from memstack.repo.sources import Source

VIEW_DIRS = tuple(f"kb/{view}" for view in (*FACT_VIEWS, QUEUE_VIEW))  # the folders of the shards
_LINE = orjson.OPT_SORT_KEYS


def fact_order(fact: dict[str, Any]) -> tuple[str, str, int, str]:
    return (fact["subject"], fact["predicate"], fact["valid_from"], fact["id"])


def queue_order(record: dict[str, Any]) -> tuple[str, str]:
    return (record["created_at"], record["id"])


def line(record: dict[str, Any]) -> bytes:
    """An entry's line in its shard (keys sorted)."""
    return compact(orjson.dumps(record, option=_LINE))


def render(lines: list[bytes]) -> bytes | None:
    """A shard's bytes: a JSON array, one entry a line; None for no entries (no shard)."""
    return b"[\n" + b",\n".join(lines) + b"\n]\n" if lines else None


def parse(data: bytes | None) -> list[dict[str, Any]]:
    """The entries of a shard (none when there is none)."""
    found = orjson.loads(data) if data else []
    return [entry for entry in found if isinstance(entry, dict)] if isinstance(found, list) else []


def source_of(shard: str) -> tuple[str, str] | None:
    """(view, source file) of a shard's path: `kb/knowledge/a/2026-03.json` -> `kb/facts/a/2026-03.jsonl`."""
    parts = shard.split("/")
    if len(parts) != 4 or parts[0] != "kb" or not parts[3].endswith(".json"):
        return None
    view, agent, name = parts[1], parts[2], parts[3].removesuffix(".json")
    if view in FACT_VIEWS:
        return view, f"kb/facts/{agent}/{name}.jsonl"
    return (view, f"intake/{agent}/{name}.jsonl") if view == QUEUE_VIEW else None


def fact_shards(data: bytes | None, fact_file: str) -> dict[str, bytes | None]:
    """The three fact views' shards of one fact file (None: no entry, no shard)."""
    by_table: dict[str, list[tuple[tuple[str, str, int, str], bytes]]] = {table: [] for table in FACT_VIEWS}
    for fact in iter_jsonl(data or b"", fact_file):
        if fact.get("valid_to") is None:
            fact["distilled_at"] = fact["recorded_at"]
            by_table[fact["table"]].append((fact_order(fact), line(fact)))
    return {view_shard(table, fact_file): render([text for _, text in sorted(entries)])
            for table, entries in by_table.items()}


# Shards built while `remembering`, by their inputs' git blob ids: a promotion builds the shards whose
# sources it changed, then its commit's check must know that the same shards of the same blobs in git's
# index are what a rebuild makes. A shard is a pure function of its inputs (the module's docstring), so
# an id remembered answers for building it again: the check compares ids and builds only the others.
# Blob ids are sha1's (a repository of the default format); another format's ids never match.
_MADE: dict[tuple[str, ...], dict[str, str | None]] | None = None  # inputs -> {shard: blob id, None: no shard}


@contextmanager
def remembering() -> Iterator[None]:
    """Remember the shards built inside (`Shards.remembered` answers from them), then forget them."""
    global _MADE
    _MADE = {}
    try:
        yield
    finally:
        _MADE = None


def _remember(key: tuple[str, ...], built: dict[str, bytes | None]) -> None:
    if _MADE is not None:
        _MADE[key] = {path: None if data is None else objects.blob_id(data, objects.SHA1)
                      for path, data in built.items()}


class Shards:
    """The shards of the state `source` reads, each built from its own sources when asked."""

    def __init__(self, source: Source) -> None:
        self.source = source

    @cached_property
    def decided(self) -> frozenset[str]:
        """The intake ids a human has decided (kb/binder.jsonl)."""
        found = (d.get("intake_id") for d in iter_jsonl(self.source.read(DECISIONS) or b"", DECISIONS))
        return frozenset(i for i in found if isinstance(i, str))

    @cached_property
    def forgotten(self) -> Forgotten:
        """The state's tombstones: a forgotten record waits in no queue (its content would stay in the view)."""
        return Forgotten.of(self.source)

    @cached_property
    def left(self) -> frozenset[str]:
        """The intake ids no queue holds: decided by a human or forgotten."""
        return self.decided | self.forgotten.by_id.keys()

    @cached_property
    def _left_key(self) -> str:
        return hashlib.blake2b(orjson.dumps(sorted(self.left))).hexdigest()

    def _key(self, source_file: str, sha: str, routed: str | None) -> tuple[str, ...]:
        """What the shards of `source_file` are built from, by git blob id: the file's (`sha`), and for an
        intake file its ledger shard's (`routed`, None: none yet) and the ids no queue holds."""
        if not source_file.startswith("intake/"):
            return (source_file, sha)
        return (source_file, sha, routed or "-", self._left_key)

    def _key_in_source(self, source_file: str) -> tuple[str, ...] | None:
        """`_key` of `source_file` as the source holds it (None: it does not)."""
        sha = self.source.blob_id(source_file)
        if sha is None:
            return None
        routed = self.source.blob_id(ledger_shard(source_file)) if source_file.startswith("intake/") else None
        return self._key(source_file, sha, routed)

    def remembered(self, paths: Iterable[str]) -> dict[str, str | None]:
        """The blob id of each shard at `paths` built from the same inputs while `remembering` (None: a
        rebuild makes no shard there); a shard not built so is left out."""
        if not _MADE:
            return {}
        out: dict[str, str | None] = {}
        keys: dict[str, tuple[str, ...] | None] = {}  # by source file: a fact file has three shards
        for path in paths:
            found = source_of(path)
            if found is None:
                continue
            if found[1] not in keys:
                keys[found[1]] = self._key_in_source(found[1])
            key = keys[found[1]]
            made = _MADE.get(key) if key is not None else None
            if made is not None and path in made:
                out[path] = made[path]
        return out

    def _facts(self, fact_file: str) -> dict[str, bytes | None]:
        data = self.source.read(fact_file)
        built = fact_shards(data, fact_file)
        if _MADE is not None and data is not None:
            _remember(self._key(fact_file, objects.blob_id(data, objects.SHA1), None), built)
        return built

    def queue(self, intake_file: str) -> bytes | None:
        """The Binder queue's shard of one intake file (while `remembering`, keyed by the very bytes read)."""
        if _MADE is None:
            return self._queue(intake_file, ledger.shard_lines(self.source, intake_file),
                               lambda: self.source.read(intake_file))
        shard = ledger_shard(intake_file)
        routed, data = self.source.read(shard), self.source.read(intake_file)
        if routed and not routed.endswith(b"\n"):  # a torn line: said as the stream says it, nothing remembered
            return self._queue(intake_file, ledger.shard_lines(self.source, intake_file), lambda: data)
        built = self._queue(intake_file, iter_jsonl(routed or b"", shard), lambda: data)
        if data is not None:
            routed_id = None if routed is None else objects.blob_id(routed, objects.SHA1)
            _remember(self._key(intake_file, objects.blob_id(data, objects.SHA1), routed_id),
                      {view_shard(QUEUE_VIEW, intake_file): built})
        return built

    def _queue(self, intake_file: str, routed_lines: Iterable[dict[str, Any]],
               intake: Callable[[], bytes | None]) -> bytes | None:
        left = self.left  # read before the ledger shard streams from the source
        routed = {line["intake_id"] for line in routed_lines
                  if line.get("sub_tier") == "binder" and isinstance(line.get("intake_id"), str)} - left
        if not routed:
            return None
        records = [r for r in iter_jsonl(intake() or b"", intake_file) if r.get("id") in routed]
        return render([line(r) for r in sorted(records, key=queue_order)])

    def shard(self, path: str) -> bytes | None:
        """What a rebuild makes at `path` (None: nothing, or not a shard's path)."""
        found = source_of(path)
        if found is None:
            return None
        view, source_file = found
        if view == QUEUE_VIEW:
            return self.queue(source_file)
        return self._facts(source_file)[path]

    def of(self, paths: Iterable[str]) -> dict[str, bytes | None]:
        """The shards at `paths`, each fact file read once."""
        out: dict[str, bytes | None] = {}
        for path in sorted(set(paths)):
            found = source_of(path)
            if path in out or found is None:
                continue
            if found[0] == QUEUE_VIEW:
                out[path] = self.queue(found[1])
            else:
                out.update(self._facts(found[1]))
        return out

    def every(self) -> Iterator[tuple[str, bytes | None]]:
        """Every shard a rebuild makes, and every shard file there is that it does not (None)."""
        made: set[str] = set()
        sources = [f"{top}/{agent}/{name}" for top, end in (("kb/facts", ".jsonl"), ("intake", ".jsonl"))
                   for agent in self.source.listdir(top) for name in self.source.listdir(f"{top}/{agent}")
                   if name.endswith(end)]
        for relpath in progress.each(sources, len(sources), "views: reading source files", "files"):
            if relpath.startswith("intake/"):
                built = {view_shard(QUEUE_VIEW, relpath): self.queue(relpath)}
            else:
                built = self._facts(relpath)
            made.update(built)
            yield from built.items()
        for path in existing(self.source):
            if path not in made:
                yield path, None


def existing(source: Source) -> Iterator[str]:
    """The shard files there are."""
    for top in VIEW_DIRS:
        for agent in source.listdir(top):
            for name in source.listdir(f"{top}/{agent}"):
                yield f"{top}/{agent}/{name}"


def touched(source: Source, changed: Iterable[str], routed: Iterable[str] | None,
            decided: Iterable[str] | None) -> set[str] | None:
    """The shards a change rewrites: those of the source files `changed` (store-relative), the changed
    shards themselves, the queue shards of the intake files `routed` (ledger lines appended) and of the
    records `decided`. None: every shard (a decision or a ledger line whose file is not known)."""
    out: set[str] = set()
    for path in changed:
        kind = classify(path).kind
        if path.startswith("kb/facts/") and path.endswith(".jsonl"):
            out.update(view_shard(table, path) for table in FACT_VIEWS)
        elif kind == INTAKE:
            out.add(view_shard(QUEUE_VIEW, path))
        elif path.startswith(LEDGER_DIR + "/") and path.endswith(".jsonl"):
            out.add(view_shard(QUEUE_VIEW, "intake" + path[len(LEDGER_DIR):]))
        elif source_of(path) is not None:
            out.add(path)
    if routed is None or decided is None:
        return None
    out.update(view_shard(QUEUE_VIEW, f) for f in routed)
    for intake_id in decided:
        found = ledger.intake_files_of(source, intake_id)
        if not found:
            return None
        out.update(view_shard(QUEUE_VIEW, relpath) for relpath in found)
    return out


def _queue_days(source: Source, since_day: str) -> dict[str, list[str]]:
    """The queue's shards by day (names only), from `since_day` (YYYY-MM-DD) on."""
    days: dict[str, list[str]] = {}
    for agent in source.listdir(f"kb/{QUEUE_VIEW}"):
        for name in source.listdir(f"kb/{QUEUE_VIEW}/{agent}"):
            day = name.removesuffix(".json")
            if name.endswith(".json") and day >= since_day:
                days.setdefault(day, []).append(f"kb/{QUEUE_VIEW}/{agent}/{name}")
    return days


def waiting(source: Source, since_day: str = "") -> Iterator[dict[str, Any]]:
    """The records waiting in the Binder queue in its order (created_at, id), read from the queue's
    shards a day at a time from `since_day` (YYYY-MM-DD) on, without those decided since the shards
    were written."""
    days = _queue_days(source, since_day)
    decided = Shards(source).decided
    for day in sorted(days):
        records = [r for path in days[day] for r in parse(source.read(path)) if r.get("id") not in decided]
        yield from sorted(records, key=queue_order)


def waiting_head(source: Source, after: tuple[str, str] | None, want: int | None,
                 count: Counter = count_entries) -> tuple[list[dict[str, Any]], int]:
    """The first `want` waiting records past `after` (a (created_at, id) key), and how many wait after
    them: the shards of the days they come from are parsed, the later ones only counted (`count`), less
    the records decided since they were written (a shard of a day holding a decided record is read for
    it), so a page never parses the whole queue."""
    days = _queue_days(source, after[0][:10] if after else "")
    decided = Shards(source).decided
    by_day: dict[str, list[bytes]] = {}
    for ident in decided:  # the decided records a shard may still hold, by their day
        match = ids.ID.match(ident)
        if match is not None:
            day = datetime.fromtimestamp(int(match.group(1), 16) / 1000, UTC).date().isoformat()
            by_day.setdefault(day, []).append(b'"id":"%s"' % ident.encode())
    head: list[dict[str, Any]] = []
    rest = 0
    for day in sorted(days):
        if want is not None and len(head) >= want:
            for path in days[day]:
                rest += count(path, source)
                if day in by_day:
                    data = source.read(path) or b""
                    rest -= sum(1 for needle in by_day[day] if needle in data)
            continue
        records = sorted((r for path in days[day] for r in parse(source.read(path)) if r.get("id") not in decided),
                         key=queue_order)
        records = [r for r in records if after is None or queue_order(r) > after]
        room = len(records) if want is None else want - len(head)
        head += records[:room]
        rest += len(records[room:])
    return head, rest


def table_lines(source: Source, table: str) -> Iterator[bytes]:
    """Every entry of one fact view over every fact file, in view order (sorted in spilled runs:
    bounded memory), built from the fact files (never stale)."""

    def entries() -> Iterator[tuple[tuple[str, str, int, str], bytes]]:
        for agent in source.listdir("kb/facts"):
            for name in source.listdir(f"kb/facts/{agent}"):
                if name.endswith(".jsonl"):
                    relpath = f"kb/facts/{agent}/{name}"
                    for fact in iter_jsonl(source.read(relpath) or b"", relpath):
                        if fact.get("valid_to") is None and fact.get("table") == table:
                            fact["distilled_at"] = fact["recorded_at"]
                            yield fact_order(fact), line(fact)

    for _, text in sorted_runs(entries(), key=lambda item: item[0]):
        yield text
