"""History from before an excise: what an erasure receipt rewrote, and pushes that would bring it back.

`memstack excise` rewrites every branch to remove forgotten content and commits a
receipt line to `kb/erasures.jsonl` (docs/forgetting.md): its id, who, when, the ids
excised, and for each branch its head before (`old`) and after (`new`) the rewrite.
The commits of an `old` head that the rewritten history does not hold are the
*pre-rewrite history*: they still carry the excised content. A clone that did not
sync may push them back (built on, merged, or force-pushed); the server's
pre-receive refuses such a push, naming the receipt, and tells the clone to run
`memstack sync`, which moves its own commits onto the rewritten history
(workflows/resync.py).
"""

from collections.abc import Iterable, Sequence
from pathlib import Path

import orjson

from memstack.base import layout
from memstack.base.receipts import Receipt, parse
from memstack.integrity import guard
from memstack.integrity.violations import Violation
from memstack.kb.facts import CLOSING_FIELDS
from memstack.repo import git

RECEIPTS = layout.ERASURES_LOG  # in the store: one line per excise, append-only


def at(repo: Path, rev: str, folder: str = "", env: dict[str, str] | None = None) -> list[Receipt]:
    """The receipts commit `rev` holds (none when it has no kb/erasures.jsonl)."""
    proc = git.run(repo, "cat-file", "blob", f"{rev}:{folder}{RECEIPTS}", env=env, ok=(0, 128))
    return parse(proc.stdout) if proc.returncode == 0 else []


def present(repo: Path, shas: Iterable[str], env: dict[str, str] | None = None) -> list[str]:
    """The commits of `shas` this repository has."""
    return [sha for sha in dict.fromkeys(shas)
            if git.run(repo, "cat-file", "-e", f"{sha}^{{commit}}", env=env, ok=(0, 1, 128)).returncode == 0]


def _rev_list(repo: Path, *revs: str, env: dict[str, str] | None = None) -> list[str]:
    return git.run(repo, "rev-list", "--topo-order", *revs, env=env).stdout.decode().split()


def stale_commit(repo: Path, new: str, exclude: Sequence[str], receipts: Sequence[Receipt], tips: Sequence[str],
                 folder: str = "", env: dict[str, str] | None = None) -> tuple[str, Receipt] | None:
    """The newest commit of `new --not EXCLUDE` from before a rewrite one of `receipts` recorded, with that
    receipt; None when there is none. Pre-rewrite: a receipt's old head or its ancestor (while this repository
    has them), or a commit adding a line of an excised record other than the line `tips` hold for it (old
    heads may be gone; the commit that first wrote the content is in any such history)."""
    owner = {old: r for r in receipts for old, _ in r.heads.values()}
    olds = present(repo, owner, env)
    stale = set(_rev_list(repo, *olds, "--not", *exclude, env=env)) if olds else set()
    for sha in _rev_list(repo, new, "--not", *exclude, env=env) if stale else []:
        if sha in stale:
            holder = [o for o in olds if sha == o or git.run(repo, "merge-base", "--is-ancestor", sha, o, env=env,
                                                             ok=(0, 1)).returncode == 0]
            return sha, owner[holder[0]] if holder else receipts[0]
    return _rewritten_line(repo, [new, "--not", *exclude], receipts, tips, folder, env)


def refusals(repo: Path, updates: Sequence[tuple[str, str, str]],
             folder: str = "") -> list[tuple[str, str, list[Violation]]]:
    """Pre-receive: each pushed ref (`old new ref`) whose new commits hold pre-rewrite history (`stale_commit`)
    of a receipt the server's branches hold, as (ref, what, violations) naming the receipt."""
    tips = git.run(repo, "for-each-ref", "--format=%(objectname)", "refs/heads/").stdout.decode().split()
    receipts = list({r.id: r for tip in tips for r in at(repo, tip, folder)}.values())
    if not receipts:
        return []
    refused = []
    for _, new, ref in updates:
        # The server's refs are not updated yet: they hold the history it has now (the rewritten one).
        found = None if git.is_zero(new) else stale_commit(repo, new, guard.ON_REMOTE, receipts, tips, folder)
        if found is None:
            continue
        sha, receipt = found
        refused.append((ref, f"history the {receipt.named()} rewrote", [Violation(
            ref, 0, "I1", f"the push holds commit {sha[:12]} from before the rewrite recorded by the {receipt.named()}"
                          f" in {folder}{RECEIPTS}: it still carries content that was excised",
            "run `memstack sync` in this clone (it moves your own commits onto the rewritten history and"
            " drops the old one), then push again; never push the old history")]))
    return refused


def _rewritten_line(repo: Path, revs: Sequence[str], receipts: Sequence[Receipt], tips: Sequence[str], folder: str,
                    env: dict[str, str] | None) -> tuple[str, Receipt] | None:
    """The newest commit of `revs` that adds a line of an excised record other than the line `tips` hold for
    it, with its receipt."""
    of = {record: r for r in receipts for record in r.records if record and "/" not in record}
    if not of:
        return None
    pattern = "|".join(sorted(of))
    log = git.run(repo, "log", "-U0", "--no-color", "--no-ext-diff", "--no-textconv", "--format=%x00%H",
                  f"-G{pattern}", *revs, "--", f"{folder}*.jsonl" if folder else "*.jsonl", env=env).stdout
    current: dict[str, set[bytes]] = {}
    for block in log.split(b"\0")[1:]:
        sha, _, diff = block.partition(b"\n")
        for line in diff.splitlines():
            if not line.startswith(b"+") or line.startswith(b"+++"):
                continue
            for record, receipt in of.items():
                if record.encode() not in line:
                    continue
                if record not in current:
                    grep = git.run(repo, "grep", "-h", "-F", "-e", record, *tips, "--", "*.jsonl", env=env,
                                   ok=(0, 1)).stdout
                    current[record] = {_unclosed(held) for held in grep.splitlines()}
                if _unclosed(line[1:]) not in current[record]:
                    return sha.decode(), receipt
    return None


def _unclosed(line: bytes) -> bytes:
    """A line as the rewrite is judged by: a fact's without its closing. A fact is closed after it was written
    (a forget closes the fact its record became), so the commits before the closing add it open while the
    branches hold it closed: the same excised line, not content from before the rewrite."""
    try:
        record = orjson.loads(line)
    except orjson.JSONDecodeError:
        return line
    if not isinstance(record, dict) or not all(field in record for field in CLOSING_FIELDS):
        return line
    return orjson.dumps({k: v for k, v in record.items() if k not in CLOSING_FIELDS}, option=orjson.OPT_SORT_KEYS)
