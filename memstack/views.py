"""The derived KB views (`kb/knowledge.json`, `kb/jeles_atoms.json`, `kb/opus_atoms.json`,
`kb/binder_queue.json`): pure functions of the facts and logs, byte-stable.

A table's view holds its open facts (`valid_to` null: what the store currently
holds true, without reference to a clock), sorted by subject, predicate,
valid_from and id. The queue holds the intake records routed to the binder and
not yet decided. Each is JSON with one record per line, so a view's diff in a
pull request reads as records added and removed.
"""

from collections.abc import Iterable, Iterator
from typing import Any

import orjson

from memstack.jsonio import compact
from memstack.routing import FACT_TABLES
from memstack.sources import Source

QUEUE = "kb/binder_queue.json"
_LINE = orjson.OPT_SORT_KEYS


def view_path(table: str) -> str:
    return f"kb/{table}.json"


def _render_lines(name: str, key: str, lines: list[bytes]) -> bytes:
    body = b",\n".join(lines)
    return (b'{"count": %d, "view": "%s", "%s": [\n' % (len(lines), name.encode(), key.encode())
            + body + (b"\n" if lines else b"") + b"]}\n")


def _dumped(record: dict[str, Any]) -> bytes:
    """A record's view line, as kept until the view is written (jsonio.compact: no write buffer kept)."""
    return compact(orjson.dumps(record, option=_LINE))


def fact_order(fact: dict[str, Any]) -> tuple[str, str, int, str]:
    return (fact["subject"], fact["predicate"], fact["valid_from"], fact["id"])


def queue_view(waiting: Iterable[dict[str, Any]], disputes: list[dict[str, Any]] | None = None) -> bytes:
    """The binder queue from the intake records waiting for a human decision, and the disagreements
    between agents (`disputes`: a predecessor and the open facts that each closed it), when there are any.
    Each record is kept as its line once read (a dict costs several times its bytes)."""
    keyed = sorted(((r["created_at"], r["id"]), n, _dumped(r)) for n, r in enumerate(waiting))
    data = _render_lines("binder_queue", "records", [line for _, _, line in keyed])
    if not disputes:
        return data
    body = b",\n".join(orjson.dumps({"predecessor": d["id"], "subject": d["subject"], "predicate": d["predicate"],
                                     "sides": [s["id"] for s in d["sides"]]}, option=_LINE) for d in disputes)
    return data[:-2] + b', "disputes": [\n' + body + b"\n]}\n"


def parse(data: bytes) -> list[dict[str, Any]]:
    """The records of a view file."""
    view = orjson.loads(data)
    return list(view.get("facts", view.get("records", [])))


def waiting(source: Source) -> list[dict[str, Any]]:
    """The intake records routed to the binder and not yet decided, read through `source`."""
    return list(_waiting(source))


def _waiting(source: Source) -> Iterator[dict[str, Any]]:
    """The waiting records one by one, the logs read line by line: only the waiting ids and their
    files are kept, never the whole ledger."""
    from memstack.binder import DECISIONS, LEDGER
    from memstack.jsonio import iter_jsonl

    decided = {d.get("intake_id") for d in iter_jsonl(source.read(DECISIONS) or b"", DECISIONS)}
    files_of: dict[str, set[str]] = {}  # binder-routed id -> the intake files its ledger lines name
    for line in iter_jsonl(source.read(LEDGER) or b"", LEDGER):
        ident = line.get("intake_id")
        if line.get("sub_tier") == "binder" and isinstance(ident, str) and ident not in decided:
            files_of.setdefault(ident, set())
        if ident in files_of and line.get("file"):
            files_of[ident].add(line["file"])
    for relpath in sorted({name for names in files_of.values() for name in names}):
        for record in iter_jsonl(source.read(relpath) or b"", relpath):
            if record.get("id") in files_of:
                yield record


def open_facts(source: Source) -> list[dict[str, Any]]:
    """Every open fact of the store, read through `source` (O(store): used when views change)."""
    return list(_open_facts(source))


def _fact_files(source: Source) -> list[str]:
    return [f"kb/facts/{agent}/{name}" for agent in source.listdir("kb/facts")
            for name in source.listdir(f"kb/facts/{agent}") if name.endswith(".jsonl")]


def _open_facts(source: Source) -> Iterator[dict[str, Any]]:
    from memstack import progress
    from memstack.jsonio import iter_jsonl

    paths = _fact_files(source)
    for relpath in progress.each(paths, len(paths), "views: reading fact files", "files"):
        yield from (f for f in iter_jsonl(source.read(relpath) or b"", relpath) if f.get("valid_to") is None)


def build(source: Source) -> dict[str, bytes]:
    """Every KB view, by store-relative path: the I4 builder and `memstack rebuild`.

    Streamed: each open fact is kept as its view line and sort key, and only the few that claim a
    predecessor (`supersedes`: a disagreement's sides) as records, so memory follows the views' size."""
    from memstack import disputes

    by_table: dict[str, list[tuple[tuple[str, str, int, str], bytes]]] = {table: [] for table in FACT_TABLES}
    claiming = []
    for fact in _open_facts(source):
        by_table[fact["table"]].append((fact_order(fact), _dumped(fact)))
        if fact.get("supersedes"):
            claiming.append(fact)
    views = {}
    for table, keyed in by_table.items():
        keyed.sort(key=lambda pair: pair[0])
        views[view_path(table)] = _render_lines(table, "facts", [line for _, line in keyed])
    return {**views, QUEUE: queue_view(_waiting(source), disputes.find(claiming))}
