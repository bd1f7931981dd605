"""What to run when a git work tree holds no store but its remote's branches do.

The usual way to get there: a bare remote made with git's default branch (`master`) while the store
pushed `main`, so `git clone` finds the remote's HEAD naming a branch it lacks and checks out nothing
("warning: remote HEAD refers to nonexistent ref"). The clone is a work tree with no commit checked
out and the store on `origin/main`. Asked only when no store was found (an error path), so it may
read a few trees.
"""

from pathlib import Path

from memstack.repo import git

_CANDIDATES = 8  # remote-tracking branches looked into at most (the remotes' default ones first)


def _remote_branches(top: Path) -> list[str]:
    """The remote-tracking branches (`origin/main`), the likely homes of a store first: what a remote's
    HEAD names, then `main`, then `master`, then the rest in git's order."""
    env = git.no_git_env()
    listed = git.run(top, "for-each-ref", "--format=%(refname:short) %(symref:short)", "refs/remotes",
                     env=env).stdout.decode().splitlines()
    heads = {line.split()[1] for line in listed if len(line.split()) == 2}
    names = [line.split()[0] for line in listed if len(line.split()) == 1]
    return sorted(names, key=lambda name: (name not in heads, not name.endswith("/main"),
                                           not name.endswith("/master")))


def _remotes(top: Path) -> list[str]:
    return git.run(top, "remote", env=git.no_git_env()).stdout.decode().split()


def advice(here: Path) -> tuple[Path, str] | None:
    """The work tree around `here` and what it is, saying what to run to get the store's files into it
    ("a clone with no commit checked out ...: run `git checkout main`"), or None (not a work tree, or
    nothing to say: no remote branch holds a store and the clone is not empty)."""
    top = git.worktree_top(here)
    if top is None:
        return None
    unborn = not git.has_commits(top)
    branches = _remote_branches(top)
    holding = next((ref for ref in branches[:_CANDIDATES] if git.store_configs(top, ref)), None)
    if holding is not None:
        branch = holding.split("/", 1)[1]
        if unborn:
            return top, (f"a clone with no commit checked out (the remote's HEAD names a branch the remote"
                         f" lacks); the store is on {holding}: run `git checkout {branch}` in it, then"
                         f" `memstack install` (for the next clone, point the bare remote's HEAD at it:"
                         f" `git --git-dir REMOTE.git symbolic-ref HEAD refs/heads/{branch}`)")
        return top, f"a checkout of a commit with no store; the store is on {holding}: `git checkout {branch}`"
    if unborn and _remotes(top):
        return top, ("an empty clone: its remote holds no commit yet — push the store to it first (in the store:"
                     " `git push -u origin main`), then `git pull origin main` in this clone and `memstack install`")
    return None
