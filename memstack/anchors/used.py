"""The status of the code anchors of the records a read hands out (`recall`, `search`, `fact get-valid-at`,
`fact history` and their MCP tools): each anchored record gets `code_status`, `{"status": its worst anchor's,
"anchors": [{"status", "now"[, "reason"]}, ...]}` in the order of its `anchors` (the hunks of a drifted anchor
are `memstack anchors`' to show). Only the returned records' anchors are followed, into one work tree opened
once (follow.py), with the cache `memstack anchors` keeps (survey.py). A store with no code repository to
follow them into (standalone, no `code.repo`) shows no status: a read never fails for it."""

from collections.abc import Iterable, Iterator
from pathlib import Path
from types import TracebackType
from typing import Any

from memstack.anchors.coderepo import code_repository
from memstack.anchors.follow import Follower, worst
from memstack.anchors.records import anchored_facts, latest, rechecked
from memstack.anchors.survey import CACHE, load_cache
from memstack.base import files, jsonio
from memstack.base.errors import MemstackError
from memstack.repo.codetree import CodeTree
from memstack.repo.store import Store

FIELD = "code_status"
TO_REVERIFY = ("drifted", "orphaned")  # the statuses an agent is asked to re-check at the start of a session
BOOT_MOST = 50  # the most facts to re-verify `boot show` lists (the most recently recorded)


def compact(followed: list[dict[str, Any]]) -> dict[str, Any]:
    """What a read shows of a record's followed anchors: the worst status, and each anchor's status and place."""
    return {"status": worst(followed),
            "anchors": [{"status": a["status"], "now": a["now"], **({"reason": a["reason"]} if "reason" in a else {})}
                        for a in followed]}


class CodeStatus:
    """Follows the anchors of records as a read hands them out; the code tree is opened at the first anchored
    record and closed (its cache saved) by `close`. `store` None (no store at all): no status."""

    def __init__(self, store: Path | None) -> None:
        self.store = store
        self._follower: Follower | None = None
        self._tree: CodeTree | None = None
        self._known: dict[str, Any] = {}
        self._checked: dict[str, dict[str, Any]] | None = None
        self._none = store is None  # no code repository to follow anchors into
        self._listed: set[str] = set()  # the paths whose entries the follower holds (absent there: no file)

    def __enter__(self) -> "CodeStatus":
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None,
                 trace: TracebackType | None) -> None:
        self.close()

    def _open(self, paths: set[str]) -> Follower | None:
        if self._none or self.store is None:
            return None
        if self._tree is None:
            try:
                top = code_repository(Store(self.store))
            except MemstackError:  # standalone without code.repo (or a broken one): reads go on without status
                self._none = True
                return None
            self._tree = CodeTree(top, store=self.store)
            try:
                self._known = load_cache(files.local_dir(self.store, "anchors") / CACHE)
            except (OSError, MemstackError):  # a store we may not write to: read without the cache
                self._known = {}
            self._checked = latest(self.store)  # the re-checks: read without the writing code
            self._follower = Follower(self._tree, {}, self._known)
        assert self._follower is not None and self._tree is not None
        missing = paths - self._listed
        if missing:  # what each new path is now: one listing of the index per batch of records
            self._follower.entries.update(self._tree.entries(missing))
            self._listed |= missing
        return self._follower

    def anchors_of(self, record: dict[str, Any]) -> list[dict[str, Any]]:
        """The anchors to follow: a reverified fact's as `anchors reverify` took them again."""
        anchors: list[dict[str, Any]] = rechecked(record, self._checked or {})["anchors"]
        return anchors

    def add(self, records: Iterable[Any]) -> list[Any]:
        """`records` with `code_status` on each that has anchors (a list, in order)."""
        records = list(records)
        anchored = [r for r in records if isinstance(r, dict) and r.get("anchors")]
        if not anchored:
            return records
        follower = self._open(set())
        if follower is None:
            return records
        followed = {id(r): self.anchors_of(r) for r in anchored}
        follower = self._open({a["path"] for anchors in followed.values() for a in anchors})
        assert follower is not None
        return [{**r, FIELD: compact([follower.follow(a) for a in followed[id(r)]])} if id(r) in followed else r
                for r in records]

    def each(self, records: Iterable[Any], chunk: int = 256) -> Iterator[Any]:
        """`add` over a stream, a chunk at a time (the paths of a chunk listed at once)."""
        batch: list[Any] = []
        for record in records:
            batch.append(record)
            if len(batch) >= chunk:
                yield from self.add(batch)
                batch = []
        yield from self.add(batch)

    def close(self) -> None:
        if self._tree is None:
            return
        self._tree.close()
        self._tree = None
        assert self._follower is not None
        learned = {**self._known, **self._follower.learned}
        if learned != self._known:  # only what this read found is added: the survey's own entries stay
            try:
                files.write_atomic(files.local_dir(self.store or Path(), "anchors") / CACHE, jsonio.dumps_line(learned))
            except (OSError, MemstackError):
                pass  # a cache: a read never fails for want of writing it


def with_code_status(store: Path | None, records: Iterable[Any]) -> list[Any]:
    """`records` (facts or intake records) with the status of their code anchors, where it can be told."""
    with CodeStatus(store) as status:
        return status.add(records)


def to_reverify(store: Path, agent: str) -> tuple[list[dict[str, Any]], int] | None:
    """`boot show`'s `to_reverify`: the agent's open facts whose code anchors drifted or are orphaned in the
    work tree, most recently recorded first (at most BOOT_MOST), and how many more; None when there is no
    code repository to follow them into."""
    try:
        code_repository(Store(store))
    except MemstackError:
        return None
    shown = with_code_status(store, [fact for fact in anchored_facts(store, None) if fact.get("agent") == agent])
    found = sorted((f for f in shown if f[FIELD]["status"] in TO_REVERIFY),
                   key=lambda f: (-int(f.get("recorded_at", 0)), str(f["id"])))
    brief = [{key: fact[key] for key in ("id", "subject", "predicate", "object", "recorded_at", FIELD)}
             for fact in found[:BOOT_MOST]]
    return brief, max(len(found) - BOOT_MOST, 0)
