"""`memstack promote`, the norn-pass: route pending intake into the KB, derive the views, commit.

One pass, with the store's state loaded once:

1. every intake record not yet in `kb/promotions.jsonl` is routed (routing.py)
   to knowledge, jeles_atoms, opus_atoms or the binder; records a human has
   ratified since the last pass go to knowledge at tier `ratified`;
2. a routed record becomes a fact with its provenance. The triple is the
   record's `subject`/`predicate`/`object` when it has them; otherwise subject =
   the title (or `note:<intake id>` without one), predicate `noted`, object =
   the content. Its id is derived from the intake id (`<id>-f`, `<id>-r` when
   ratified), valid_from and recorded_at are the record's `created_at` (the
   decision's `decided_at` when ratified): no clock, so the same logs give the
   same facts;
3. a new fact supersedes the open facts of its table, subject and predicate
   with another object: they are closed at its valid_from. A new fact older
   than an open one is added already closed, superseded by it. An open fact
   with the same object makes the record a duplicate: no new fact, the ledger
   points at the existing one;
4. facts are appended, closings written, ledger lines appended, views and boot
   files rebuilt, and everything under `kb/`, `intake/` and `handoffs/` and the
   boot files is committed, in one commit.

Each step streams (docs/bounded.md, "Promotion at scale"): a pending record is kept as one int (its
time, file and line) and read back BATCH at a time. The records are routed, decided and written
CHUNK at a time in time order, a chunk never splitting a millisecond and taking the ratified records
of its span, so the facts of one chunk are all older than the next one's: a chunk boundary changes
when lines are written, never what (the ledger lines of ratified records come last, as in one pass).

Interrupted anywhere, a second run finishes the same work: fact ids are
derived, so facts already written are not written twice, and whatever the
ledger holds is committed with the rebuilt views.
"""

import dataclasses
import itertools
import os
import re
import sys
from array import array
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any, NamedTuple

from memstack.base import config, files, ids, jsonio, layout, schemas
from memstack.base.errors import MemstackError
from memstack.base.output import plural
from memstack.base.spill import Spill
from memstack.base.times import parse_ts
from memstack.boot import context as boot
from memstack.integrity import buildmemo
from memstack.kb import facts, factstore, views
from memstack.kb.factfiles import Closing
from memstack.kb.facts import Fact
from memstack.kb.index import queries
from memstack.kb.routing import BROKEN, FACT_TABLES, SUB_TIERS, Rules, route
from memstack.repo import git
from memstack.repo.sources import WorktreeSource
from memstack.workflows import pending

NOTED = "noted"
BATCH = 8192  # records read back, facts parsed, lines written at a time
CHUNK = 1 << 16  # records routed, decided and written at a time: all a promotion holds beyond one int a record
_MASK = (1 << 32) - 1  # a pending record's file number and line number, each in 32 bits of its key
TRAILERS = {"knowledge": "Knowledge", "jeles_atoms": "Jeles-Atoms", "opus_atoms": "Opus-Atoms", "binder": "Binder"}


def fact_id_for(intake_id: str, recorded: int, ratified: bool = False, agent: str | None = None) -> str:
    """The fact an intake record becomes: deterministic, bound to its agent and recorded_at (memstack/base/ids.py)."""
    return ids.derived(intake_id, "r" if ratified else "f", recorded, agent)


def triple(record: dict[str, Any]) -> tuple[str, str, str]:
    if record.get("subject"):
        return record["subject"], record["predicate"], record["object"]
    return (record["title"].strip() or f"note:{record['id']}"), NOTED, record["content"]


def _pending_problem(record: dict[str, Any]) -> str | None:
    problems = schemas.errors("intake", record)
    if problems:
        return f"I5 invalid intake record: {problems[0]}"
    if parse_ts(record["created_at"], "created_at") < 0:
        return "I5 created_at is before 1970: a fact's transaction time cannot be"
    return None


class _Pending:
    """The records a promotion routes, gathered one file at a time, each kept as one int, its key:
    (created_at in ms, file number, line number) packed so that sorted keys are the records in time
    order, ties in the order they were read (a million cost about 48 MB). A record already promoted is
    dropped once its id is read; one that is not a valid intake record stops the promotion, named by
    path:line; an id read twice is promoted once, where it was first read."""

    def __init__(self, store: Path, done: set[str], wanted: set[str]) -> None:
        self.store, self.done, self.wanted = store, done, wanted
        self.keys: list[int] = []
        self.hashes = array("q")  # the hash of each key's id, in step with the keys: ids read twice
        self.files: list[str] = []  # by file number
        self._numbers: dict[str, int] = {}
        self.by_id: dict[str, dict[str, Any]] = {}

    def take(self, relpath: str, number: int, record: dict[str, Any]) -> None:
        ident = record.get("id")
        if isinstance(ident, str) and ident in self.done:
            if ident in self.wanted:
                self.by_id[ident] = record
            return
        problem = _pending_problem(record)
        if problem:
            raise MemstackError(f"{relpath}:{number}: {problem} — fix the record (`git checkout --"
                                f" {relpath}` if it was committed fine), then promote again")
        if ident in self.wanted:
            self.by_id[ident] = record  # type: ignore[index]
        file_number = self._numbers.get(relpath)
        if file_number is None:
            file_number = self._numbers[relpath] = len(self.files)
            self.files.append(relpath)
        if number > _MASK:
            raise MemstackError(f"{relpath}: more than {_MASK:,} lines in one intake file")
        self.keys.append(parse_ts(record["created_at"], "created_at") << 64 | file_number << 32 | number)
        self.hashes.append(hash(ident))

    def sorted(self) -> list[int]:
        """The keys in time order, each id once; the hashes are dropped."""
        ordered = sorted(self.hashes)
        twice = {a for a, b in zip(ordered, itertools.islice(ordered, 1, None)) if a == b}
        del ordered
        if twice:  # rare (the hook refuses it; an uncommitted copy): the ids are read again to be sure
            seen: set[str] = set()
            kept = []
            for key, hashed in zip(self.keys, self.hashes):
                if hashed in twice:
                    relpath, number = self.where(key)
                    ident = self.record(key)["id"]
                    if ident in seen:
                        print(f"memstack promote: {relpath}:{number}: intake id {ident} appears twice; the"
                              " first is promoted, this one is left out", file=sys.stderr)
                        continue
                    seen.add(ident)
                kept.append(key)
            self.keys = kept
        self.hashes = array("q")
        self.keys.sort()
        return self.keys

    def where(self, key: int) -> tuple[str, int]:
        """The file and line number of a key."""
        return self.files[key >> 32 & _MASK], key & _MASK

    def record(self, key: int, lines: dict[str, list[bytes]] | None = None) -> dict[str, Any]:
        """A key's record read again (`lines`: the files read, kept by the caller), checked to be the one
        gathered."""
        relpath, number = self.where(key)
        if lines is None:
            lines = {}
        if relpath not in lines:
            lines[relpath] = (self.store / relpath).read_bytes().split(b"\n")
        where = f"{relpath}:{number}"
        record = jsonio.loads(lines[relpath][number - 1], where) if number <= len(lines[relpath]) else None
        try:
            same = isinstance(record, dict) and parse_ts(record.get("created_at"), "created_at") == key >> 64
        except MemstackError:
            same = False
        if not same:
            raise MemstackError(f"{where}: the intake file changed while it was promoted (intake files are"
                                " append-only) — restore it, then promote again")
        return record  # type: ignore[return-value]


def _load_intake(store: Path, gathered: _Pending, marks: dict[str, list[int]]) -> None:
    """Every intake file read once, one at a time (`marks`: how far, for pending.save)."""
    from memstack.base import progress

    paths = pending.intake_files(store)
    for path in progress.each(paths, len(paths), "promote: reading intake", "files"):
        relpath = path.relative_to(store).as_posix()
        st = path.stat()
        data = path.read_bytes()
        if data and not data.endswith(b"\n"):
            files.check_tail(path, relpath)
        for number, record in enumerate(jsonio.iter_jsonl(data, relpath), start=1):
            gathered.take(relpath, number, record)
        marks[relpath] = pending.mark(path, data, st)


def _ledger(store: Path) -> tuple[set[str], list[dict[str, Any]], dict[str, str | None], int]:
    """From one streamed read of the ledger: the intake ids it holds, the ratify decisions whose record
    is not yet a fact (binder.ratified_unpromoted), the intake file the ledger names for each, and the
    size of the decisions log as read."""
    path = store / layout.DECISIONS
    data = path.read_bytes() if path.exists() else b""  # a human's decisions: few
    decisions = list(jsonio.iter_jsonl(data, layout.DECISIONS))
    first: dict[str, dict[str, Any]] = {}
    for d in decisions:  # one decision per record counts: the first (a side of a disagreement: disputes.py)
        if isinstance(d.get("intake_id"), str):
            first.setdefault(d["intake_id"], d)
    ratify = {i: d for i, d in first.items() if d.get("decision") == "ratify"}
    done: set[str] = set()
    promoted: set[str] = set()
    files_of: dict[str, str | None] = {}
    path = store / layout.LEDGER
    if path.exists():
        for line in files.iter_jsonl(path, layout.LEDGER):
            ident = line.get("intake_id")
            done.add(ident)
            if ident in ratify:
                files_of[ident] = line.get("file")
                if line.get("sub_tier") != "binder":
                    promoted.add(ident)
    return done, [d for i, d in ratify.items() if i not in promoted], files_of, len(data)


class Routed(NamedTuple):
    """What routing decided for one record: small, as a promotion holds one for each pending record."""

    intake_id: str
    agent: str
    sub_tier: str
    via: str
    file: str | None
    decision: dict[str, Any] | None  # a human's ratify decision: the record becomes knowledge, tier ratified


class Made(NamedTuple):
    """A fact a routed record becomes, kept as where its line is in the spool (parsed again only while
    it is decided and written)."""

    valid_from: int
    fact_id: str
    routed: int  # its Routed's index
    at: int  # where its line starts in `spool`
    spool: Spill

    @property
    def line(self) -> bytes:
        return self.spool.line(self.at)


def _records(gathered: _Pending, keys: list[int]) -> Iterator[tuple[int, dict[str, Any]]]:
    """Each pending record read again, in the order of `keys`, BATCH at a time: each batch reads the
    files it needs once, and only its lines are parsed; nothing of the rest is held."""
    for at in range(0, len(keys), BATCH):
        lines: dict[str, list[bytes]] = {}
        for key in keys[at:at + BATCH]:
            yield key, gathered.record(key, lines)


def _fact(record: dict[str, Any], table: str, decision: dict[str, Any] | None) -> Fact:
    subject, predicate, obj = triple(record)
    when = parse_ts(record["created_at"], "created_at")
    recorded = max(when, decision["decided_at"]) if decision else when
    return facts.make(subject=subject, predicate=predicate, object=obj, valid_from=when, recorded_at=recorded,
                      agent=record["agent"], confidence=record["confidence"], table=table,
                      source=record["source"] or None, intake_id=record["id"],
                      id=fact_id_for(record["id"], recorded, decision is not None, record["agent"]),
                      tier="ratified" if decision else record["tier"])


class Ratified(NamedTuple):
    """A record a human ratified since it was routed to the binder: made knowledge at its own time."""

    ms: int  # its created_at
    order: int  # its decision's place among the decisions: its ledger line's
    decision: dict[str, Any]
    record: dict[str, Any]
    file: str | None


@dataclasses.dataclass
class Gathered:
    """What a promotion routes: the pending records (keys in time order) and the ratified ones."""

    pending: _Pending
    keys: list[int]  # in time order
    ratified: list[Ratified]  # by time
    read: tuple[dict[str, list[int]], int]  # how far the logs were read, for pending.save

    def chunks(self) -> Iterator[tuple[list[int], list[Ratified]]]:
        """The keys CHUNK at a time, never splitting a millisecond, each with the ratified records of its
        span of time (the last takes the rest): the facts of one chunk are all older than the next one's,
        so deciding them chunk after chunk decides them as one pass in time order would."""
        at = taken = 0
        while at < len(self.keys) or taken < len(self.ratified):
            end = min(at + CHUNK, len(self.keys))
            while 0 < end < len(self.keys) and self.keys[end] >> 64 == self.keys[end - 1] >> 64:
                end += 1
            upto = len(self.ratified)
            if end < len(self.keys):
                last = self.keys[end - 1] >> 64
                upto = next((n for n in range(taken, upto) if self.ratified[n].ms > last), upto)
            yield self.keys[at:end], self.ratified[taken:upto]
            at, taken = end, upto


def gather(store: Path) -> Gathered:
    """The records a promotion routes: those written since the last promotion where that can be told
    (pending.since_last), else every intake record not in the ledger."""
    gathered = _Pending(store, set(), set())
    found = pending.since_last(store, gathered.take)
    if found is not None:
        ratified, by_id, read = found.ratified, found.by_id, (found.marks, found.decisions)
        files_of: dict[str, str | None] = dict(found.files)
    else:
        done, ratified, files_of, decisions = _ledger(store)
        gathered, marks = _Pending(store, done, {d["intake_id"] for d in ratified}), {}
        _load_intake(store, gathered, marks)
        by_id, read = gathered.by_id, (marks, decisions)
    keys = gathered.sorted()
    decided = sorted(Ratified(parse_ts(by_id[d["intake_id"]]["created_at"], "created_at"), n, d, by_id[d["intake_id"]],
                              files_of.get(d["intake_id"])) for n, d in enumerate(ratified) if d["intake_id"] in by_id)
    return Gathered(gathered, keys, decided, read)


class Planner:
    """Routes the records of a promotion one chunk at a time: what each becomes (`Routed`) and the
    facts they make (`Made`, in time order, ratified records among the rest)."""

    def __init__(self, store: Path, gathered: Gathered) -> None:
        self.store, self.gathered = store, gathered
        self.rules = Rules.from_config(config.load(store))
        self.names: dict[str, str] = {}  # one copy of each agent name, file name and via

    def route(self, keys: list[int], ratified: list[Ratified], shown: Any = None) -> tuple[list[Routed], list[Made]]:
        """The chunk's pending records (`keys`, routed in order), then its ratified ones."""
        routed: list[Routed] = []
        made: list[Made] = []
        spool = Spill("memstack-promote-")
        names = self.names

        def add(record: dict[str, Any], relpath: str | None, sub_tier: str, via: str,
                decision: dict[str, Any] | None) -> None:
            if sub_tier in FACT_TABLES:
                fact = _fact(record, sub_tier, decision)
                made.append(Made(fact["valid_from"], fact["id"], len(routed), spool.write(jsonio.dumps_line(fact)),
                                 spool))
            agent = names.setdefault(record["agent"], record["agent"])
            routed.append(Routed(record["id"], agent, sub_tier, names.setdefault(via, via),
                                 relpath and names.setdefault(relpath, relpath), decision))

        for key, record in _records(self.gathered.pending, keys):
            sub_tier, via = route(record, self.rules, cwd=self.store)
            if via.endswith(BROKEN + ")"):
                print(f"memstack promote: {via[len('rules ('):-1]}; the rules route the rest", file=sys.stderr)
                self.rules = dataclasses.replace(self.rules, classifier=None)
            add(record, self.gathered.pending.where(key)[0], sub_tier, via, None)
            if shown is not None:
                shown.update(1)
        for item in ratified:
            add(item.record, item.file, "knowledge", "binder", item.decision)
        made.sort()
        return routed, made


def plan(store: Path) -> dict[str, Any]:
    """What a promotion would do, without writing, as one chunk: every routed record and how (`routed`),
    the facts they become (`made`), and how far the logs were read (`read`)."""
    gathered = gather(store)
    routed, made = Planner(store, gathered).route(gathered.keys, gathered.ratified)
    return {"routed": routed, "made": made, "read": gathered.read}


Open = tuple[str, str, int, int, int | None]  # an open fact: (id, object, valid_from, recorded_at, its Made index)


@dataclasses.dataclass
class Decided:
    """What _supersede decided: the Made facts to append (by index, in order), the closings of the
    facts on disk, the closing of each new fact appended already closed, each record's fact id."""

    append: list[int]
    closings: list[Closing]
    closed: dict[int, Closing]
    fact_ids: list[str | None]  # by Routed index: the fact that holds it (a duplicate: the existing one)
    superseded: int


def _open_facts(store: Path, made: list[Made]) -> dict[tuple[str, str, str], list[Open]]:
    """The open facts on disk of the (table, subject, predicate) keys of the new facts, as small tuples;
    asked of the fact index a thousand keys at a time."""
    batch_ids = {m.fact_id for m in made}
    keys = sorted({(fact["subject"], fact["predicate"]) for fact in map(_parsed, made)})
    open_now: dict[tuple[str, str, str], list[Open]] = {}
    for at in range(0, len(keys), 1000):
        for (subject, predicate), found in queries.open_by_key(store, keys[at:at + 1000]).items():
            for fact in found:
                if fact["id"] not in batch_ids:  # a fact an interrupted run wrote is decided again, the same way
                    open_now.setdefault((fact["table"], subject, predicate), []).append(
                        (fact["id"], fact["object"], fact["valid_from"], fact["recorded_at"], None))
    return open_now


def _parsed(made: Made) -> Fact:
    return jsonio.loads(made.line, f"fact {made.fact_id}")  # type: ignore[no-any-return]


def _supersede(store: Path, made: list[Made]) -> Decided:
    """Decide each new fact's fate against the open facts, in time order."""
    open_now = _open_facts(store, made)
    decided = Decided([], [], {}, [None] * (max((m.routed for m in made), default=-1) + 1), 0)
    for index, item in enumerate(made):
        new = _parsed(item)
        current = open_now.setdefault((new["table"], new["subject"], new["predicate"]), [])
        if new["predicate"] == NOTED:  # notes accumulate: two notes under one title are two notes
            decided.fact_ids[item.routed] = item.fact_id
            decided.append.append(index)
            continue
        same = [f for f in current if f[1] == new["object"]]
        if same:
            decided.fact_ids[item.routed] = same[0][0]  # a duplicate: the ledger points at the fact that holds it
            continue
        decided.fact_ids[item.routed] = item.fact_id
        later = [f for f in current if f[2] > new["valid_from"]]
        for old in [f for f in current if f[2] < new["valid_from"]]:
            closing = Closing(old[0], new["valid_from"], max(new["recorded_at"], old[3]), item.fact_id)
            if old[4] is not None:
                decided.closed[old[4]] = closing  # not written yet: appended already closed
            else:
                decided.closings.append(closing)
            current.remove(old)
            decided.superseded += 1
        if later:
            successor = min(later, key=lambda f: (f[2], f[0]))
            decided.closed[index] = Closing(item.fact_id, successor[2], max(new["recorded_at"], successor[3]),
                                            successor[0])
        else:
            current.append((item.fact_id, new["object"], new["valid_from"], new["recorded_at"], index))
        decided.append.append(index)
    return decided


def _facts_to_append(made: list[Made], decided: Decided) -> Iterator[list[Fact]]:
    """The facts to append, in order, BATCH at a time, each as decided (closed or open)."""
    for at in range(0, len(decided.append), BATCH):
        batch = []
        for index in decided.append[at:at + BATCH]:
            fact = _parsed(made[index])
            closing = decided.closed.get(index)
            if closing is not None:
                fact.update(valid_to=closing.valid_to, expired_at=closing.expired_at,
                            superseded_by=closing.superseded_by)
            batch.append(fact)
        yield batch


def _write_facts(store: Path, made: list[Made], decided: Decided) -> None:
    """Append the new facts BATCH at a time, then the closings. Facts an interrupted run already wrote
    are not written again; where that run left one open and this run closes it (a record that arrived
    since), the closing is written."""
    closings = list(decided.closings)
    for batch in _facts_to_append(made, decided):
        on_disk = {i: fact for i, (_, fact) in queries.locate(store, [f["id"] for f in batch]).items()}
        for fact in batch:
            written = on_disk.get(fact["id"])
            if written is not None and written["valid_to"] is None and fact["valid_to"] is not None:
                closings.append(Closing(fact["id"], fact["valid_to"], fact["expired_at"], fact["superseded_by"]))
        factstore.append_many(store, [f for f in batch if f["id"] not in on_disk], check_ids=False)
    if closings:
        factstore.close_many(store, closings)


def _write_ledger(store: Path, routed: list[Routed], fact_ids: list[str | None], now_ms: int) -> None:
    """One ledger line for each routed record, in order, appended BATCH lines at a time."""
    with files.locked(store, layout.LEDGER):
        for at in range(0, len(routed), BATCH):
            files.append_held(store / layout.LEDGER, layout.LEDGER, b"".join(jsonio.dumps_line({
                "intake_id": item.intake_id, "agent": item.agent, "sub_tier": item.sub_tier,
                "fact_id": fact_ids[index] if index < len(fact_ids) else None, "promoted_at": now_ms,
                "via": item.via, **({"file": item.file} if item.file else {})})
                for index, item in enumerate(routed[at:at + BATCH], start=at)))


def _message(counts: Counter[str], ratified: int, superseded: int) -> str:
    total = sum(counts.values())
    moved = ([plural(total, "record") + " routed"] if total or not ratified else []) \
        + ([plural(ratified, "ratified record") + " made knowledge"] if ratified else []) \
        + ([plural(superseded, "fact") + " superseded"] if superseded else [])
    head = "memstack promote: " + ", ".join(moved)
    body = [f"{tier}: {counts[tier]}" for tier in SUB_TIERS if counts[tier]]
    if ratified:
        body.append(f"ratified by a human, now knowledge: {ratified}")
    trailers = [f"Memstack-Routed: {total}"] + [f"Memstack-{TRAILERS[t]}: {counts[t]}" for t in SUB_TIERS]
    trailers += [f"Memstack-Ratified: {ratified}", f"Memstack-Superseded: {superseded}"]
    return "\n\n".join([head, "\n".join(body) or "no new records: the views and boot files are refreshed",
                        "\n".join(trailers)]) + "\n"


def rebuild(store: Path, patched: bool = False) -> list[str]:
    """Rewrite the KB views, then the boot files that read them; returns the paths that changed.
    `patched`: the views of the last commit that changed them, patched with what changed since
    (viewpatch.py), where they can be; else (and by default) built from every fact file."""
    source = WorktreeSource(store)
    written = files.write_changed(store, _views(store, source) if patched else views.build(source))
    return written + boot.rebuild(store)


def _views(store: Path, source: WorktreeSource) -> dict[str, files.Data]:
    """The views of the work tree: patched from the last committed ones where they can be."""
    if not (git.is_worktree(store) and git.has_commits(store)):
        return views.build(source)
    from functools import partial

    from memstack.kb import viewpatch
    from memstack.repo.store import folder_of

    top, folder = folder_of(store)
    with git.CatFile(top, git.no_git_env()) as blobs:  # a whole build is recorded for the commit's check
        return viewpatch.views_of(top, folder, blobs, git.WORKTREE, source,
                                  build=partial(buildmemo.build, top, folder))


def stale(store: Path, patched: bool = False) -> list[str]:
    """The derived files that differ from a rebuild (nothing written). `patched`: the views compared
    with the last committed ones patched (viewpatch.py), where they can be, not with a build from
    every fact file."""
    source = WorktreeSource(store)
    built = _views(store, source) if patched else views.build(source)

    class Overlay(WorktreeSource):
        def read(self, relpath: str) -> bytes | None:
            return files.whole(built[relpath]) if relpath in built else super().read(relpath)

    built.update(boot.build(Overlay(store)))
    return sorted(p for p, data in built.items() if not files.holds(store / p, data))


def _committed_prefix(store: Path) -> int:
    """How many leading bytes of the ledger file are the ledger at HEAD: its size there (the hook
    refuses a commit whose ledger does not begin with HEAD's, so only the size is asked of git)."""
    env = git.no_git_env()
    found = git.run(store, "rev-parse", "--verify", "-q", f"HEAD:./{layout.LEDGER}", env=env,
                    ok=(0, 1, 128)).stdout.decode().strip()
    return int(git.out(store, "cat-file", "-s", found, env=env)) if found else 0


def _uncommitted_ledger(store: Path) -> tuple[Counter[str], int]:
    """Ledger lines not in HEAD, counted by sub-tier (ratified records apart)."""
    counts: Counter[str] = Counter()
    ratified = 0
    if not (store / layout.LEDGER).exists():
        return counts, ratified
    with (store / layout.LEDGER).open("rb") as handle:
        handle.seek(_committed_prefix(store))
        for line in handle:
            entry = jsonio.loads(line, layout.LEDGER)
            if entry.get("via") == "binder":
                ratified += 1
            else:
                counts[str(entry.get("sub_tier"))] += 1
    return counts, ratified


def _commit(store: Path, message: str) -> str | None:
    """Commit kb/, intake/, the boot files and the handoffs they read (nothing else); None when
    they hold no change. Intake and those handoffs go along so the commit holds every source of
    what it derives, also when a second run finishes an interrupted one. A store in a folder of a
    code repository commits only that folder's memory (git runs at the work tree's top)."""
    from memstack.repo.store import folder_of

    top, folder = folder_of(store)
    anchors = sorted(store.glob("session_anchor_*.json"))
    read_by_boot = [jsonio.loads(p.read_bytes(), p.name).get("handoff") for p in anchors]
    wanted = ["kb", "intake", "willow.md", *(p.name for p in anchors), *(h for h in read_by_boot if h)]
    changed = git.out(top, "status", "--porcelain", "-z", "--untracked-files=all", "--",
                      *(folder + w for w in wanted))
    paths = sorted({entry[3:] for entry in changed.split("\0") if len(entry) > 3})  # relative to the top
    if not paths:
        return None
    git.run(top, "add", "-A", "--", *paths)
    if not git.out(top, "diff", "--cached", "--name-only", "--", *paths).strip():
        return None
    env = git.commit_env(top)
    staged = set(git.out(top, "diff", "--cached", "--name-only", "-z", "--", folder or ".").split("\0"))
    verify: list[str] = []
    only = ["--", *paths]
    if not staged - {""} - set(paths):  # the index holds this commit's memory and nothing else of the store
        _check_here(top, folder)
        env["SKIP"] = ",".join(filter(None, [os.environ.get("SKIP"), HOOK]))
        verify = [] if _other_hooks(top) else ["--no-verify"]  # nothing else to run: not even pre-commit
        if not folder or not git.out(top, "diff", "--cached", "--name-only", "--", f":(exclude){folder}").strip():
            only = []  # the index is the commit: git need not stage the paths again in an index of its own
    files.crash_point()
    try:
        git.run(top, "commit", "-q", *verify, "-m", message, *only, env=env)  # through the other hooks
    except MemstackError as exc:
        if exc.message.startswith("git is locked"):
            raise
        detail = exc.message.partition(f"failed in {top}: ")[2] or exc.message
        raise MemstackError.marked("the promotion commit was refused (the files are written; fix what the hook"
                                   " says, then run `{verb:memstack promote}` again): {detail}",
                                   detail=detail) from None
    return git.out(top, "rev-parse", "HEAD").strip()


HOOK = "memstack-check"  # the pre-commit hook that runs `memstack check --staged` (store-template/)


def _check_here(top: Path, folder: str) -> None:
    """The promotion commit's check, as its pre-commit hook runs it (`memstack check --staged`), in this
    process: its modules are loaded and its fact index open, so the commit does not pay for a second
    interpreter; the commit then tells pre-commit to skip that hook (SKIP), and any other hook runs."""
    from memstack.integrity import check

    found = check.staged(top, folder).violations
    if found:
        raise MemstackError.marked("the promotion commit was refused (the files are written; fix what the check"
                                   " says, then run `{verb:memstack promote}` again):\n{found}",
                                   found="\n".join(map(str, found)))


def _other_hooks(top: Path) -> bool:
    """Whether a commit in `top` would run a hook besides memstack's own (pre-commit configured with
    another hook, or a pre-commit or commit-msg hook pre-commit did not install)."""
    hooks = top / git.out(top, "rev-parse", "--git-path", "hooks").strip()
    for name in ("pre-commit", "commit-msg"):
        script = hooks / name
        if script.exists() and b"# File generated by pre-commit:" not in script.read_bytes()[:200]:
            return True
    path = top / ".pre-commit-config.yaml"
    if not path.exists():
        return False
    ids = _HOOK_ID.findall(path.read_text(encoding="utf-8", errors="replace"))  # read as text: no YAML loader
    return not ids or not all(i.startswith("memstack-") for i in ids)


_HOOK_ID = re.compile(r"""(?<![\w-])id:[ \t]*["']?([^\s"'#,}]+)""")  # block or flow style; a comment's
# mention counts too: a hook read wrongly only costs a pre-commit run, a hook missed would go unrun


def _can_commit(store: Path) -> None:
    """Refuse, before anything is written, a promotion whose commit could not be made."""
    if not git.is_worktree(store):
        raise MemstackError.marked("{store} is not inside a git repository (no .git): promote commits its work — run"
                                   " it in the store's clone, or pass {arg:--no-commit}", store=store)
    git.refuse_locked(store)


def promote(store: Path, now_ms: int, *, dry_run: bool = False, commit: bool = True) -> dict[str, Any]:
    from memstack.base import progress

    if commit and not dry_run:
        _can_commit(store)
    with files.locked(store, "promote"):
        if not dry_run:
            factstore.finish_pending(store)  # a capture a killed process left half done
        gathered = gather(store)
        planner = Planner(store, gathered)
        counts: Counter[str] = Counter()
        ratified = superseded = facts_added = 0
        shown_records: list[dict[str, Any]] = []
        later: list[tuple[int, Routed, str | None]] = []  # the ratified: their ledger lines last, as decided
        with progress.bar(len(gathered.keys), "promote: routing") as shown:
            for keys, found in gathered.chunks():  # one chunk at a time: routed, decided, written
                routed, made = planner.route(keys, found, shown)
                counts.update(item.sub_tier for item in routed if item.decision is None)
                ratified += len(found)
                if dry_run:
                    shown_records += [{"intake_id": i.intake_id, "agent": i.agent, "sub_tier": i.sub_tier,
                                       "via": i.via} for i in routed]
                    continue
                decided = _supersede(store, made)
                superseded, facts_added = superseded + decided.superseded, facts_added + len(decided.append)
                _write_facts(store, made, decided)
                fact_ids = decided.fact_ids + [None] * (len(routed) - len(decided.fact_ids))
                _write_ledger(store, routed[:len(keys)], fact_ids[:len(keys)], now_ms)
                later += zip((item.order for item in found), routed[len(keys):], fact_ids[len(keys):])
                del routed, made, decided, fact_ids
        if dry_run:
            return {"dry_run": True, "routed": dict(counts), "ratified": ratified, "records": shown_records}
        moved = bool(gathered.keys or later)
        later.sort(key=lambda entry: entry[0])
        _write_ledger(store, [item for _, item, _ in later], [fact_id for _, _, fact_id in later], now_ms)
        pending.save(store, *gathered.read)  # the next promotion reads only what is written after
        del gathered, planner, later  # the views are rebuilt without them
        with buildmemo.recording():  # a whole build of the views is not made again by the commit's check
            changed = rebuild(store, patched=True)
            if commit:  # what the commit moves: this run's lines and any an interrupted run left
                counts, ratified = _uncommitted_ledger(store)
            message = _message(counts, ratified, superseded)
            sha = _commit(store, message) if commit else None
    return {"dry_run": False, "routed": dict(counts), "ratified": ratified, "superseded": superseded,
            "facts_added": facts_added, "changed": changed, "commit": sha,
            "message": message if sha or moved or changed else "nothing to promote"}
