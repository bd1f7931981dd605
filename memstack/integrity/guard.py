"""What a push may do to the refs of a guarded remote (`memstack check --pre-receive`).

Checking the commits a push adds is not enough: `git push remote :agent-x` then
`git push remote HEAD:agent-x` drops pushed records without rewriting a single
commit the hook sees. So, on the remote:

- deleting a ref whose commits hold memory no other ref keeps is refused,
  unless the remote's administrator allows it: `git config memstack.allowDeleteBranch
  true` in the bare repository, or MEMSTACK_ALLOW_DELETE_BRANCH=1 in the hook's
  environment. Every accepted deletion is remembered as `refs/memstack/deleted/<ref>`
  (the deleted tip, which also keeps its objects from garbage collection), also one
  whose memory another ref keeps (merged, or a copy);
- a ref created under a name that was deleted must keep the deleted tip's records,
  exactly as a force push must keep the old tip's (its memory surviving elsewhere
  does not let the branch of that name lose it);
- `refs/memstack/` is the remote's own: a push may not create, move or delete
  anything there. An administrator who really means to forget a deleted
  branch deletes its `refs/memstack/deleted/` ref by hand on the server;
- `refs/replace/` is refused too: a replace ref makes git read another object in a commit's place, and
  memstack's checks read the commits themselves (repo/git.py), so a pushed one would only show a
  different history to whoever fetches it.
"""

import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from memstack.base import layout
from memstack.integrity.violations import Violation
from memstack.repo import diffs, git, history

DELETED = "refs/memstack/"
REPLACE = "refs/replace/"
# The commits the remote holds, checked when pushed (a push's commits are those none of these reach): not
# what a replace ref holds, which may have been pushed before replace refs were refused and checked then
# in another commit's place.
ON_REMOTE = (f"--exclude={REPLACE}*", "--all")
ALLOW_CONFIG = "memstack.allowDeleteBranch"
ALLOW_ENV = "MEMSTACK_ALLOW_DELETE_BRANCH"


@dataclass(frozen=True)
class Update:
    old: str
    new: str
    ref: str

    @property
    def deletion(self) -> bool:
        return git.is_zero(self.new) and not git.is_zero(self.old)

    @property
    def creation(self) -> bool:
        return git.is_zero(self.old) and not git.is_zero(self.new)


def record_of(ref: str) -> str:
    """Where an allowed deletion of `ref` is remembered."""
    return f"{DELETED}deleted/{ref.removeprefix('refs/')}"


def deletion_allowed(repo: Path) -> bool:
    if os.environ.get(ALLOW_ENV, "").strip().lower() in ("1", "true", "yes"):
        return True
    proc = git.run(repo, "config", "--bool", ALLOW_CONFIG, ok=(0, 1))
    return proc.stdout.decode().strip() == "true"


def _refs(repo: Path) -> dict[str, str]:
    data = git.run(repo, "for-each-ref", "--format=%(objectname) %(refname)").stdout.decode()
    return {ref: sha for sha, ref in (line.split(" ", 1) for line in data.splitlines() if line)}


def _memory_commits(repo: Path, tip: str, keep: Sequence[str], folder: str = "") -> list[history.Commit]:
    """The commits reachable from `tip` but from none of `keep` that change a memory file."""
    every = history.commits(repo, tip, "--not", *keep)
    trees = {c.sha: c.tree for c in every}
    listed = [c for c in every if not c.boundary]
    pairs = []
    for commit in listed:
        parent = commit.parents[0] if commit.parents else None
        base = trees.get(parent) if parent else git.EMPTY_TREE
        pairs.append((base or git.rev_parse(repo, f"{parent}^{{tree}}") or git.EMPTY_TREE, commit.tree))
    per_pair = diffs.tree_diffs(repo, pairs, folder) if pairs else []
    return [c for c, changes in zip(listed, per_pair, strict=True)
            if any(layout.classify(ch.path).memory for ch in changes)]


@dataclass
class Verdict:
    refused: list[tuple[str, str, list[Violation]]]  # (ref, what, violations)
    survive: list[tuple[str, str]]  # (deleted tip, new tip): a ref re-created under a deleted name
    remember: list[Update]  # the deletions: recorded if the push is accepted


def check(repo: Path, updates: Sequence[Update], folder: str = "") -> Verdict:
    """What the push does to refs: refused updates, survivals the commit check must add, deletions to record."""
    refs = _refs(repo)
    gone = {u.ref for u in updates if u.deletion}
    keep = sorted({sha for ref, sha in refs.items() if ref not in gone and not ref.startswith((DELETED, REPLACE))}
                  | {u.new for u in updates if not git.is_zero(u.new) and not u.ref.startswith((DELETED, REPLACE))})
    verdict = Verdict([], [], [])
    allowed: bool | None = None
    for update in updates:
        if update.ref.startswith(DELETED):
            verdict.refused.append((update.ref, "a push may not change refs/memstack/", [Violation(
                update.ref, 0, "I1", "refs/memstack/ holds the remote's record of deleted branches",
                "push elsewhere; only the remote's administrator changes refs/memstack/ (on the server)")]))
        elif update.ref.startswith(REPLACE):
            verdict.refused.append((update.ref, "a push may not change refs/replace/", [Violation(
                update.ref, 0, "I1", "a replace ref makes git show another commit in a commit's place",
                "push the commits themselves; only the remote's administrator changes refs/replace/ (on the"
                " server)")]))
        elif update.deletion:
            lost = _memory_commits(repo, update.old, keep, folder)
            if not lost:  # another ref keeps its memory; a ref re-created under its name must keep it too
                verdict.remember.append(update)
                continue
            if allowed is None:
                allowed = deletion_allowed(repo)
            if allowed:
                verdict.remember.append(update)
            else:
                verdict.refused.append((update.ref, f"deleting {update.ref}", [Violation(
                    update.ref, 0, "I1", f"deleting it drops {len(lost)} commit{'s' * (len(lost) != 1)} of memory no"
                                         f" other ref holds (the newest: {lost[-1].sha[:12]} {lost[-1].subject!r})",
                    f"merge it into a branch that stays, or have the remote's administrator allow deletions"
                    f" (`git config {ALLOW_CONFIG} true` on the remote)")]))
        elif update.creation:
            deleted = refs.get(record_of(update.ref))
            if deleted is not None:
                verdict.survive.append((deleted, update.new))
    return verdict


def remember_deletions(repo: Path, updates: Sequence[Update]) -> None:
    """Record each deletion's tip under refs/memstack/deleted/ (outside git's quarantine:
    the deleted tip is already in the object store, and git forbids ref updates inside it)."""
    env = {k: v for k, v in os.environ.items()
           if k not in ("GIT_QUARANTINE_PATH", "GIT_OBJECT_DIRECTORY", "GIT_ALTERNATE_OBJECT_DIRECTORIES")}
    for update in updates:
        git.run(repo, "update-ref", "-m", "memstack: a deleted branch's tip", record_of(update.ref), update.old,
                env=env)
