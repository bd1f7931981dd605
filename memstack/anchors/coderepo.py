"""The code repository anchors point into: `--repo PATH`, else `code.repo` of memstack.yaml (relative to
the store's folder), else the git repository the store is a folder of. A store that is a repository of its
own names one: its own files are memory, not code."""

from pathlib import Path

from memstack.base.errors import MemstackError, bad
from memstack.repo import git
from memstack.repo.store import Store


def code_repository(store: Store, repo: str | None = None) -> Path:
    """The top of the code repository's work tree."""
    if repo is not None:
        return _top(Path(repo).expanduser(), "--repo", repo)
    named = store.config.get("code", "repo")
    if named is not None:
        return _top(store.root / Path(str(named)).expanduser(), "code.repo", str(named))
    top = git.worktree_top(store.root)
    if top is None or top.resolve() == store.root.resolve():
        raise MemstackError.marked(
            "this store is not a folder of a code repository: name the repository code anchors point into with"
            " {arg:--repo PATH} or `code.repo` in memstack.yaml")
    return top.resolve()


def _top(path: Path, origin: str, given: str) -> Path:
    if not path.is_dir():
        raise bad(origin, repr(given), "no such folder")
    top = git.worktree_top(path.resolve())
    if top is None:
        raise bad(origin, repr(given), "not in a git work tree")
    return top.resolve()


def head(top: Path) -> str | None:
    """HEAD of the code repository, or None before its first commit."""
    return git.rev_parse(top, "HEAD") if git.has_commits(top) else None
