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
from dataclasses import dataclass
from pathlib import Path

import orjson

from memstack.base import layout
from memstack.base.times import iso
from memstack.integrity.violations import Violation
from memstack.repo import git

RECEIPTS = layout.ERASURES_LOG  # in the store: one line per excise, append-only


@dataclass(frozen=True)
class Receipt:
    id: str
    by: str
    excised_at: int
    records: tuple[str, ...]
    heads: dict[str, tuple[str, str]]  # ref -> (old head, rewritten head)
    line: int  # its line in kb/erasures.jsonl

    def named(self) -> str:
        """How a message names it: `erasure receipt ID (by NAME, TIME)`."""
        when = iso(self.excised_at) if isinstance(self.excised_at, int) else "?"
        return f"erasure receipt {self.id} (by {self.by}, {when})"


def parse(data: bytes) -> list[Receipt]:
    """The receipts of a `kb/erasures.jsonl`; a line that is not a receipt is passed over (the checks name it)."""
    found = []
    for number, line in enumerate(data.splitlines(), 1):
        try:
            record = orjson.loads(line)
            heads = {ref: (str(pair["old"]), str(pair["new"])) for ref, pair in record["heads"].items()}
            found.append(Receipt(str(record["id"]), str(record.get("by", "?")), record.get("excised_at", 0),
                                 tuple(str(r) for r in record.get("records", ())), heads, number))
        except (orjson.JSONDecodeError, KeyError, TypeError, AttributeError):
            continue
    return found


def at(repo: Path, rev: str, folder: str = "", env: dict[str, str] | None = None) -> list[Receipt]:
    """The receipts commit `rev` holds (none when it has no kb/erasures.jsonl)."""
    proc = git.run(repo, "cat-file", "blob", f"{rev}:{folder}{RECEIPTS}", env=env, ok=(0, 128))
    return parse(proc.stdout) if proc.returncode == 0 else []


def present(repo: Path, shas: Iterable[str], env: dict[str, str] | None = None) -> list[str]:
    """The commits of `shas` this repository has."""
    return [sha for sha in dict.fromkeys(shas)
            if git.run(repo, "cat-file", "-e", f"{sha}^{{commit}}", env=env, ok=(0, 1, 128)).returncode == 0]


def _rev_list(repo: Path, *revs: str) -> set[str]:
    return set(git.run(repo, "rev-list", *revs).stdout.decode().split())


def refusals(repo: Path, updates: Sequence[tuple[str, str, str]],
             folder: str = "") -> list[tuple[str, str, list[Violation]]]:
    """Pre-receive: each pushed ref (`old new ref`) whose new commits hold pre-rewrite history of a receipt the
    server's branches hold, as (ref, what, violations) naming the receipt. A pushed commit is pre-rewrite
    when it is a receipt's old head or its ancestor (while the server or the push has them), or when it
    adds a line of an excised record other than the one the rewritten history holds (the server's clean-up
    may have removed the old heads; the commit that first wrote the content is in any such push)."""
    tips = git.run(repo, "for-each-ref", "--format=%(objectname)", "refs/heads/").stdout.decode().split()
    receipts = {r.id: r for tip in tips for r in at(repo, tip, folder)}
    if not receipts:
        return []
    owner = {old: r for r in receipts.values() for old, _ in r.heads.values()}
    olds = present(repo, owner)
    # The server's refs are not updated yet: --all is the history it holds now (the rewritten one).
    stale = _rev_list(repo, *olds, "--not", "--all") if olds else set()
    refused = []
    for _, new, ref in updates:
        if git.is_zero(new):
            continue
        pushed = git.run(repo, "rev-list", "--topo-order", new, "--not", "--all").stdout.decode().split()
        found = [(sha, next((owner[o] for o in olds if sha == o or git.is_ancestor(repo, sha, o)), None))
                 for sha in pushed if sha in stale][:1] or _rewritten_lines(repo, new, tips, receipts, folder)
        if not found:
            continue
        sha, receipt = found[0]
        receipt = receipt or next(iter(receipts.values()))
        refused.append((ref, f"history the {receipt.named()} rewrote", [Violation(
            ref, 0, "I1", f"the push holds commit {sha[:12]} from before the rewrite recorded by the {receipt.named()}"
                          f" in {folder}{RECEIPTS}: it still carries content that was excised",
            "run `memstack sync` in this clone (it moves your own commits onto the rewritten history and"
            " drops the old one), then push again; never push the old history")]))
    return refused


def _rewritten_lines(repo: Path, new: str, tips: Sequence[str], receipts: dict[str, Receipt],
                     folder: str) -> list[tuple[str, Receipt | None]]:
    """The newest pushed commit that adds a line of an excised record other than the line the server's
    branches hold for it, with its receipt ([] when none does)."""
    of = {record: r for r in receipts.values() for record in r.records if record and "/" not in record}
    if not of:
        return []
    pattern = "|".join(sorted(of))
    log = git.run(repo, "log", "-U0", "--no-color", "--no-ext-diff", "--no-textconv", "--format=%x00%H",
                  f"-G{pattern}", new, "--not", "--all", "--", f"{folder}*.jsonl" if folder else "*.jsonl").stdout
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
                    grep = git.run(repo, "grep", "-h", "-F", "-e", record, *tips, "--", "*.jsonl", ok=(0, 1)).stdout
                    current[record] = set(grep.splitlines())
                if line[1:] not in current[record]:
                    return [(sha.decode(), receipt)]
    return []
