"""`memstack check`: the invariants I1-I8 on a change, in O(size of the change).

Every mode comes down to *steps*: a new state (the index, a commit, the work
tree) against one base (HEAD, a parent, the empty tree). A step's changes come
from one raw diff (`git diff-index` / `git diff-tree`, renames split into a
deletion and an addition), and only the blobs those changes name are read,
through one long-running `git cat-file --batch`. This module holds the modes;
a step is run by `checker.py`, the rules are `rules/`'s, which file is which is
`layout.py`'s, derived files are rebuilt through `rebuilt.py` and only when a step
touches one, what memstack.yaml puts in force is `policies.py`'s.

Modes:
- staged: the index against HEAD (the pre-commit hook);
- worktree: tracked and untracked files against HEAD (`memstack check` with no
  flag: what `git add -A && git commit` would be checked for);
- range: every commit of a rev-list range against each of its parents (merges:
  full rules against the first parent, survival of the other parents' records);
- push: the commits a push adds, plus, for a branch whose old tip is not an
  ancestor of its new one (a force push), the old tip's records surviving in the
  new tip;
- all: every file at HEAD as if added to an empty store (a full audit, O(store)).

A store may be a folder of a larger repository (`folder`, e.g. `.memory/`): git is
asked for that folder only and hands back store-relative paths (`git.py`), so the
rules never see the prefix; violations are reported with it, as git shows the paths.
"""

from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

from memstack.base import progress
from memstack.base.errors import MemstackError
from memstack.integrity import erasure, guard, prerewrite
from memstack.integrity.checker import Checker
from memstack.integrity.report import Report, Result, Step
from memstack.integrity.violations import Violation
from memstack.repo import diffs, git, history
from memstack.repo.sources import WorktreeSource

__all__ = ["FORCE_PUSH", "RECREATED", "Report", "Result", "audit", "check_range", "commits", "pre_push",
           "pre_push_updates", "pre_receive", "pushed", "pushed_revs", "range_revs", "receive_updates", "staged",
           "worktree"]


# ---- modes --------------------------------------------------------------------------------------

def staged(repo: Path, folder: str = "") -> Report:
    base, changes = diffs.staged_changes(repo, folder)
    against = "HEAD" if base == "HEAD" else "the empty tree"
    if not changes:  # a code-only commit: nothing of the store staged, nothing to read
        return Report("staged", f"the staged changes (against {against})", [Result(None, "", against, [], 0)])
    with Checker(repo, folder) as checker:
        step = Step(changes, checker.source(None), restore="`git checkout HEAD -- {path}`", others=_merging(repo))
        violations = checker.step(step)
    return Report("staged", f"the staged changes (against {against})",
                  [Result(None, "", against, violations, len(changes))])


def worktree(repo: Path, folder: str = "") -> Report:
    base, changes = diffs.worktree_changes(repo, folder)
    against = "HEAD" if base == "HEAD" else "the empty tree"
    with Checker(repo, folder) as checker:
        step = Step(changes, WorktreeSource(repo / folder), restore="`git checkout HEAD -- {path}`",
                    worktree=repo / folder, others=_merging(repo))
        violations = checker.step(step)
    return Report("worktree", f"the work tree (against {against})",
                  [Result(None, "", against, violations, len(changes))])


def _merging(repo: Path) -> tuple[str, ...]:
    """The other side of a merge being concluded (MERGE_HEAD), as a commit's other parents are: the Binder
    lines it holds were checked on its side, and what it brings is checked where it lands (landing.py)."""
    other = git.rev_parse(repo, "MERGE_HEAD")
    return (other,) if other is not None else ()


def audit(repo: Path, folder: str = "") -> Report:
    """Every file at HEAD, as if added to an empty store: what a fresh clone would be checked for."""
    tree = git.rev_parse(repo, "HEAD^{tree}")
    if tree is None:
        return Report("all", "HEAD (no commits yet)")
    changes = diffs.tree_diffs(repo, [(git.EMPTY_TREE, tree)], folder)[0]
    with Checker(repo, folder) as checker, progress.bar(len(changes), "checking", "files") as checker.shown:
        step = Step(changes, checker.source("HEAD"),
                    restore="`git checkout HEAD -- {path}`", audit=True)
        violations = checker.step(step)
    return Report("all", "every file at HEAD", [Result("HEAD", "", "the empty tree", violations, len(changes))],
                  sorted(checker.stale))


FORCE_PUSH = "force push: the old tip's memory must survive in the new tip"
RECREATED = "re-created branch: the memory of the deleted branch of that name must survive in it"


def commits(repo: Path, revs: Sequence[str], scope: str, rewrites: Iterable[tuple[str, str]] = (),
            mode: str = "range", folder: str = "", recreated: Iterable[tuple[str, str]] = ()) -> Report:
    """Every commit `git log REVS` lists, against each of its parents; then each (old, new) tip
    pair of `rewrites` (and of `recreated`: a deleted tip, a new one) whose old tip the new one
    does not contain, for survival of the old memory."""
    listed = history.commits(repo, *revs)
    trees = {c.sha: c.tree for c in listed}
    inside = [c for c in listed if not c.boundary]
    pairs = []
    for commit in inside:
        for parent in commit.parents or (None,):
            pairs.append((_tree(repo, trees, parent), commit.tree))
    rewritten = [(old, new, FORCE_PUSH) for old, new in rewrites if not git.is_ancestor(repo, old, new)]
    rewritten += [(old, new, RECREATED) for old, new in recreated if not git.is_ancestor(repo, old, new)]
    pairs += [(_tree(repo, trees, old), _tree(repo, trees, new)) for old, new, _ in rewritten]
    listed_diffs = diffs.tree_diffs(repo, pairs, folder)
    pending = iter(listed_diffs)
    report = Report(mode, scope)
    with Checker(repo, folder) as checker, \
            progress.bar(sum(map(len, listed_diffs)), f"checking {len(inside)} commits", "files") as checker.shown:
        for commit in inside:
            parents = commit.parents or (git.EMPTY_TREE,)
            per_parent = [next(pending) for _ in parents]
            # A merge: what it took unchanged from another parent was checked in that parent's commits.
            others = [frozenset(c.path for c in changes) for changes in per_parent[1:]]
            inherited = frozenset(c.path for c in per_parent[0] if any(c.path not in o for o in others))
            found: set[Violation] = set()
            for index, (parent, changes) in enumerate(zip(parents, per_parent, strict=True)):
                step = Step(changes, checker.source(commit.sha), prefix=index == 0,
                            restore=f"`git checkout {parent[:12]} -- {{path}}` in a rewrite of this commit",
                            inherited=inherited, commit=commit.sha, others=tuple(commit.parents[1:]))
                found.update(checker.step(step))
            report.results.append(Result(commit.sha, commit.subject, ", ".join(p[:12] for p in parents),
                                         sorted(found), sum(map(len, per_parent))))
        for old, new, subject in rewritten:
            changes = next(pending)
            step = Step(changes, checker.source(new), prefix=False,
                        restore=f"`git checkout {old[:12]} -- {{path}}` in a new commit, or push without --force")
            report.results.append(Result(new, subject, old[:12], checker.step(step), len(changes)))
    return report


def _tree(repo: Path, trees: Mapping[str, str], rev: str | None) -> str:
    if rev is None:
        return git.EMPTY_TREE
    if rev in trees:
        return trees[rev]
    tree = git.rev_parse(repo, f"{rev}^{{tree}}")
    if tree is None:
        raise MemstackError(f"git has no commit {rev} (a shallow clone? fetch the full history)")
    return tree


def range_revs(spec: str) -> list[str]:
    """The rev-list arguments of `--range SPEC`; [] when SPEC is not of the form `check_range` takes."""
    ends = spec.replace("...", "..").split("..")
    return [] if not spec or spec.startswith("-") or any(ch.isspace() for ch in spec) or len(ends) > 2 else [spec]


def check_range(repo: Path, spec: str, folder: str = "") -> Report:
    """`A..B` (or `A...B`, or one revision: its whole history)."""
    ends = spec.replace("...", "..").split("..")
    if not range_revs(spec):
        raise MemstackError.marked("bad {arg:--range} {spec!r}: expected A..B (or one revision: its whole history)",
                                   spec=spec)
    for end in ends:
        if end and git.rev_parse(repo, f"{end}^{{commit}}") is None:
            raise MemstackError.marked("bad {arg:--range} {spec!r}: no commit {end!r} in {repo}", spec=spec, end=end,
                                       repo=repo)
    return commits(repo, [spec], f"the commits of {spec}", folder=folder)


def pushed(repo: Path, updates: Sequence[tuple[str, str]], exclude: Sequence[str], mode: str,
           folder: str = "", recreated: Sequence[tuple[str, str]] = ()) -> Report:
    """What a push adds: the new tips' commits not in `exclude` (rev-list arguments) nor in the
    old tips, and the survival of each old tip a new tip does not contain (a force push).
    A deletion (new tip ZERO) is allowed."""
    revs = pushed_revs(updates, exclude)
    if not revs:
        return Report(mode, "nothing (only deletions)")
    scope = f"the commits pushed ({', '.join(git.short(t) for t in revs[:revs.index('--not')])})"
    return commits(repo, revs, scope, [(o, n) for o, n in updates if not git.is_zero(o) and not git.is_zero(n)],
                   mode=mode, folder=folder, recreated=recreated)


def pushed_revs(updates: Sequence[tuple[str, str]], exclude: Sequence[str]) -> list[str]:
    """The rev-list arguments of the commits a push adds (`pushed`); [] when it only deletes."""
    tips = [new for _, new in updates if not git.is_zero(new)]
    if not tips:
        return []
    olds = [old for old, new in updates if not git.is_zero(old) and not git.is_zero(new)]
    return [*tips, "--not", *exclude, *olds]


def pre_push_updates(environ: Mapping[str, str]) -> tuple[list[tuple[str, str]], list[str]]:
    """The (old, new) updates and the rev-list exclusions of pre-commit's pre-push stage:
    PRE_COMMIT_FROM_REF/TO_REF, or for a push that brings a root commit, the local branch's
    commits on no ref of the remote."""
    source, target = environ.get("PRE_COMMIT_FROM_REF"), environ.get("PRE_COMMIT_TO_REF")
    local, remote = environ.get("PRE_COMMIT_LOCAL_BRANCH"), environ.get("PRE_COMMIT_REMOTE_NAME")
    on_remote = [f"--remotes={remote}"] if remote else []  # commits the remote has were checked when pushed
    if source and target:
        return [(source, target)], on_remote
    if local and remote:
        return [(git.ZERO, local)], on_remote
    raise MemstackError.marked("{arg:--pre-push} runs in pre-commit's pre-push stage, which sets PRE_COMMIT_FROM_REF"
                               " and PRE_COMMIT_TO_REF (or PRE_COMMIT_LOCAL_BRANCH and PRE_COMMIT_REMOTE_NAME);"
                               " by hand, use {arg:--range} A..B")


def pre_push(repo: Path, environ: Mapping[str, str], folder: str = "") -> Report:
    """pre-commit's pre-push stage (`pre_push_updates`)."""
    updates, on_remote = pre_push_updates(environ)
    return pushed(repo, updates, on_remote, "pre-push", folder)


def receive_updates(lines: Iterable[str]) -> list[guard.Update]:
    """A pre-receive hook's `old new ref` lines on stdin."""
    updates = []
    for line in lines:
        parts = line.split()
        if not parts:
            continue
        if len(parts) != 3:
            raise MemstackError.marked("{arg:--pre-receive}: expected `old new ref` lines on stdin, got {line!r}",
                                       line=line.strip())
        updates.append(guard.Update(*parts))
    return updates


def pre_receive(repo: Path, lines: Iterable[str], folder: str = "") -> Report:
    """A server-side pre-receive hook: `old new ref` lines; new refs' commits are those no
    existing ref reaches (the server's refs are not updated until the hook accepts)."""
    updates = receive_updates(lines)
    verdict = guard.check(repo, updates, folder)
    # A verified excise (integrity/erasure.py): its old tip's memory survives rewritten, so the commits after
    # the rewritten head are what is checked as a fast-forward; a receipt that does not verify is refused.
    excised, unverified = erasure.accepted(repo, [(u.ref, u.old, u.new) for u in updates], folder)
    pairs = [(excised[u.ref].rewritten if u.ref in excised else u.old, u.new) for u in updates]
    report = pushed(repo, pairs, guard.ON_REMOTE, "pre-receive", folder, verdict.survive)
    olds = {u.ref: u.old if not git.is_zero(u.old) else u.new for u in updates}
    stale = prerewrite.refusals(repo, [(u.old, u.new, u.ref) for u in updates], folder)
    report.results += [Result(olds[ref], what, ref, violations)
                       for ref, what, violations in [*verdict.refused, *unverified, *stale]]
    if not report.violations and verdict.remember:
        guard.remember_deletions(repo, verdict.remember)
    return report
