"""Forgotten records in the PostgreSQL replica (docs/forgetting.md): it holds no forgotten content.

At the end of every sync, inside its transaction, each record a committed tombstone names (at the commit
synced) is copied again as every read shows it, `[forgotten: reason]` in its columns and in its `line`,
so neither a read verb with `--pg` nor a person with SQL finds the content. A row already shown so is left
as it is; a forgotten fact's later closing, copied by the sync as its new line, is shown so again.

A tombstone can also go (a history rewrite: a reset, a rebase dropping the commit of a `forget`). Removing it
changes no memory file, so the tree diff re-reads nothing: before the scrub, the sync `restore`s the rows of
each record forgotten at the commit synced before and no longer (or for another reason) at the new one, from
their lines in the new commit. Only when a tombstone file changed, and only the files holding those rows.
"""

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson

from memstack.base import jsonio
from memstack.base.forgotten import Forgotten, masked
from memstack.replica.tables import FACTS, INTAKE, SCHEMA, Hide, Table, copy_lines
from memstack.repo import objects
from memstack.repo.sources import GitSource

TABLE_OF = {"fact": FACTS, "intake": INTAKE}


def at(root: Path, cat: objects.CatFile, tree: str) -> Forgotten:
    """The tombstones of the store's `tree` (a commit's), by the record they name."""
    return Forgotten.of(GitSource(root, cat, tree))


def hider(forgotten: Forgotten, table: Table) -> Hide | None:
    """How a row of `table` shows a record `forgotten` names (`tables.copy_lines`): its content is never
    copied in, so no old row version holds it on the server's disk. None when nothing there is forgotten."""
    kind = next((k for k, t in TABLE_OF.items() if t is table), None)
    if kind is None or not any(t.get("kind") == kind for t in forgotten.by_id.values()):
        return None

    def hide(record: Any) -> dict[str, Any] | None:
        ref = record.get("id") if type(record) is dict else None
        tombstone = forgotten.by_id.get(ref) if isinstance(ref, str) else None
        return masked(record, tombstone) if tombstone is not None and tombstone.get("kind") == kind else None
    return hide


def _rewrite(cur: Any, table: Table, redo: list[tuple[str, int, bytes]], hide: Hide | None = None) -> None:
    """Replace these rows (path, line_no) of `table` by the given lines (masked by `hide`)."""
    for path, number, _ in redo:
        cur.execute(f"DELETE FROM {SCHEMA}.{table.name} WHERE path = %s AND line_no = %s", (path, number))
    if redo:
        with cur.copy(f"COPY {SCHEMA}.{table.name} ({', '.join(table.copy_columns)}) FROM STDIN") as copy:
            for path, number, shown in redo:
                copy.write(copy_lines(table, path, [(number, shown)], hide))


def _committed(cat: objects.CatFile, tree: str, rows: list[tuple[str, int, str]]) -> Iterator[tuple[str, int, bytes]]:
    """(path, line_no, the line committed in `tree`) of the rows (path, line_no, line) that differ from it,
    each file read once."""
    by_path: dict[str, list[tuple[int, str]]] = {}
    for path, number, line in rows:
        by_path.setdefault(path, []).append((number, line))
    for path, numbered in sorted(by_path.items()):
        data = cat.read(f"{tree}:{path}")
        if data is None:
            continue  # no such file in `tree`: its rows went with the tree diff
        lines = data[:data.rfind(b"\n") + 1].split(b"\n")[:-1]
        for number, line in numbered:
            if number <= len(lines) and lines[number - 1] != line.encode("utf-8"):
                yield path, number, lines[number - 1]


def restore(cur: Any, cat: objects.CatFile, tree: str, before: Forgotten, after: Forgotten) -> int:
    """Give back their committed lines (in the store's `tree`) to the rows of the records forgotten in `before`
    (the commit synced last) but not in `after` (the one synced now), or forgotten there by another tombstone;
    returns how many rows changed. The scrub then shows the ones still forgotten as such."""
    changed = 0
    for kind, table in TABLE_OF.items():
        ids = [ref for ref, tombstone in before.by_id.items()
               if tombstone.get("kind") == kind and after.by_id.get(ref) != tombstone]
        if not ids:
            continue
        cur.execute(f"SELECT path, line_no, line FROM {SCHEMA}.{table.name} WHERE id = ANY(%s)", (ids,))
        redo = list(_committed(cat, tree, cur.fetchall()))
        _rewrite(cur, table, redo, hider(after, table))
        changed += len(redo)
    return changed


def scrub(cur: Any, forgotten: Forgotten) -> int:
    """Show the records `forgotten` names (the tombstones of the commit synced) as forgotten; returns how many
    rows changed."""
    changed = 0
    for kind, table in TABLE_OF.items():
        ids = [ref for ref, tombstone in forgotten.by_id.items() if tombstone.get("kind") == kind]
        if not ids:
            continue
        cur.execute(f"SELECT path, line_no, line FROM {SCHEMA}.{table.name} WHERE id = ANY(%s)", (ids,))
        redo = []
        for path, number, line in cur.fetchall():
            record = orjson.loads(line)
            shown = jsonio.dumps_line(masked(record, forgotten.by_id[record["id"]]))[:-1]
            if shown != line.encode("utf-8"):
                redo.append((path, number, shown))
        _rewrite(cur, table, redo)
        changed += len(redo)
    return changed
