"""A repository's history as memstack reads it: the commits of a range, oldest first (what the checks
walk), the commits that changed a path, and a commit's author, date and subject (what review shows)."""

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from memstack.repo.git import run


@dataclass(frozen=True, slots=True)
class Commit:
    sha: str
    tree: str
    parents: tuple[str, ...]
    subject: str
    boundary: bool  # outside the range: listed only for its tree, as a parent of a commit inside it


def commits(cwd: Path, *revs: str) -> list[Commit]:
    """The commits `git log REVS` lists, oldest first, plus the boundary parents they need.

    REVS are rev-list arguments: `A..B`, or `NEW --not --all` for what a push adds.
    """
    data = run(cwd, "log", "--boundary", "--topo-order", "--reverse", "--no-show-signature",
               "--format=%m %H %T %P%x09%s", *revs, "--").stdout.decode("utf-8", "replace")
    found = []
    for line in data.splitlines():
        if not line:
            continue
        head, _, subject = line.partition("\t")
        mark, sha, tree, *parents = head.split()
        found.append(Commit(sha, tree, tuple(parents), subject, boundary=mark == "-"))
    return found


def first_parent_touching(cwd: Path, rev: str, path: str) -> list[str]:
    """The commits on `rev`'s first-parent line whose `path` differs from their first parent's, newest
    first (a merge that brought a change of `path` in included): one path-limited `git rev-list`."""
    data = run(cwd, "--literal-pathspecs", "rev-list", "--first-parent", rev, "--", path).stdout.decode()
    return data.split()


@dataclass(frozen=True, slots=True)
class CommitDetails:
    sha: str
    parents: tuple[str, ...]
    author: str
    email: str
    date: str  # the author date, ISO-8601 with its offset
    subject: str


def details(cwd: Path, shas: Sequence[str]) -> dict[str, CommitDetails]:
    """Author, date, parents and subject of each of `shas` (full commit names): one `git show -s`."""
    if not shas:
        return {}
    data = run(cwd, "show", "-s", "--no-show-signature", "--format=%H%x00%P%x00%an%x00%ae%x00%aI%x00%s%x00",
               *shas, "--").stdout.decode("utf-8", "replace")
    found = {}
    fields = data.split("\0")
    for at in range(0, len(fields) - 5, 6):
        sha, parents, author, email, date, subject = (field.strip("\n") for field in fields[at:at + 6])
        found[sha] = CommitDetails(sha, tuple(parents.split()), author, email, date, subject)
    return found
