"""The KB views patched, not rebuilt: what `views.build` makes, in time that follows the change.

A view file is a pure function of the fact files and the two logs (views.py). A
commit whose views changed had them checked (I4) as what a rebuild makes from
its sources: it is a *base*. From the last such commit, the views of a later
state (the index in the pre-commit hook, the work tree in `memstack promote`, a
commit in a range check) are the base's views with:

- every fact of a fact file changed since taken out by its sort key and its open
  facts put back (facts are never deleted, a fact lives in one file and its key
  never changes, so this is exact), each stamped with `distilled_at` from the
  ledger lines appended since (`views.distillations`);
- the Binder queue without the records decided since and with the records the
  ledger routed to the binder since;
- the disagreements recounted for every predecessor a fact that came or went names.

The cost is the change's (its fact files, the logs' new lines), O(log n) line
parses per fact to place it, and one pass over the bytes of the views it changes.
No view is held whole: the base's views are read by position (from the work
tree's file, or a blob spilled to a temporary file) and a patched view is a list
of runs of the base's bytes and new lines, read when it is written or hashed. Anything out of
the ordinary (no base, a fact file deleted, a log that does not continue the
base's, a view not in the shape views.py writes, a change larger than a twentieth
of the views) answers None, and the caller rebuilds from everything.
"""

from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson

from memstack.base import files, ids, jsonio
from memstack.base.layout import DECISIONS, LEDGER_DIR
from memstack.kb import disputes, views, viewtext
from memstack.kb.routing import FACT_TABLES
from memstack.repo import diffs, git, objects
from memstack.repo.sources import GitSource, Source

VIEWS = tuple(views.view_path(t) for t in FACT_TABLES) + (views.QUEUE,)
FACTS = "kb/facts/"
_SHARE = 20  # more changed facts than 1/_SHARE of the views' lines: rebuilding is as cheap


class _Lazy(dict):
    """The base's view files, each read when first asked for (a check compares only the views a
    commit changes: the others are never read)."""

    def __init__(self, read: Callable[[str], viewtext.Text | None]) -> None:
        super().__init__()
        self.read = read

    def __missing__(self, path: str) -> viewtext.Text | None:
        self[path] = found = self.read(path)
        return found


@dataclass
class Since:
    """What changed from a base (a commit whose views were checked) to the state being built."""

    base: Source  # the base commit's files
    views: dict[str, viewtext.Text | None]  # the base's view files (read when first asked for)
    facts: list[str] = field(default_factory=list)  # fact files changed or added since
    changed: set[str] = field(default_factory=set)  # the view files that differ from the base's
    ledger: bytes = b""  # the ledger's lines appended since (to every shard)
    decisions: bytes = b""  # the decisions' lines appended since


def since(repo: Path, folder: str, blobs: objects.CatFile, target: str | None, new: Source) -> Since | None:
    """From the last commit before `target` whose views changed (None: the index, whose base is sought
    from HEAD; diffs.WORKTREE: the work tree; else a commit, sought from its first parent)."""
    start = "HEAD" if target in (None, diffs.WORKTREE) else f"{target}^"
    if git.rev_parse(repo, start) is None:
        return None
    base = git.out(repo, "log", "-1", "--format=%H", start, "--", *(folder + p for p in VIEWS)).strip()
    if not base:
        return None
    changes = diffs.changes_since(repo, base, target, ["kb/facts", LEDGER_DIR, DECISIONS, *VIEWS], folder)
    changed = {c.path: c for c in changes}
    at_base = GitSource(repo, blobs, base, folder)
    found = Since(at_base, _Lazy(lambda p: viewtext.file_text(repo / folder / p)
                                 if target == diffs.WORKTREE and p not in changed
                                 else viewtext.blob_text(at_base, p)))
    found.changed = {c.path for c in changes if c.path in VIEWS}
    for change in changes:
        if change.path.startswith(FACTS):
            if change.deleted:
                return None
            found.facts.append(change.path)
        elif change.path.startswith(LEDGER_DIR + "/") or change.path == DECISIONS:
            if change.deleted:
                return None
            on_disk_now = target == diffs.WORKTREE
            if change.added:
                size = (repo / folder / change.path).stat().st_size if on_disk_now \
                    else int(git.out(repo, "cat-file", "-s", change.new_sha))
                if size > objects.HELD:  # a first promotion of many records: a build streams them
                    return None
                tail = new.read(change.path) or b""
            else:  # only what was appended since: a log that grows with the store is never held whole
                appended = objects.appended_to_blob(repo, change.old_sha,
                                                    objects.file_pieces(repo / folder / change.path)
                                                    if on_disk_now else blobs.stream(change.new_sha),
                                                    None if on_disk_now else change.new_sha)
                if appended is None or not isinstance(appended[0], bytes):
                    return None  # not an append to the base's log (a merge, a rewrite), or a bulk one: rebuild
                tail = appended[0]
            if change.path != DECISIONS:  # a ledger shard: the lines of the shards, one after another
                found.ledger += tail if tail.endswith(b"\n") or not tail else tail + b"\n"
                if len(found.ledger) > objects.HELD:  # a bulk promotion over many shards: a build streams them
                    return None
            else:
                found.decisions = tail
    return found


def views_of(repo: Path, folder: str, blobs: objects.CatFile, target: str | None, new: Source,
             wanted: Iterable[str] | None = None,
             build: Callable[[Source], Mapping[str, files.Data]] | None = None) -> dict[str, files.Data]:
    """The KB views of the state `new` (the `target` of `since`): patched when they can be, else
    built (by `build`: promote's records what it read, buildmemo.py). Patched, the answer holds those
    `wanted` (by default those that differ from the base's), and those the change touches: a view
    left out is the base's, unchanged."""
    found = since(repo, folder, blobs, target, new)
    patched = patch(found, new, found.changed if wanted is None else wanted) if found is not None else None
    return patched if patched is not None else dict((build or views.build)(new))


# --- the patch -----------------------------------------------------------------------------------

def _fact_key(line: bytes) -> tuple[str, str, int, str]:
    fact = orjson.loads(line)
    return (fact["subject"], fact["predicate"], fact["valid_from"], fact["id"])


def _queue_key(line: bytes) -> tuple[str, str]:
    record = orjson.loads(line)
    return (record["created_at"], record["id"])


def _spliced(lines: viewtext.Lines, name: str, key: str, parts: list[viewtext.Part], count: int,
             disputes: list[bytes] | None = None) -> viewtext.Spliced:
    return viewtext.Spliced(lines.text, views.head(name, key, count), parts, views.tail(count, disputes or []))


def patch(since: Since, new: Source, wanted: Iterable[str] = VIEWS) -> dict[str, files.Data] | None:
    """The views of `new` (those `wanted`, and any a change touches), from the base's and what changed
    since; None when they must be rebuilt."""
    tables: dict[str, viewtext.Lines] = {}  # the lines of each view a change touches, found when first touched

    def lines_of(table: str) -> viewtext.Lines | None:
        if table not in tables:
            text = since.views[views.view_path(table)]
            found = viewtext.lines_of(text, viewtext.head_of(text, table, "facts"))
            if found is None:
                return None
            tables[table] = found
        return tables[table]

    made: dict[tuple[str, str], int] = {}  # (fact id, intake id) -> promoted_at of the first line since
    routed: list[dict[str, Any]] = []
    for entry in jsonio.iter_jsonl(since.ledger, LEDGER_DIR):
        ident, intake, at = entry.get("fact_id"), entry.get("intake_id"), entry.get("promoted_at")
        if isinstance(ident, str) and isinstance(intake, str) and type(at) is int:
            made.setdefault((ident, intake), at)
        if entry.get("sub_tier") == "binder":
            routed.append(entry)
    remove: dict[str, set[int]] = {table: set() for table in FACT_TABLES}
    add: dict[str, list[tuple[Any, bytes]]] = {table: [] for table in FACT_TABLES}
    moved: list[dict[str, Any]] = []  # facts that came into a view or left one
    seen: set[str] = set()  # the facts of the lines changed since
    for relpath in since.facts:
        data = new.read(relpath) or b""
        before = set((since.base.read(relpath) or b"").splitlines(keepends=True))
        # A line the base held unchanged is a fact whose place in the views has not changed.
        changed = b"".join(line for line in data.splitlines(keepends=True) if line not in before)
        for fact in jsonio.iter_jsonl(changed, relpath):
            seen.add(fact.get("id"))  # type: ignore[arg-type]
            lines = lines_of(fact.get("table"))  # type: ignore[arg-type]
            if lines is None:
                return None
            key = views.fact_order(fact)
            at = viewtext.find(lines, key, _fact_key)
            old = lines.line(at) if at is not None else None
            if fact.get("valid_to") is None:
                stamp = made.get((fact["id"], fact.get("intake_id")))  # type: ignore[arg-type]
                if old is not None:
                    if stamp is not None:  # made again after it was in a view: only a rebuild knows which is first
                        return None
                    stamp = orjson.loads(old).get("distilled_at")
                elif stamp is None:
                    if fact.get("intake_id") is not None:  # promoted before the base, yet in no view of it
                        return None
                    stamp = fact["recorded_at"]
                fact["distilled_at"] = stamp
                line = views.line(fact)
                if line == old:
                    continue
                add[fact["table"]].append((key, line))
            elif old is None:
                continue
            if at is not None:
                remove[fact["table"]].add(at)
                moved.append(orjson.loads(old))  # type: ignore[arg-type]
            if fact.get("valid_to") is None:
                moved.append(fact)
            if len(moved) * _SHARE > len(lines) + 1000:
                return None
    if any(f not in seen and ids.made_from(f, x) for f, x in made):
        return None  # a ledger line since made a fact the base already held: only a rebuild knows which is first
    out: dict[str, files.Data] = {}
    disputed = {p for fact in moved for p in fact.get("supersedes") or ()}
    for table in FACT_TABLES:
        path = views.view_path(table)
        if table in tables and (remove[table] or add[table]):
            out[path] = _spliced(tables[table], table, "facts",
                                 *viewtext.apply(tables[table], remove[table], add[table], _fact_key))
        elif path in wanted or disputed:
            text = since.views[path]
            if viewtext.lines_of(text, viewtext.head_of(text, table, "facts")) is None:
                return None
            assert text is not None
            out[path] = text  # untouched
    if not (routed or since.decisions or disputed):
        if views.QUEUE in wanted:
            text = since.views[views.QUEUE]
            if _queue(text) is None:
                return None
            assert text is not None
            out[views.QUEUE] = text  # untouched
        return out
    queue = _queue(since.views[views.QUEUE])
    if queue is None:
        return None
    records = _patch_queue(queue[0], routed, since.decisions, new)
    if records is None:
        return None
    dispute_lines = _recount(queue[1], disputed, [out[views.view_path(t)] for t in FACT_TABLES] if disputed else [])
    out[views.QUEUE] = _spliced(queue[0], "binder_queue", "records", *records, dispute_lines)
    return out


_DISPUTES = b'], "disputes": ['  # the line between the queue's records and its disagreements
_PREDECESSOR = b'{"predecessor":'  # how a disagreement's line begins (keys sorted); a record's begins {"agent":


def _queue(text: viewtext.Text | None) -> tuple[viewtext.Lines, list[bytes]] | None:
    """The record lines and the disagreement lines of the Binder queue view. The disagreements are
    found from the end, line by line (there are few), so the records are never read for it."""
    if text is None:
        return None
    head = viewtext.head_of(text, "binder_queue", "records")
    if text.get(0, len(head)) != head or text.get(text.length - 4, text.length) != b"\n]}\n":
        return None
    end, found = text.length - 4, list[bytes]()  # where the line before `]}` ends
    while end > len(head):
        start = text.rfind(b"\n", len(head) - 1, end) + 1
        line = text.get(start, end)
        if line == _DISPUTES:
            records = viewtext.Lines(text, len(head), max(len(head), start - 1), viewtext.count_of(text))
            return records, found[::-1]
        if not line.startswith(_PREDECESSOR):
            break
        found.append(line.removesuffix(b","))
        end = start - 1
    whole = None if found else viewtext.lines_of(text, head)
    return None if whole is None else (whole, [])


def _patch_queue(lines: viewtext.Lines, routed: list[dict[str, Any]], decided_since: bytes,
                 new: Source) -> tuple[list[viewtext.Part], int] | None:
    """The queue's body without the records decided since, with the records routed to the binder since."""
    gone = {d.get("intake_id") for d in jsonio.iter_jsonl(decided_since, DECISIONS)} - {None}
    remove = {pos for pos, line in lines if _record_id(line) in gone} if gone else set()
    decided = {d.get("intake_id") for d in jsonio.iter_jsonl(new.read(DECISIONS) or b"", DECISIONS)} \
        if routed else set()
    wanted: dict[str, set[str]] = {}
    for entry in routed:
        if entry.get("intake_id") not in decided and isinstance(entry.get("file"), str):
            wanted.setdefault(entry["file"], set()).add(entry["intake_id"])
    if len(routed) * _SHARE > len(lines) + 1000:
        return None
    add = [(_queue_key(line), line) for relpath in sorted(wanted)
           for record in jsonio.iter_jsonl(new.read(relpath) or b"", relpath)
           if record.get("id") in wanted[relpath] for line in [views.line(record)]]
    return viewtext.apply(lines, remove, add, _queue_key)


def _record_id(line: bytes) -> str | None:
    """The `id` of a record's line (keys sorted: the first `"id":` is the record's own; a string value
    holds no bare quote)."""
    at = line.find(b'"id":"')
    return None if at < 0 else line[at + 6:line.index(b'"', at + 6)].decode()


def _holding(view: files.Data, needle: bytes) -> Iterator[bytes]:
    """The lines of a view that hold `needle`, its pieces searched as they come (never held whole)."""
    carry = b""
    for piece in files.parts(view)[1]:
        chunk = carry + bytes(piece)
        cut = chunk.rfind(b"\n") + 1
        done, carry = chunk[:cut], chunk[cut:]
        at = done.find(needle)
        while at >= 0:
            end = done.find(b"\n", at)
            yield done[done.rfind(b"\n", 0, at) + 1:end]
            at = done.find(needle, end)
    if needle in carry:
        yield carry


def _recount(dispute_lines: list[bytes], named: set[str], bodies: list[files.Data]) -> list[bytes]:
    """The disagreement lines, each predecessor in `named` recounted from the patched views."""
    if not named:
        return dispute_lines
    claims: dict[str, dict[str, Any]] = {}
    todo, seen = set(named), set()
    while todo:  # a side may name other predecessors: their disagreements are recounted too
        predecessor = todo.pop()
        seen.add(predecessor)
        needle = b'"' + predecessor.encode() + b'"'
        for body in bodies:
            for line in _holding(body, needle):
                text = line.rstrip(b",")
                if text.startswith(b"{"):
                    fact = orjson.loads(text)
                    if predecessor in (fact.get("supersedes") or ()):
                        claims[fact["id"]] = fact
                        todo.update(p for p in fact["supersedes"] if p not in seen)
    kept = [line for line in dispute_lines if orjson.loads(line)["predecessor"] not in seen]
    fresh = [views.dispute_line(d) for d in disputes.find(claims.values()) if d["id"] in seen]
    return sorted(kept + fresh, key=lambda line: orjson.loads(line)["predecessor"])
