"""`memstack pg sync`: copy the committed memory at HEAD into the replica, incrementally, in one transaction.

The replica remembers the commit and the store's tree it holds (`sync_state`).
A sync diffs that tree against HEAD's (`git diff-tree`: only the files that
changed, whether HEAD descends from the old commit or history was rewritten)
and, for each changed memory file, compares the old and the new blob line by
line: appended lines are inserted, changed lines (a fact's closing) replaced,
lines that are gone deleted. Blobs come from one `git cat-file --batch`, never
from the work tree, so uncommitted files are never replicated. When the old
tree is unknown to this clone (a replica fed by another clone, a pruned
history: only with --force, or after an excise here) or the replica holds
nothing yet, the tables are copied whole. A clone that is behind the replica (the
replica's commit unknown here, ahead of HEAD on a ref, or made after an excise that
HEAD predates) is refused unless forced: it would roll the replica back (lineage.py).

Everything happens in one transaction behind one advisory lock: a reader sees
the replica before or after a sync, never half of one, and an interrupted sync
leaves it as it was. Rows stream through COPY, one file in memory at a time.
"""

from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from memstack import __version__
from memstack.base import config, layout, progress
from memstack.base.errors import MemstackError
from memstack.base.forgotten import Forgotten
from memstack.replica import db, forgotten, lineage
from memstack.replica.tables import BY_KIND, SCHEMA, SYNC_STATE, TABLES, VERSION, Table, copy_lines
from memstack.repo import diffs, git, objects

LOCK_KEY = 0x6D656D737461636B  # "memstack": one sync at a time per database


@dataclass(frozen=True)
class Head:
    """What a sync copies: the commit, the store's tree in it, and the recall limit its memstack.yaml sets."""

    commit: str
    tree: str
    recall_limit: int


@dataclass
class Report:
    commit: str
    previous: str | None
    mode: str  # "unchanged", "incremental" or "full"
    files: int = 0
    inserted: dict[str, int] = field(default_factory=dict)
    deleted: dict[str, int] = field(default_factory=dict)
    restored: int = 0  # rows of records no longer forgotten (a tombstone gone), read again from their files

    def document(self) -> dict[str, Any]:
        return {"commit": self.commit, "previous": self.previous, "mode": self.mode, "files": self.files,
                "inserted": self.inserted, "deleted": self.deleted, "restored": self.restored}


def head(root: Path, cat: objects.CatFile) -> Head:
    """HEAD of the repository holding the store, and the store's own tree in it (the store may be a folder:
    `COMMIT:./` is the tree of the folder git runs in)."""

    commit = git.rev_parse(root, "HEAD")
    if commit is None:
        raise MemstackError(f"{root}: nothing committed yet — the replica copies committed memory only")
    tree = git.rev_parse(root, f"{commit}:./")
    text = None if tree is None else cat.read(f"{tree}:{config.CONFIG_NAME}")
    if tree is None or text is None:
        raise MemstackError(f"{root}: HEAD ({commit[:12]}) holds no committed {config.CONFIG_NAME} for this store"
                            " — commit the store first")
    document = config.parse(text.decode("utf-8", "replace"), f"{config.CONFIG_NAME} at {commit[:12]}")
    limit = (document.get("memory") or {}).get("recall_limit") or config.DEFAULTS["memory"]["recall_limit"]
    return Head(commit, tree, int(limit))


def state(cur: Any) -> tuple[str, str] | None:
    """(commit, tree) the replica holds, or None if it holds nothing usable (absent, another layout)."""
    cur.execute("SELECT to_regclass(%s)", (f"{SCHEMA}.sync_state",))
    if cur.fetchone()[0] is None:
        return None
    cur.execute(f"SELECT schema_version, commit, tree FROM {SCHEMA}.sync_state")
    found = cur.fetchone()
    if found is None or found[0] != VERSION:
        return None
    for table in TABLES:
        cur.execute("SELECT to_regclass(%s)", (f"{SCHEMA}.{table.name}",))
        if cur.fetchone()[0] is None:
            return None
    return found[1], found[2]


def _recreate(cur: Any) -> None:
    """The replica's tables anew and empty, indexes not yet built (a whole copy loads faster without)."""
    cur.execute("SELECT 1 FROM pg_namespace WHERE nspname = %s", (SCHEMA,))
    if cur.fetchone() is None:  # only then: CREATE SCHEMA needs the CREATE privilege on the database
        cur.execute(f"CREATE SCHEMA {SCHEMA}")
    for name in ("sync_state", *(t.name for t in TABLES)):
        cur.execute(f"DROP TABLE IF EXISTS {SCHEMA}.{name}")
    for table in TABLES:
        cur.execute(table.ddl())
    cur.execute(SYNC_STATE)


def _empty(cur: Any) -> None:
    """The replica's tables emptied for a whole copy, their indexes dropped (built again after the load).
    Emptied rather than recreated: grants and the views people built on them stay."""
    cur.execute(f"TRUNCATE {', '.join(f'{SCHEMA}.{t.name}' for t in TABLES)}")
    for table in TABLES:
        for number in range(len(table.indexes)):
            cur.execute(f"DROP INDEX IF EXISTS {SCHEMA}.{table.name}_{number}")


def complete_lines(data: bytes) -> list[bytes]:
    """The lines of a blob that end with a newline (an unfinished last line is not yet a record, as in the index)."""
    return data[:data.rfind(b"\n") + 1].split(b"\n")[:-1]


def line_changes(old: bytes, new: bytes) -> tuple[list[int], list[int]]:
    """(line numbers whose old row goes, line numbers whose new row comes) between two blobs of a file."""
    if new.startswith(old) and (not old or old.endswith(b"\n")):  # appended only: the usual change
        start = old.count(b"\n")
        return [], list(range(start + 1, start + new.count(b"\n", len(old)) + 1))
    before, after = complete_lines(old), complete_lines(new)
    changed = [n for n, (a, b) in enumerate(zip(before, after, strict=False), start=1) if a != b]
    gone = list(range(len(after) + 1, len(before) + 1))
    added = list(range(len(before) + 1, len(after) + 1))
    return changed + gone, changed + added


@dataclass
class _Plan:
    table: Table
    path: str
    sha: str | None = None  # the new blob (None: the file is gone)
    lines: list[int] | None = None  # the new blob's lines to insert (None: all)


def _memory_changes(changes: Iterable[diffs.Change]) -> Iterator[tuple[Table, diffs.Change]]:
    for change in changes:
        table = BY_KIND.get(layout.classify(change.path).kind)
        if table is not None:
            yield table, change


def _apply_deletes(cur: Any, cat: objects.CatFile, changes: list[diffs.Change], table: Table,
                   report: Report) -> list[_Plan]:
    """Delete the rows that go; returns what to insert."""
    plans = []
    for change in changes:
        regular_old = change.old_mode in git.REGULAR
        regular_new = change.new_mode in git.REGULAR
        if regular_old and not regular_new:  # deleted (or no longer a regular file)
            cur.execute(f"DELETE FROM {SCHEMA}.{table.name} WHERE path = %s", (change.path,))
            report.deleted[table.name] = report.deleted.get(table.name, 0) + cur.rowcount
        elif regular_new and not regular_old:
            plans.append(_Plan(table, change.path, change.new_sha))
        elif regular_new:
            old, new = cat.read(change.old_sha), cat.read(change.new_sha)
            if old is None or new is None:
                raise MemstackError(f"git: the blobs of {change.path} are missing from this clone")
            gone, come = line_changes(old, new)
            if gone:
                cur.execute(f"DELETE FROM {SCHEMA}.{table.name} WHERE path = %s AND line_no = ANY(%s)",
                            (change.path, gone))
                report.deleted[table.name] = report.deleted.get(table.name, 0) + cur.rowcount
            if come:
                plans.append(_Plan(table, change.path, change.new_sha, come))
    return plans


def _copy(cur: Any, cat: objects.CatFile, table: Table, plans: list[_Plan], report: Report, shown: Any,
          hidden: Forgotten) -> None:
    if not plans:
        return
    hide = forgotten.hider(hidden, table)
    count = 0
    with cur.copy(f"COPY {SCHEMA}.{table.name} ({', '.join(table.copy_columns)}) FROM STDIN") as copy:
        for plan in plans:
            assert plan.sha is not None
            data = cat.read(plan.sha)
            if data is None:
                raise MemstackError(f"git: the blob of {plan.path} is missing from this clone")
            lines = complete_lines(data)
            del data
            wanted = range(1, len(lines) + 1) if plan.lines is None else plan.lines
            copy.write(copy_lines(table, plan.path, ((n, lines[n - 1]) for n in wanted), hide))
            count += len(wanted)
            shown.update(1)
    report.inserted[table.name] = report.inserted.get(table.name, 0) + count


def sync(root: Path, dsn: str, force: bool = False) -> Report:
    """Bring the replica at `dsn` to the committed memory at HEAD of the store at `root`. Refused when HEAD
    would roll the replica back (`lineage.refusal`), unless `force`."""
    with objects.CatFile(root) as cat:
        target = head(root, cat)
        return _sync(root, dsn, target, cat, force)


def _sync(root: Path, dsn: str, target: Head, cat: objects.CatFile, force: bool = False) -> Report:
    conn = db.connect(dsn, "connect")
    try:
        with db.translated(dsn, "sync the replica"), conn.transaction(), conn.cursor() as cur:
            cur.execute("SELECT pg_advisory_xact_lock(%s)", (LOCK_KEY,))
            held = state(cur)
            previous = held[0] if held else None
            if held is not None and held[0] == target.commit:
                return Report(target.commit, previous, "unchanged")
            why = None if held is None or force else lineage.refusal(root, cat, held, (target.commit, target.tree))
            if why is not None:
                raise MemstackError(why)
            known = held is not None and cat.read_object(held[1]) is not None
            report = Report(target.commit, previous, "incremental" if known else "full")
            if held is None:
                _recreate(cur)
            elif not known:
                _empty(cur)
            old_tree = held[1] if held is not None and known else git.EMPTY_TREE
            changes = diffs.tree_diffs(root, [(old_tree, target.tree)])[0]
            by_table: dict[str, list[diffs.Change]] = {}
            for table, change in _memory_changes(changes):
                by_table.setdefault(table.name, []).append(change)
            tombstones_changed = any(layout.classify(c.path).kind == layout.TOMBSTONES for c in changes)
            report.files = sum(len(c) for c in by_table.values())
            now_forgotten = forgotten.at(root, cat, target.tree)  # copied in as the reads show them
            with progress.bar(report.files, "pg sync", "files") as shown:
                for table in TABLES:
                    plans = _apply_deletes(cur, cat, by_table.get(table.name, []), table, report)
                    shown.update(len(by_table.get(table.name, [])) - len(plans))  # files that only lost rows
                    _copy(cur, cat, table, plans, report, shown, now_forgotten)
            if report.mode == "incremental" and tombstones_changed:  # a tombstone gone (a forget undone)
                assert held is not None
                report.restored = forgotten.restore(cur, cat, target.tree, forgotten.at(root, cat, held[1]),
                                                    now_forgotten)
            forgotten.scrub(cur, now_forgotten)  # no forgotten content in the replica
            if report.mode == "full":
                cur.execute("SET LOCAL maintenance_work_mem = '256MB'")  # the index builds after a whole load
                for table in TABLES:
                    for sql in table.index_ddl():
                        cur.execute(sql)
                    cur.execute(f"ANALYZE {SCHEMA}.{table.name}")
            cur.execute(
                f"INSERT INTO {SCHEMA}.sync_state (schema_version, commit, tree, synced_at, synced_ms,"
                " memstack_version, recall_limit) VALUES (%s, %s, %s, now(),"
                " (extract(epoch FROM now()) * 1000)::bigint, %s, %s)"
                " ON CONFLICT (only_row) DO UPDATE SET schema_version = EXCLUDED.schema_version,"
                " commit = EXCLUDED.commit, tree = EXCLUDED.tree, synced_at = EXCLUDED.synced_at,"
                " synced_ms = EXCLUDED.synced_ms, memstack_version = EXCLUDED.memstack_version,"
                " recall_limit = EXCLUDED.recall_limit",
                (VERSION, target.commit, target.tree, __version__, target.recall_limit))
            return report
    finally:
        conn.close()
