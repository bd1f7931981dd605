"""Three-way merge of memory files (docs/merge.md), as a git merge driver.

- Append-only logs: ours as it is, then the records of theirs that ours lacks
  (matched by `id`, else by the whole line): nothing lost, each once. Two
  different ledger lines about one record are both kept, and so are two
  different Binder decisions on one record (people who decided differently:
  kb/binder.py finds the dispute, promotion acts on neither).
- Fact files: every fact once, by id; a closing made on one side is kept, the
  same closing on both sides is fine. The same fact closed differently on the
  two sides, each closing naming its successor, is two agents disagreeing: the
  closing recorded first is kept (`disputes.rank`), the same whichever side
  merges which, and the other survives in its successor's `supersedes`
  (docs/merge.md). Any other pair of different edits of one fact is a conflict,
  written into the file between conflict markers.
- Derived files: ours is kept; `memstack rebuild` refreshes them.
Anything that does not parse is left to git's ordinary line merge (with
conflict markers), never rewritten by guesswork.
"""

import os
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path

import orjson

from memstack.base import layout
from memstack.base.forgotten import Forgotten
from memstack.base.times import iso
from memstack.kb import disputes
from memstack.kb.facts import CLOSING_FIELDS


class Unmergeable(Exception):
    """A side that memstack cannot read as the file it should be: fall back to git's merge."""


@dataclass
class Result:
    data: bytes
    conflicts: list[str] = field(default_factory=list)


def _lines(data: bytes) -> list[bytes]:
    if data and not data.endswith(b"\n"):
        raise Unmergeable("the last line has no newline")
    return data.splitlines()


def _load(line: bytes) -> dict:
    try:
        record = orjson.loads(line)
    except orjson.JSONDecodeError as exc:
        raise Unmergeable(f"a line is not JSON ({exc})") from None
    if not isinstance(record, dict):
        raise Unmergeable("a line is not a JSON object")
    return record


def _key(line: bytes) -> bytes:
    """What a log line is about: an intake record's id; a Binder decision's record; a ledger
    line's record and sub-tier. Two different lines about one thing are a conflict."""
    record = _load(line)
    for fields in (("id",), ("intake_id", "sub_tier"), ("intake_id",), ("fact_id",)):
        values = [record.get(f) for f in fields]
        if all(isinstance(v, str) for v in values):
            return ":".join(fields).encode() + b"=" + "/".join(values).encode()  # type: ignore[arg-type]
    return b"line=" + line


def _common_prefix(a: bytes, b: bytes) -> int:
    """Length of the longest common prefix of whole lines (binary search over memcmp)."""
    low, high = 0, min(len(a), len(b))
    while low < high:  # a[:low] == b[:low]: compare only the bytes after it (O(n) copied in all, not O(n log n))
        mid = (low + high + 1) // 2
        if a[low:mid] == b[low:mid]:
            low = mid
        else:
            high = mid - 1
    return a.rfind(b"\n", 0, low) + 1


def merge_log(base: bytes, ours: bytes, theirs: bytes, keep_both: bool = False) -> Result:
    """Ours as it is, then every record of theirs (or of the base) that ours lacks.

    Records are matched by key, not by position: after merges back and forth
    the two sides hold shared records in different orders, and neither is a
    prefix of the other. A side that dropped a record never drops it from the
    result (the checks report the dropping commit). Only the lines after the
    sides' common prefix are parsed, so the cost follows the change.

    `keep_both` (the ledger and the Binder's log): two different lines about one record are both kept, never a
    conflict. In the Binder's log they are two people's decisions, each a person's word: both are kept, and the
    record is disputed until a person settles it (kb/binder.py `in_force`). In the ledger, a promotion is
    a function of the record and the facts it met (docs/merge.md), so two clones promoting one record
    write one line, unless they met different facts (one side found it a duplicate of a fact only it
    had) or promoted it before promotion was derived (a wall-clock promoted_at): each line says what
    one clone did, and the facts both sides wrote are kept by the fact files' merge.
    """
    if any(side and not side.endswith(b"\n") for side in (base, ours, theirs)):
        raise Unmergeable("the last line has no newline")
    cut = _common_prefix(ours, theirs)
    ours_all = set(ours.splitlines())
    candidates = theirs[cut:].splitlines()
    if not ours.startswith(base):
        candidates += base.splitlines()
    fresh = [line for line in candidates if line not in ours_all]
    # Keys of all of ours (parsed only when theirs brings something new): a record may sit in
    # the shared prefix on one side and after it on the other, after merges back and forth.
    seen = {_key(line): line for line in ours.splitlines()} if fresh else {}
    extra, conflicts = [], []
    for line in fresh:
        key = _key(line)
        if key not in seen:
            seen[key] = line
            extra.append(line)
        elif seen[key] != line and keep_both:
            if line not in extra:  # both promotions (decisions) of one record, each as it was made, each once
                extra.append(line)
        elif seen[key] != line:
            conflicts.append(f"{key.decode()} differs between the sides")
    if conflicts:
        raise Unmergeable("; ".join(sorted(set(conflicts))))
    return Result(ours + b"".join(line + b"\n" for line in extra))


def _is_closing_of(closed: dict, open_: dict) -> bool:
    return open_.get("valid_to") is None and closed.get("valid_to") is not None and all(
        closed.get(k) == v for k, v in open_.items() if k not in CLOSING_FIELDS)


def _rivals(a: dict, b: dict) -> bool:
    """Two closings of one fact that differ only in their closing, each naming its successor."""
    return all(a.get(k) == b.get(k) for k in a.keys() | b.keys() if k not in CLOSING_FIELDS) \
        and disputes.winner(a, b) is not None


def _window(fact: dict) -> str:
    return (f"valid_to={_when(fact.get('valid_to'))} expired_at={_when(fact.get('expired_at'))}"
            f" superseded_by={fact.get('superseded_by')}")


def _when(ms: object) -> object:
    """A time as ISO-8601 in a message (the file keeps milliseconds)."""

    if isinstance(ms, int) and not isinstance(ms, bool):
        try:
            return iso(ms)
        except (OverflowError, ValueError, OSError):
            pass
    return ms


def _pick(fid: str, base: dict | None, a: tuple[bytes, dict], b: tuple[bytes, dict],
          conflicts: list[str], forgotten: Callable[[], Forgotten] | None = None) -> bytes | tuple[bytes, bytes]:
    (a_line, a_fact), (b_line, b_fact) = a, b
    if a_fact == b_fact:
        return a_line
    if _rivals(a_fact, b_fact):  # two agents closed it differently: the first closing recorded is kept
        return a_line if disputes.winner(a_fact, b_fact) is a_fact else b_line
    if disputes.replaces_forgetting(a_fact, b_fact, forgotten):  # forgotten on one side, superseded on the other
        return b_line
    if disputes.replaces_forgetting(b_fact, a_fact, forgotten):
        return a_line
    if base is not None and a_fact == base:
        return b_line
    if base is not None and b_fact == base:
        return a_line
    if _is_closing_of(a_fact, b_fact):
        return a_line
    if _is_closing_of(b_fact, a_fact):
        return b_line
    conflicts.append(f"fact {fid} changed differently on the two sides: ours {_window(a_fact)};"
                     f" theirs {_window(b_fact)}")
    return (a_line, b_line)


def merge_facts(base: bytes, ours: bytes, theirs: bytes, forgotten: Callable[[], Forgotten] | None = None) -> Result:
    """Every fact once, by id, in ours' order, then theirs' new facts, then the base's leftovers.

    A line byte-identical on all three sides is a fact no side changed: it is kept where ours
    has it, unparsed. Only the other lines (appended, closed, or a side's version of those) are
    parsed and matched by id, so the cost follows the change, not the file.
    """
    b_lines, o_lines, t_lines = _lines(base), _lines(ours), _lines(theirs)
    unchanged = set(b_lines).intersection(o_lines, t_lines)
    sides = []
    for lines in (b_lines, o_lines, t_lines):
        parsed: dict[str, tuple[bytes, dict]] = {}
        order: list[bytes | str] = []  # ours: unchanged lines as they are, changed facts by id
        for line in lines:
            if line in unchanged:
                order.append(line)
                continue
            fact = _load(line)
            fid = fact.get("id")
            if not isinstance(fid, str):
                raise Unmergeable("a fact has no id")
            if fid in parsed:
                raise Unmergeable(f"fact {fid} appears twice on one side")
            order.append(fid)
            parsed[fid] = (line, fact)
        sides.append((order, parsed))
    (b_order, b_map), (o_order, o_map), (t_order, t_map) = sides
    out: list[bytes] = []
    conflicts: list[str] = []
    done: set[str] = set()

    def emit(fid: str) -> None:
        done.add(fid)
        base_fact = b_map[fid][1] if fid in b_map else None
        mine, yours = o_map.get(fid), t_map.get(fid)
        if mine is None or yours is None:  # one side lacks it (removing a fact is never merged away)
            chosen = mine or yours or b_map[fid]
            out.append(chosen[0])
            return
        picked = _pick(fid, base_fact, mine, yours, conflicts, forgotten)
        if isinstance(picked, tuple):
            out.extend([b"<<<<<<< ours (memstack: fact " + fid.encode() + b" closed differently)", picked[0],
                        b"=======", picked[1], b">>>>>>> theirs"])
        else:
            out.append(picked)

    kept: set[bytes] = set()
    for item in o_order:
        if isinstance(item, str):
            emit(item)
        elif item not in kept:  # unchanged on every side (once, as every fact)
            kept.add(item)
            out.append(item)
    for item in [*t_order, *b_order]:
        if isinstance(item, str) and item not in done:
            emit(item)
    return Result(b"".join(line + b"\n" for line in out), conflicts)


def merge(relpath: str, base: bytes, ours: bytes, theirs: bytes,
          forgotten: Callable[[], Forgotten] | None = None) -> Result:
    """Merge one memory file; raises Unmergeable where git's own merge must take over. `forgotten`: what the
    sides forget (`forgotten_in_sides`), asked only when a fact closed by forgetting meets a closing with a
    successor."""
    kind = layout.classify(relpath).kind
    if kind in layout.LOGS:
        return merge_log(base, ours, theirs, keep_both=kind in (layout.PROMOTIONS, layout.BINDER))
    if kind == layout.FACTS:
        return merge_facts(base, ours, theirs, forgotten)
    if kind in layout.DERIVED:
        return Result(ours)
    raise Unmergeable(f"{relpath} is not a file memstack merges")


SIDES = ("HEAD", "ORIG_HEAD", "MERGE_HEAD", "CHERRY_PICK_HEAD", "REBASE_HEAD")


def forgotten_in_sides(top: Path, folder: str) -> Callable[[], Forgotten]:
    """What the commits of the merge git runs the driver for forget, read once and only when asked: HEAD (ours,
    in a merge and in a replayed commit), the other side of a `git merge` or `git pull` (git names it in the
    environment, `GITHEAD_<sha>`), ORIG_HEAD (a rebase's branch before it began, holding every commit it
    replays) and the heads git keeps for a merge or a replay that stopped. A tombstone found there that the
    merged state lacks is refused by the checks of its commit (integrity/rules/facts.py), as any closing."""

    @cache
    def read() -> Forgotten:
        from memstack.repo import git, objects  # lazy: the driver merges most files without them
        from memstack.repo.sources import GitSource

        found = Forgotten()
        revs = [*SIDES, *(name[len("GITHEAD_"):] for name in os.environ if name.startswith("GITHEAD_"))]
        cat = objects.CatFile(top)
        try:
            for rev in revs:
                sha = git.rev_parse(top, f"{rev}^{{commit}}")
                if sha is not None:
                    for ref, tombstone in Forgotten.of(GitSource(top, cat, sha, folder)).by_id.items():
                        found.by_id.setdefault(ref, tombstone)
        finally:
            cat.close()
        return found

    return read
