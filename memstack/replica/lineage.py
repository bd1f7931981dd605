"""Where the replica's commit stands against HEAD, and whether `pg sync` may replace it (docs/postgres.md).

A sync follows a history rewritten in this clone (a reset, a rebase, another branch, an excise) and refuses
to roll the replica back:

- the replica's commit is unknown to this clone: another clone synced a commit not fetched here (refused),
  unless an erasure receipt HEAD holds names it as the head its excise replaced (the replica holds the very
  history this clone's excise rewrote: followed, copied whole);
- it is ahead of HEAD on a ref of this clone (a branch, a remote-tracking branch, a tag): refused; ahead of
  HEAD in the reflog only (this clone rewound): followed;
- it holds an erasure receipt HEAD does not, and HEAD is no ancestor of it: HEAD is from before that excise
  (a clone that fetched the rewritten history without `memstack sync`). Copying HEAD would put the excised
  content back in the replica: refused, naming the receipt.

`--force` copies HEAD whatever the replica holds.
"""

from pathlib import Path

from memstack.base import layout
from memstack.base.receipts import Receipt, parse
from memstack.repo import git, objects

EXCISED = "excised"  # `pg status`: the replica holds the history an excise here rewrote (a sync follows it)
STALE = "stale"  # `pg status`: HEAD is from before an excise the replica's commit holds (a sync is refused)


def receipts(cat: objects.CatFile, tree: str | None) -> list[Receipt]:
    """The erasure receipts the store's `tree` holds (none when this clone lacks the tree)."""
    data = cat.read(f"{tree}:{layout.ERASURES_LOG}") if tree else None
    return parse(data) if data else []


def excised_from(cat: objects.CatFile, head_tree: str, synced: str) -> Receipt | None:
    """The receipt HEAD holds whose excise replaced `synced` (a branch's old head), if any."""
    return next((r for r in receipts(cat, head_tree) if any(old == synced for old, _ in r.heads.values())), None)


def known(root: Path, commit: str) -> bool:
    return git.rev_parse(root, f"{commit}^{{commit}}") is not None


def ahead_on(root: Path, synced: str, head: str) -> str | None:
    """The ref of this clone holding `synced` when `synced` is ahead of HEAD on one (this clone is behind)."""
    if not git.is_ancestor(root, head, synced):
        return None
    refs = git.out(root, "for-each-ref", "--contains", synced, "--format=%(refname:short)", "refs/heads/",
                   "refs/remotes/", "refs/tags/").split()  # not refs/stash: a stash is no line of history
    return refs[0] if refs else None


def before_excise(root: Path, cat: objects.CatFile, synced: tuple[str, str], head: tuple[str, str]
                  ) -> Receipt | None:
    """The receipt the replica's commit holds and HEAD does not, HEAD being no ancestor of that commit: HEAD is
    on the history from before that excise. `synced` and `head` are (commit, store's tree)."""
    at_head = {r.id for r in receipts(cat, head[1])}
    missing = [r for r in receipts(cat, synced[1]) if r.id not in at_head]
    if not missing or git.is_ancestor(root, head[0], synced[0]):
        return None
    return missing[-1]


def refusal(root: Path, cat: objects.CatFile, synced: tuple[str, str], head: tuple[str, str]) -> str | None:
    """Why HEAD must not replace the replica's commit, and what to do (one line); None when a sync may.
    `synced` and `head` are (commit, store's tree)."""
    commit, head_commit = synced[0], head[0]
    force = f"pass --force to copy HEAD ({head_commit[:12]}) over it"
    if not known(root, commit):
        if excised_from(cat, head[1], commit) is not None:
            return None
        done_here = receipts(cat, head[1])
        if done_here:  # this clone is on a rewritten history: the commit may be one its excise pruned
            return (f"the replica holds commit {commit[:12]}, which this clone does not have: if the excise of"
                    f" the {done_here[-1].named()} pruned it here, {force}; else pull first with `memstack sync`")
        return (f"the replica holds commit {commit[:12]}, which this clone does not have: pull first with"
                f" `memstack sync`, or {force}")
    ref = ahead_on(root, commit, head_commit)
    if ref is not None:
        return (f"the replica holds commit {commit[:12]}, ahead of this clone's HEAD (on {ref}): pull first,"
                f" or {force}")
    receipt = before_excise(root, cat, synced, head)
    if receipt is not None:
        return (f"the replica holds commit {commit[:12]}, made after the excise of the {receipt.named()}, and"
                f" this clone's HEAD ({head_commit[:12]}) is from before it: syncing it would put excised content"
                " back; fetch, then `memstack sync` (it moves this clone onto the rewritten history), then sync"
                " the replica")
    return None
