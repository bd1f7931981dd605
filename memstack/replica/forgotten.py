"""Forgotten records in the PostgreSQL replica (docs/forgetting.md): it holds no forgotten content.

At the end of every sync, inside its transaction, each record a committed tombstone names (at the commit
synced) is copied again as every read shows it, `[forgotten: reason]` in its columns and in its `line`,
so neither a read verb with `--pg` nor a person with SQL finds the content. A row already shown so is left
as it is; a forgotten fact's later closing, copied by the sync as its new line, is shown so again.
"""

from pathlib import Path
from typing import Any

import orjson

from memstack.base import jsonio
from memstack.base.forgotten import Forgotten, masked
from memstack.replica.tables import FACTS, INTAKE, SCHEMA, copy_lines
from memstack.repo import objects
from memstack.repo.sources import GitSource

TABLE_OF = {"fact": FACTS, "intake": INTAKE}


def scrub(cur: Any, root: Path, cat: objects.CatFile, tree: str) -> int:
    """Show the forgotten records of the store's `tree` as forgotten; returns how many rows changed."""
    forgotten = Forgotten.of(GitSource(root, cat, tree))
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
        for path, number, _ in redo:
            cur.execute(f"DELETE FROM {SCHEMA}.{table.name} WHERE path = %s AND line_no = %s", (path, number))
        if redo:
            with cur.copy(f"COPY {SCHEMA}.{table.name} ({', '.join(table.copy_columns)}) FROM STDIN") as copy:
                for path, number, shown in redo:
                    copy.write(copy_lines(table, path, [(number, shown)]))
        changed += len(redo)
    return changed
