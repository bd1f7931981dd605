"""Reading a range into a review: one tree diff, each changed memory file streamed line by line from git.

What a file adds goes to the workspace as it is read, in batches redacted together
(secrets.redact screens a batch with its byte prefilter); only counts (intake by
agent and tier, promotions by sub-tier) and the range's check stay in memory.
"""

from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from hashlib import blake2b
from pathlib import Path
from typing import Any

import orjson

from memstack.base import layout, progress, secrets
from memstack.base.errors import MemstackError
from memstack.base.forgotten import Forgotten
from memstack.integrity import check, migration
from memstack.kb.facts import superseded_by_change
from memstack.kb.views import Shards
from memstack.repo import diffs, git, objects
from memstack.repo.sources import GitSource
from memstack.review.workspace import Workspace, dump, key

BATCH = 2_000  # records redacted and written together
INTAKE_FIELDS = ("id", "agent", "tier", "confidence", "title", "created_at", "content")
ITEM_SECTIONS = ("binder", "binder_edges", "binder_files", "reverified", "forgotten", "erasures", "handoffs", "soil",
                 "derived")  # the workspace's items


@dataclass
class Review:
    """A range read: the records in `workspace`, the rest here, every string redacted."""

    range: str
    workspace: Workspace
    policy: secrets.Policy
    repo: Path = Path()
    tip: str = ""  # the commit B: records named but not added by the range are read as B holds them
    folder: str = ""  # the store's folder in the repository ("" or "path/")
    commits: int = 0
    intake: dict[str, dict[str, int]] = field(default_factory=dict)  # agent -> tier -> records
    promotions: dict[str, int] = field(default_factory=dict)  # sub-tier -> records
    ledger_shards: dict[str, int] = field(default_factory=dict)  # ledger shard -> lines the range added
    formats: tuple[Any, Any] | None = None  # the store's format before and after, when the range changes it
    moved: int = 0  # format 1's ledger lines the range moved unchanged to the shards (`memstack migrate`)
    violations: list[dict[str, Any]] = field(default_factory=list)
    secrets: list[dict[str, Any]] = field(default_factory=list)
    forgotten: Forgotten = field(default_factory=Forgotten)  # the tombstones at the tip (docs/forgetting.md)
    anchors: dict[str, Any] | None = None  # `anchors check` of the range; None: the range holds no code

    def shown(self, items: list[Any]) -> list[Any]:
        """`items` as the report shows them: a forgotten record (or either side of a closing) without its
        content, every credential redacted."""
        def masked(item: Any) -> Any:
            if isinstance(item, dict) and ("before" in item or "after" in item):
                return {k: self.forgotten.mask(v) for k, v in item.items()}
            return self.forgotten.mask(item)

        return secrets.redact([masked(i) for i in items] if self.forgotten else items, self.policy)

    def superseded(self, limit: int = -1) -> Iterator[dict[str, Any]]:
        """The facts the range superseded (`superseded_by_change`), by subject and id: `before` (None for a
        fact the range added already closed), `after`, and `successor` when the range adds it."""
        rows = self.workspace.db.execute("SELECT s.data, f.data FROM superseded s"
                                         " LEFT JOIN facts f ON f.id = s.successor"
                                         " ORDER BY s.subject, s.id, s.seq LIMIT ?", (limit,))
        for data, successor in rows:
            yield {**orjson.loads(data), "successor": orjson.loads(successor) if successor is not None else None}

    def counts(self) -> dict[str, int]:
        """How many items each list of the report holds in all (`Binder waiting`: those the range did not
        decide)."""
        workspace = self.workspace
        return {"facts_added": workspace.count("facts"), "facts_superseded": workspace.count("superseded"),
                "intake_records": workspace.count("intake"),
                "binder_waiting": workspace.count("waiting", "WHERE rid NOT IN (SELECT id FROM decided)"),
                **{section: workspace.count("items", "WHERE section = ?", section) for section in ITEM_SECTIONS},
                "secrets": len(self.secrets), "violations": len(self.violations),
                "code_anchors_stale": len(self.anchors["files"]) if self.anchors else 0,
                "code_anchors_stale_records": self.anchors["stale"] if self.anchors else 0}

    def stale_files(self) -> list[dict[str, Any]]:
        """The changed files whose code anchors the range made stale (`anchors check`), as the report shows
        them: each record masked if forgotten, every credential redacted."""
        files = (self.anchors or {}).get("files", [])
        return self.shown([{**changed, "records": self.shown(changed["records"])} for changed in files])

    def close(self) -> None:
        self.workspace.close()

    def __enter__(self) -> "Review":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _records(lines: Iterator[bytes]) -> Iterator[dict[str, Any]]:
    for line in lines:
        try:
            record = orjson.loads(line)
        except orjson.JSONDecodeError:
            continue  # the violations section reports it
        if isinstance(record, dict):
            yield record


def _digest(line: bytes) -> bytes:
    return blake2b(line, digest_size=16).digest()


class _Reader:
    """Reads each change of the range into the review."""

    def __init__(self, repo: Path, review: Review) -> None:
        self.review = review
        self.workspace = review.workspace
        self.db = review.workspace.db
        self.blobs = objects.CatFile(repo)
        self.intake_counts: dict[str, Counter[str]] = {}
        self.promotions: Counter[str] = Counter()
        self.shards: Counter[str] = Counter()
        self.moving = False  # the range deletes format 1's ledger: its lines, in `moved_lines`, moved to the shards

    def lines(self, sha: str) -> Iterator[bytes]:
        return iter(()) if git.is_zero(sha) else objects.lines(self.blobs.stream(sha))

    def new_lines(self, change: diffs.Change, moved: bool = False) -> Iterator[dict[str, Any]]:
        """The records of the lines the new side has and the old one has not (an append-only log's new lines);
        with `moved`, less the lines of format 1's ledger the range deleted (`unmoved`).

        An append (the new side starts with the old one's bytes, which end a line) costs a digest of each
        side and yields the appended lines, all of them (one equal to an older line too: it was appended).
        Any other change remembers a digest of each old line in the workspace and yields the new lines it has
        not seen."""
        records = self.unmoved if moved and self.moving else _records
        if git.is_zero(change.old_sha):
            yield from records(self.lines(change.new_sha))
            return
        digest, size, whole = self._hashed(change.old_sha)
        if whole:
            appended: list[bool] = []
            yield from records(objects.lines(self._after(change.new_sha, size, digest, appended)))
            if appended[0]:
                return
        self.db.execute("DELETE FROM old_lines")
        self.db.executemany("INSERT OR IGNORE INTO old_lines VALUES (?)",
                            ((_digest(line),) for line in self.lines(change.old_sha)))
        known = self.db.cursor()
        yield from records(line for line in self.lines(change.new_sha)
                           if known.execute("SELECT 1 FROM old_lines WHERE digest = ?",
                                            (_digest(line),)).fetchone() is None)

    def old_ledger(self, changes: list[diffs.Change]) -> None:
        """Format 1's ledger, when the range deletes it (`memstack migrate` moves its lines to the shards, each
        unchanged: the range's check verifies it): a digest of each of its lines, each found in a shard later
        a line moved, not a promotion."""
        for change in changes:
            if change.path == layout.V1_LEDGER and change.deleted and not git.is_zero(change.old_sha):
                self.moving = True
                self.db.executemany("INSERT OR IGNORE INTO moved_lines VALUES (?)",
                                    ((_digest(line),) for line in self.lines(change.old_sha)))

    def unmoved(self, lines: Iterator[bytes]) -> Iterator[dict[str, Any]]:
        """The records of `lines` that are not format 1's ledger's lines moved (those counted)."""
        known = self.db.cursor()

        def kept(line: bytes) -> bool:
            if known.execute("SELECT 1 FROM moved_lines WHERE digest = ?", (_digest(line),)).fetchone() is None:
                return True
            self.review.moved += 1
            return False

        return _records(line for line in lines if kept(line))

    def _hashed(self, sha: str) -> tuple[bytes, int, bool]:
        """A blob's digest, its size, and whether it is empty or ends a line."""
        digest, size, last = blake2b(digest_size=16), 0, b""
        for piece in self.blobs.stream(sha):
            digest.update(piece)
            size, last = size + len(piece), piece[-1:]
        return digest.digest(), size, last in (b"", b"\n")

    def _after(self, sha: str, size: int, digest: bytes, appended: list[bool]) -> Iterator[bytes]:
        """The bytes of blob `sha` after its first `size`, if those have `digest` (an append; else nothing).
        Whether they had is appended to `appended` once the blob is read to its end."""
        prefix, left, same = blake2b(digest_size=16), size, None
        for piece in self.blobs.stream(sha):
            if left:
                taken = piece[:left]
                prefix.update(taken)
                left, piece = left - len(taken), piece[len(taken):]
                if left:
                    continue
            if same is None:
                same = prefix.digest() == digest
            if same and piece:
                yield piece
        appended.append(same if same is not None else not left and prefix.digest() == digest)

    def redacted(self, items: list[Any]) -> list[Any]:
        return self.review.shown(items)

    def intake(self, change: diffs.Change) -> None:
        for batch in _batches(self.new_lines(change)):
            for record in batch:
                self.intake_counts.setdefault(str(record.get("agent")), Counter())[str(record.get("tier"))] += 1
            shown = self.redacted([{k: r.get(k) for k in INTAKE_FIELDS} for r in batch])
            self.db.executemany("INSERT INTO intake VALUES (?, ?, ?, ?, ?, ?)",
                                ((self.workspace.seq(), key(r.get("created_at")), key(r.get("id")), str(s.get("agent")),
                                  str(s.get("id")), dump(s)) for r, s in zip(batch, shown, strict=True)))

    def routed(self, change: diffs.Change) -> None:
        for batch in _batches(self.new_lines(change, moved=True)):
            self.promotions.update(str(line.get("sub_tier")) for line in batch)
            self.shards[change.path] += len(batch)
            waiting = [str(line.get("intake_id")) for line in batch if line.get("sub_tier") == "binder"]
            self.db.executemany("INSERT INTO waiting VALUES (?, ?)",
                                ((self.workspace.seq(), rid) for rid in self.redacted(waiting)))

    def binder(self, change: diffs.Change) -> None:
        for batch in _batches(self.new_lines(change)):
            self.workspace.add_items("binder", self.redacted([d for d in batch if d.get("kind") is None]))
            self.workspace.add_items("binder_edges", self.redacted([d for d in batch if d.get("kind") == "edge"]))
            self.workspace.add_items("binder_files", self.redacted([d for d in batch if d.get("kind") == "file"]))
            self.workspace.add_items("reverified", self.redacted([d for d in batch if d.get("kind") == "reverify"]))

    def facts(self, change: diffs.Change) -> None:
        """Facts the new side adds (by id), and the facts it supersedes (`superseded_by_change`): those it
        closes that were open, and those it adds already closed."""
        had_old = not git.is_zero(change.old_sha)
        if had_old:
            self.db.execute("DELETE FROM old_facts")
            self.db.executemany("INSERT OR REPLACE INTO old_facts VALUES (?, ?)",
                                ((f["id"], orjson.dumps(f)) for f in _records(self.lines(change.old_sha))
                                 if isinstance(f.get("id"), str)))
        before = self.db.cursor()
        for batch in _batches(f for f in _records(self.lines(change.new_sha)) if isinstance(f.get("id"), str)):
            added, closed = [], []
            for fact in batch:
                row = before.execute("SELECT data FROM old_facts WHERE id = ?", (fact["id"],)).fetchone() \
                    if had_old else None
                if row is None:
                    added.append(fact)
                    if superseded_by_change(None, fact):
                        closed.append((None, fact))
                    continue
                prior = orjson.loads(row[0])
                if superseded_by_change(prior, fact):
                    closed.append((prior, fact))
            self.db.executemany("INSERT OR REPLACE INTO facts VALUES (?, ?, ?)",
                                ((f["id"], key(f.get("subject")), dump(s))
                                 for f, s in zip(added, self.redacted(added), strict=True)))
            shown = self.redacted([{"before": prior, "after": fact} for prior, fact in closed])
            self.db.executemany("INSERT INTO superseded VALUES (?, ?, ?, ?, ?)",
                                ((self.workspace.seq(), key(fact.get("subject")), key(fact["id"]),
                                  fact.get("superseded_by") if isinstance(fact.get("superseded_by"), str) else None,
                                  dump(s)) for (_, fact), s in zip(closed, shown, strict=True)))

    def read(self, change: diffs.Change) -> None:
        place = layout.classify(change.path)
        if place.kind == layout.INTAKE:
            self.intake(change)
        elif place.kind == layout.PROMOTIONS:
            self.routed(change)
        elif place.kind == layout.BINDER:
            self.binder(change)
        elif place.kind == layout.FACTS:
            self.facts(change)
        elif place.kind in (layout.TOMBSTONES, layout.ERASURES):  # what was forgotten, and erased from history
            section = "forgotten" if place.kind == layout.TOMBSTONES else "erasures"
            for batch in _batches(self.new_lines(change)):
                self.workspace.add_items(section, self.redacted(batch))
        elif place.kind == layout.HANDOFF and change.added:
            self.workspace.add_items("handoffs", self.redacted([{"path": change.path, "agent": place.agent,
                                                             "date": place.date}]))
        elif place.kind == layout.SOIL:
            what = "added" if change.added else "deleted" if change.deleted else "changed"
            self.workspace.add_items("soil", self.redacted([{"path": change.path, "change": what}]))
        elif place.kind in layout.DERIVED:
            self.workspace.add_items("derived", self.redacted([change.path]))
        elif change.path == layout.CONFIG and not (change.added or change.deleted):
            formats = tuple(migration.format_in(self.blobs.read(sha)) for sha in (change.old_sha, change.new_sha))
            self.review.formats = (formats[0], formats[1]) if formats[0] != formats[1] else None

    def settled(self, tip: GitSource) -> None:
        """The records no Binder queue holds at the range's end, as `binder list` finds them (kb/views.py:
        decided in the Binder's log, or forgotten), read only when the range routed a record to the Binder."""
        if self.workspace.count("waiting"):
            self.db.executemany("INSERT OR IGNORE INTO decided VALUES (?)", ((rid,) for rid in Shards(tip).left))


def _batches(records: Iterator[dict[str, Any]]) -> Iterator[list[dict[str, Any]]]:
    batch = []
    for record in records:
        batch.append(record)
        if len(batch) == BATCH:
            yield batch
            batch = []
    if batch:
        yield batch


def read_range(repo: Path, spec: str, folder: str = "") -> Review:
    """The review of `spec` (A..B): the net change from the merge base of A and B to B, as a pull request
    shows it, and the check of the range's commits. Close it (a context manager) when done."""
    base, _, tip = git.range_ends(repo, spec)  # no shared history: everything B holds is added
    trees = [(base and git.rev_parse(repo, f"{base}^{{tree}}")) or git.EMPTY_TREE,
             git.rev_parse(repo, f"{tip}^{{tree}}") or git.EMPTY_TREE]
    changes = diffs.tree_diffs(repo, [(trees[0], trees[1])], folder)[0]
    try:
        policy = secrets.for_store(repo / folder)  # its extra patterns redact too
    except MemstackError:
        policy = secrets.DEFAULT  # a broken memstack.yaml: the range's check reports it
    review = Review(secrets.redact(spec, policy), Workspace(), policy, repo, tip, folder)
    try:
        reader = _Reader(repo, review)
        try:
            at_tip = GitSource(repo, reader.blobs, tip or None, folder)
            review.forgotten = Forgotten.of(at_tip)
            reader.old_ledger(changes)
            with progress.bar(len(changes), "reading the range", "files") as shown:
                for change in changes:
                    reader.read(change)
                    shown.update(1)
            reader.settled(at_tip)
        finally:
            reader.blobs.close()
        review.workspace.db.execute("COMMIT")
        review.intake = secrets.redact({agent: dict(sorted(c.items()))
                                        for agent, c in sorted(reader.intake_counts.items())}, policy)
        review.promotions = secrets.redact(dict(sorted(reader.promotions.items())), policy)
        review.ledger_shards = dict(sorted(reader.shards.items()))
        checked = check.check_range(repo, spec, folder)
        review.commits = len(checked.results)
        violations = checked.to_dict()["violations"]
        review.secrets = secrets.redact([{k: v[k] for k in ("commit", "path", "line", "what")}
                                         for v in violations if v["rule"] == "I8"], policy)
        review.violations = secrets.redact(violations, policy)
    except BaseException:
        review.close()
        raise
    return review
