"""The derived KB views (`kb/knowledge.json`, `kb/jeles_atoms.json`, `kb/opus_atoms.json`,
`kb/binder_queue.json`): pure functions of the facts and logs, byte-stable.

A table's view holds its open facts (`valid_to` null: what the store currently
holds true, without reference to a clock), sorted by subject, predicate,
valid_from and id, each stamped with `distilled_at` (when a promotion put it
there: `distillations`; schemas/view.schema.json). The queue holds the intake records routed to the binder and
not yet decided. Each is JSON with one record per line, so a view's diff in a
pull request reads as records added and removed.
"""

import hashlib
from collections import Counter
from collections.abc import Iterable, Iterator
from typing import Any

import orjson

from memstack.base import files, ledger, logfiles, progress
from memstack.base.jsonio import compact, iter_jsonl, iter_jsonl_pieces
from memstack.base.layout import DECISIONS
from memstack.base.spill import Spill, sorted_runs
from memstack.kb import disputes
from memstack.kb.routing import FACT_TABLES
from memstack.repo.sources import Source, WorktreeSource

QUEUE = "kb/binder_queue.json"
_LINE = orjson.OPT_SORT_KEYS


def view_path(table: str) -> str:
    return f"kb/{table}.json"


def fact_order(fact: dict[str, Any]) -> tuple[str, str, int, str]:
    return (fact["subject"], fact["predicate"], fact["valid_from"], fact["id"])


def dispute_line(dispute: dict[str, Any]) -> bytes:
    """A disagreement's line in the queue: the predecessor, its subject and predicate, the sides' ids."""
    return orjson.dumps({"predecessor": dispute["id"], "subject": dispute["subject"],
                         "predicate": dispute["predicate"], "sides": [s["id"] for s in dispute["sides"]]},
                        option=_LINE)


def head(name: str, key: str, count: int) -> bytes:
    """A view's first line, up to its list: `{"count": N, "view": NAME, KEY: [`."""
    return b'{"count": %d, "view": "%s", "%s": [\n' % (count, name.encode(), key.encode())


def tail(count: int, disputes: list[bytes]) -> bytes:
    """A view's end after its list's last line (the queue's disagreement lines, when it has any)."""
    end = (b"\n" if count else b"") + b"]}\n"
    return end[:-2] + b', "disputes": [\n' + b",\n".join(disputes) + b"\n]}\n" if disputes else end


def parse(data: bytes) -> list[dict[str, Any]]:
    """The records of a view file."""
    view = orjson.loads(data)
    return list(view.get("facts", view.get("records", [])))


def _queue_lines(waiting: Iterable[dict[str, Any]]) -> Iterator[bytes]:
    """The waiting records' view lines in the queue's order: (created_at, id), then as read."""
    for _, _, text in sorted_runs((((r["created_at"], r["id"]), n, line(r)) for n, r in enumerate(waiting)), first):
        yield text


def waiting(source: Source) -> Iterator[dict[str, Any]]:
    """The intake records routed to the binder and not yet decided, read through `source`, one at a
    time in the queue's order (sorted in spilled runs: a queue of any length holds one run)."""
    for text in _queue_lines(_waiting(source)):
        yield orjson.loads(text)


def each_waiting(source: Source) -> Iterator[dict[str, Any]]:
    """The same records in the order they are found (no sort)."""
    return _waiting(source)


def _log(source: Source, relpath: str) -> Iterator[dict[str, Any]]:
    """The records of an append-only log, read a megabyte at a time (the ledger of a million records
    is 200 MB): a work tree's file, or a source's stream (a commit's blob; promote's recorded build)."""

    if isinstance(source, WorktreeSource):
        path = source.root / relpath
        return logfiles.iter_jsonl(path, relpath) if path.is_file() else iter(())
    return iter_jsonl_pieces(source.stream(relpath), relpath)


def _waiting(source: Source) -> Iterator[dict[str, Any]]:
    """The waiting records one by one, the logs read line by line: only the waiting ids and their
    files are kept, never the whole ledger."""

    decided = {d.get("intake_id") for d in _log(source, DECISIONS)}
    # binder-routed id -> the intake file its ledger lines name (a tuple in the rare case of several),
    # each file's name held once: ~100 bytes a waiting record
    files_of: dict[str, str | tuple[str, ...]] = {}
    names: dict[str, str] = {}
    for line in ledger.each_line(source):
        ident = line.get("intake_id")
        if line.get("sub_tier") == "binder" and isinstance(ident, str) and ident not in decided:
            files_of.setdefault(ident, ())
        name = line.get("file")
        if ident in files_of and name:
            name = names.setdefault(name, name)
            held = files_of[ident]
            if held != name and not (isinstance(held, tuple) and name in held):
                files_of[ident] = name if held == () else (*((held,) if isinstance(held, str) else held), name)
    for relpath in sorted(names):
        for record in _jsonl(source.read(relpath), relpath):
            if record.get("id") in files_of:
                yield record


def _key(fact_id: str, intake_id: str) -> int:
    """A fact id and the intake id it was made from, as 8 bytes of their digest: a lookup key a
    quarter the size of the ids' strings."""
    return int.from_bytes(hashlib.blake2b(f"{fact_id}\0{intake_id}".encode(), digest_size=8).digest(), "big")


def distillations(source: Source) -> dict[int, int]:
    """`distilled_at` (ADR-0004: each pattern carries its distillation time) by `_key(fact id, intake id)`:
    the `promoted_at` of the first promotion-ledger line that made the fact (names it and the intake
    record it was made from: the promotion that put it in a view). A line that only points a
    duplicate record at a fact does not count, so a fact's distillation never changes once it is in a
    view. A fact no ledger line made (written directly, `fact add` or `capture`) is in the views as
    soon as it is recorded: its `recorded_at`. A function of the logs alone, so a rebuild gives the
    same bytes. Held as small integers (one ledger line of a million costs ~80 bytes), times shared."""

    first: dict[int, int] = {}
    times: dict[int, int] = {}
    for line in ledger.each_line(source):
        ident, intake, at = line.get("fact_id"), line.get("intake_id"), line.get("promoted_at")
        if isinstance(ident, str) and isinstance(intake, str) and type(at) is int:
            first.setdefault(_key(ident, intake), times.setdefault(at, at))
    return first


def distilled_at(fact: dict[str, Any], first: dict[int, int]) -> int:
    intake = fact.get("intake_id")
    found = first.get(_key(fact["id"], intake)) if isinstance(intake, str) else None
    return fact["recorded_at"] if found is None else found


def line(record: dict[str, Any]) -> bytes:
    """A record's line in its view (a fact stamped with `distilled_at` already), as kept until the view
    is written (jsonio.compact: no write buffer kept)."""
    return compact(orjson.dumps(record, option=_LINE))


class _Body:
    """A view's list as its lines come (joined by ",\n", counted), spilled to a temporary file: a view
    of any size is made, compared, hashed and written without being held (files.Pieces). The file is
    closed when the body is let go."""

    def __init__(self, name: str, key: str) -> None:
        self.name, self.key, self.count = name, key, 0
        self.list = Spill()
        self.disputes: list[bytes] = []  # the queue's disagreement lines

    def add(self, text: bytes) -> None:
        self.list.write(b",\n" + text if self.count else text)
        self.count += 1

    def size(self) -> int:
        return len(head(self.name, self.key, self.count)) + self.list.size() + len(tail(self.count, self.disputes))

    def pieces(self, piece: int = 1 << 20) -> Iterator[bytes]:
        """The view's bytes, a piece at a time: head, the list, tail."""
        yield head(self.name, self.key, self.count)
        yield from self.list.pieces(piece)
        yield tail(self.count, self.disputes)


def _bodies(source: Source) -> Iterator[tuple[str, _Body]]:
    """Every KB view's body, by store-relative path: the three fact views, then the Binder queue
    (with the disagreements), each handed over when done."""

    by_table = {table: _Body(table, "facts") for table in FACT_TABLES}
    claims: list[dict[str, Any]] = []
    for table, text, fact in _sorted_open(source):
        by_table[table].add(text)
        if fact is not None:
            claims.append(fact)
    for table in FACT_TABLES:
        yield view_path(table), by_table.pop(table)
    # A disagreement needs its sides (open facts that name what they closed) and, when open, the
    # predecessor they name: found in a second pass, only when there are rival sides at all.
    named = [p for p, n in Counter(p for f in claims for p in f.get("supersedes") or ()).items() if n > 1]
    predecessors = [f for f in _open_facts_with_ids(source, set(named))] if named else []
    queue = _Body("binder_queue", "records")
    for text in _queue_lines(_waiting(source)):
        queue.add(text)
    queue.disputes = [dispute_line(d) for d in disputes.find([*predecessors, *claims])]
    yield QUEUE, queue


def build(source: Source) -> dict[str, files.Data]:
    """Every KB view, by store-relative path: the I4 builder.

    The open facts are sorted in runs spilled to a temporary file and merged (`_sorted_open`), and each
    view's list is spilled to a temporary file as it is made (`_Body`): a view is compared, hashed and
    written a piece at a time, so a store's views may be larger than memory.
    """
    return dict(_bodies(source))


def _jsonl(data: bytes | None, relpath: str) -> Iterator[dict[str, Any]]:
    """The records of a JSONL file read through a Source, one at a time (none when it does not exist)."""

    return iter_jsonl(data or b"", relpath)


def _fact_files(source: Source) -> Iterator[str]:
    for agent in source.listdir("kb/facts"):
        for name in source.listdir(f"kb/facts/{agent}"):
            if name.endswith(".jsonl"):
                yield f"kb/facts/{agent}/{name}"


def _open_lines(source: Source) -> Iterator[tuple[list[Any], str, bytes, dict[str, Any] | None]]:
    """(sort key, table, view line, the fact if it names facts it closed) of every open fact, each
    stamped with its `distilled_at`."""

    first = distillations(source)
    paths = list(_fact_files(source))
    for relpath in progress.each(paths, len(paths), "views: reading fact files", "files"):
        for fact in _jsonl(source.read(relpath), relpath):
            if fact.get("valid_to") is None:
                fact["distilled_at"] = distilled_at(fact, first)
                yield ([fact["subject"], fact["predicate"], fact["valid_from"], fact["id"]], fact["table"],
                       line(fact), fact if fact.get("supersedes") else None)


def _sorted_open(source: Source) -> Iterator[tuple[str, bytes, dict[str, Any] | None]]:
    """`_open_lines` in view order (fact_order)."""
    for _, table, text, fact in sorted_runs(_open_lines(source), first):
        yield table, text, fact




def _open_facts_with_ids(source: Source, ids: set[str]) -> Iterator[dict[str, Any]]:
    for relpath in _fact_files(source):
        for fact in _jsonl(source.read(relpath), relpath):
            if fact.get("id") in ids and fact.get("valid_to") is None:
                yield fact


def first(item: tuple[Any, ...]) -> Any:
    """The sort key of the items views sort: their first member."""
    return item[0]
