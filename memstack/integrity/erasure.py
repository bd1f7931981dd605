"""A rewrite a guarded remote accepts: a non-fast-forward push that carries an erasure receipt whose map
matches it and whose rewrite verifies (docs/forgetting.md, "Excise").

A push that moves ref X from O to N, O not an ancestor of N, is an excise when N's tree holds
kb/erasures.jsonl and its last line (the receipt) says heads[X].old == O, with heads[X].new (R) an
ancestor of N. The rewrite O -> R verifies when the two histories, walked in step from O and R through
their parents in order, pair commit for commit: the same author, committer, dates and message, the same
number of parents, and trees identical except blobs of the store where the new blob is T of the old one
(integrity/excision.py), every marker normalised on both sides (the server has no salt), T taken with the
records the receipt names as they were at O. The commits after R are checked by the usual rules.
"""

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson

from memstack.base import layout
from memstack.base.forgotten import Forgotten
from memstack.integrity import excision
from memstack.integrity.excision import Marker
from memstack.integrity.violations import Violation
from memstack.repo import diffs, git
from memstack.repo.objects import CatFile
from memstack.repo.sources import GitSource

FIX = ("push the history `memstack excise` wrote, unchanged, with its receipt on top (kb/erasures.jsonl);"
       " anything else may not rewrite a guarded branch")
SKIPPED = (b"tree", b"parent", b"gpgsig", b"gpgsig-sha256", b"mergetag")  # what a rewrite may change


@dataclass(frozen=True)
class Accepted:
    ref: str
    rewritten: str  # heads[ref].new: the commits after it are checked as a fast-forward from it
    receipt: str  # the receipt's id


def receipt_of(repo: Path, cat: CatFile, rev: str, folder: str) -> dict[str, Any] | None:
    """The last line of kb/erasures.jsonl at `rev`, if it is a receipt."""
    data = cat.read(f"{rev}:{folder}{layout.ERASURES_LOG}")
    lines = (data or b"").splitlines()
    if not lines:
        return None
    try:
        receipt = orjson.loads(lines[-1])
    except orjson.JSONDecodeError:
        return None
    return receipt if isinstance(receipt, dict) else None


def _meta(raw: bytes) -> tuple[list[bytes], bytes]:
    """A commit object's headers that a rewrite must keep (author, committer, encoding, ...), and its message."""
    head, _, message = raw.partition(b"\n\n")
    kept, skipping = [], False
    for line in head.split(b"\n"):
        if line.startswith(b" ") and skipping:
            continue  # a continuation line of a skipped header (a signature)
        skipping = line.split(b" ", 1)[0] in SKIPPED
        if not skipping:
            kept.append(line)
    return kept, message


def _parents(raw: bytes) -> list[str]:
    return [line.split(b" ", 1)[1].decode() for line in raw.partition(b"\n\n")[0].split(b"\n")
            if line.startswith(b"parent ")]


def _tree(raw: bytes) -> str:
    return raw.split(b"\n", 1)[0].split(b" ", 1)[1].decode()


def verify(repo: Path, ref: str, old: str, new: str, folder: str = "") -> tuple[Accepted | None, list[Violation]]:
    """Whether the non-fast-forward update of `ref` from `old` to `new` is a verified excise: (accepted, [])
    or (None, why not). (None, []) when `new` carries no receipt at all (the usual rules then refuse it)."""
    with CatFile(repo) as cat:
        receipt = receipt_of(repo, cat, new, folder)
        if receipt is None:
            return None, []
        where = f"{folder}{layout.ERASURES_LOG}"

        def refuse(what: str) -> tuple[None, list[Violation]]:
            return None, [Violation(where, 0, "I1", f"the rewrite of {ref} is not the one receipt"
                                                   f" {receipt.get('id')!r} describes: {what}", FIX)]

        heads = receipt.get("heads")
        mapped = heads.get(ref) if isinstance(heads, dict) else None
        if not isinstance(mapped, dict) or mapped.get("old") != old:
            return refuse(f"its map does not move {ref} from {old[:12]} (the receipt says"
                          f" {str((mapped or {}).get('old'))[:12]})")
        rewritten = str(mapped.get("new", ""))
        if git.rev_parse(repo, f"{rewritten}^{{commit}}") is None or not git.is_ancestor(repo, rewritten, new):
            return refuse(f"its new head {rewritten[:12]} is not in the pushed history")
        records = [r for r in receipt.get("records") or [] if isinstance(r, str)]
        source = GitSource(repo, cat, old, folder)
        forgotten = Forgotten.of(source)  # what the tombstones forget, the facts promoted from it included
        unforgotten = [r for r in records if r not in forgotten]
        if not records or unforgotten:
            return refuse(f"it names {unforgotten[0] if unforgotten else 'no record'!r}, which no tombstone at"
                          f" {old[:12]} forgets")
        excised = excision.gather([source], records)
        problem = _walk(repo, cat, old, rewritten, folder, excised)
        if problem:
            return refuse(problem)
        return Accepted(ref, rewritten, str(receipt.get("id"))), []


def _walk(repo: Path, cat: CatFile, old: str, new: str, folder: str, excised: excision.Excised) -> str:
    """"" when the history of `new` is the history of `old` with T applied; else what differs first."""
    mark = Marker(b"")  # markers distinct (an anchor's keys stay apart); compared normalised
    paired: dict[str, str] = {}
    todo = [(old, new)]
    trees: list[tuple[str, str, str, str]] = []  # (old commit, new commit, old tree, new tree)
    while todo:
        a, b = todo.pop()
        if a in paired:
            if paired[a] != b:
                return f"commit {a[:12]} is paired with both {paired[a][:12]} and {b[:12]}"
            continue
        paired[a] = b
        if a == b:
            continue  # the history below a commit T left alone is the same on both sides
        raw_a, raw_b = cat.read(a), cat.read(b)
        if raw_a is None or raw_b is None:
            return f"commit {(a if raw_a is None else b)[:12]} is missing"
        if _meta(raw_a) != _meta(raw_b):
            return f"commit {b[:12]} does not keep the author, committer, dates and message of {a[:12]}"
        pa, pb = _parents(raw_a), _parents(raw_b)
        if len(pa) != len(pb):
            return f"commit {b[:12]} has {len(pb)} parent(s) where {a[:12]} has {len(pa)}"
        todo += list(zip(pa, pb, strict=True))
        trees.append((a, b, _tree(raw_a), _tree(raw_b)))
    seen: dict[tuple[str, str], bool] = {}
    for (a, b, _, _), changes in zip(trees, diffs.tree_diffs(repo, [(ta, tb) for _, _, ta, tb in trees]),
                                     strict=True):
        for change in changes:
            problem = _blob_problem(cat, change, folder, excised, mark, seen)
            if problem:
                return f"commit {b[:12]} (the rewrite of {a[:12]}): {change.path} {problem}"
    return ""


def _blob_problem(cat: CatFile, change: diffs.Change, folder: str, excised: excision.Excised, mark: Marker,
                  seen: dict[tuple[str, str], bool]) -> str:
    if change.status != "M" or change.old_mode != change.new_mode:
        return "is added, deleted or changed in mode"
    if not change.path.startswith(folder):
        return "is outside the store"
    key = (change.old_sha, change.new_sha)
    if key not in seen:
        old, new = cat.read(change.old_sha), cat.read(change.new_sha)
        expected = None if old is None else excision.transform(change.path[len(folder):], old, excised, mark)
        path = change.path[len(folder):]
        seen[key] = expected is not None and new is not None \
            and excision.comparable(path, new) == excision.comparable(path, expected)
    return "" if seen[key] else "changed beyond the excised records' content"


def accepted(repo: Path, updates: Sequence[tuple[str, str, str]], folder: str = ""
             ) -> tuple[dict[str, Accepted], list[tuple[str, str, list[Violation]]]]:
    """The non-fast-forward updates (ref, old, new) that are verified excises, and those that carry a receipt
    but do not verify (refused, with why)."""
    found: dict[str, Accepted] = {}
    refused = []
    for ref, old, new in updates:
        if git.is_zero(old) or git.is_zero(new) or git.is_ancestor(repo, old, new):
            continue
        ok, why = verify(repo, ref, old, new, folder)
        if ok is not None:
            found[ref] = ok
        elif why:
            refused.append((ref, f"rewrite of {ref}", why))
    return found, refused
