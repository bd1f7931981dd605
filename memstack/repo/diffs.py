"""Raw diffs from git: what a commit, the index or the work tree changed, path by path (`Change`), read with
`--raw -z --no-renames` through the one git helper (`git.run`)."""

import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from memstack.base.errors import MemstackError
from memstack.repo.git import EMPTY_TREE, SYMLINK, ZERO, decode_path, has_commits, only_folder, run


@dataclass(frozen=True, slots=True)
class Change:
    """One path of a raw diff (`--raw -z --no-renames`): what it was and what it became.

    A rename is a deletion plus an addition. `new_sha` is ZERO for a deletion, and
    also, in a diff against the work tree, for a file git has not hashed yet (read it
    from disk).
    """

    path: str
    status: str  # A added, D deleted, M modified, T type changed (e.g. file -> symlink)
    old_mode: str  # "000000" when added
    new_mode: str  # "000000" when deleted
    old_sha: str
    new_sha: str

    @property
    def added(self) -> bool:
        return self.old_mode == "000000"

    @property
    def deleted(self) -> bool:
        return self.new_mode == "000000"


def parse_raw(data: bytes, start: int = 0, stop_at_header: bool = False,
               prefix: str = "") -> tuple[list[Change], int]:
    """Raw records from `start`: `:old_mode new_mode old_sha new_sha status` NUL `path` NUL, ...

    With a store `prefix` (`.memory/`), git was asked for that folder only and the paths come
    back store-relative (the prefix cut off), as the rules expect them.
    """
    changes = []
    cut = len(prefix)
    pos = start
    while pos < len(data) and data[pos:pos + 1] == b":":
        meta_end = data.index(b"\0", pos)
        path_end = data.index(b"\0", meta_end + 1)
        old_mode, new_mode, old_sha, new_sha, status = data[pos + 1:meta_end].decode().split(" ")
        path = decode_path(data[meta_end + 1:path_end])
        if path.startswith(prefix):
            changes.append(Change(path[cut:], status[:1], old_mode, new_mode, old_sha, new_sha))
        pos = path_end + 1
    if pos < len(data) and not stop_at_header:
        raise MemstackError(f"git: unexpected raw diff output at byte {pos}")
    return changes, pos


_RAW = ("--raw", "-z", "--no-renames", "--no-abbrev", "--no-textconv", "--no-ext-diff")


def staged_changes(cwd: Path, prefix: str = "") -> tuple[str, list[Change]]:
    """The index against HEAD (the empty tree before the first commit): what `git commit` would record.

    `cwd` is the repository's top; with a store `prefix` only its folder is diffed (a code-only
    commit costs one diff-index that finds nothing) and paths are store-relative.
    """
    base = "HEAD" if has_commits(cwd) else EMPTY_TREE
    data = run(cwd, "--literal-pathspecs", "diff-index", "--cached", *_RAW, base, *only_folder(prefix)).stdout
    return base, parse_raw(data, prefix=prefix)[0]


def worktree_changes(cwd: Path, prefix: str = "") -> tuple[str, list[Change]]:
    """The work tree (tracked and untracked, git-ignored left out) against HEAD or the empty tree.

    Every new side that is not a deletion has `new_sha` ZERO: read it from disk (`cwd / prefix / path`).
    """
    base = "HEAD" if has_commits(cwd) else EMPTY_TREE
    # `git diff`, not `diff-index`: it compares the content of stat-dirty files rather than listing them.
    data = run(cwd, "--literal-pathspecs", "diff", "--no-color", *_RAW, base, *only_folder(prefix)).stdout
    tracked = [Change(c.path, c.status, c.old_mode, c.new_mode, c.old_sha, ZERO)
               for c in parse_raw(data, prefix=prefix)[0]]
    others = run(cwd, "--literal-pathspecs", "ls-files", "-z", "--others", "--exclude-standard",
                 *only_folder(prefix)).stdout
    for raw in others.split(b"\0"):
        if raw and not raw.endswith(b"/"):
            path = decode_path(raw)
            mode = SYMLINK if os.path.islink(cwd / path) else "100644"
            tracked.append(Change(path[len(prefix):], "A", "000000", mode, ZERO, ZERO))
    return base, tracked


def tree_diffs(cwd: Path, pairs: Sequence[tuple[str, str]], prefix: str = "") -> list[list[Change]]:
    """The raw diff of each (old tree, new tree) pair, from one `git diff-tree --stdin`.

    Given two trees a line, diff-tree echoes the line `old new` before each diff, empty or not,
    so the answers come back one per pair, in order.
    """
    if not pairs:
        return []
    request = "".join(f"{old} {new}\n" for old, new in pairs).encode()
    data = run(cwd, "--literal-pathspecs", "diff-tree", "--stdin", "-r", *_RAW, *only_folder(prefix),
               input=request).stdout
    diffs: list[list[Change]] = []
    pos = 0
    for old, new in pairs:
        header = f"{old} {new}\n".encode()
        if not data.startswith(header, pos):
            raise MemstackError(f"git diff-tree: expected the diff of {old} {new} at byte {pos}")
        changes, pos = parse_raw(data, pos + len(header), stop_at_header=True, prefix=prefix)
        diffs.append(changes)
    return diffs


WORKTREE = "worktree"  # a target of `changes_since`: the work tree, untracked files included


def changes_since(cwd: Path, base: str, target: str | None, paths: Sequence[str], prefix: str = "") -> list[Change]:
    """The raw diff from commit `base` to `target` (None: the index; WORKTREE: the work tree, where a
    new side has `new_sha` ZERO and untracked files count as added; else a commit), limited to
    `paths` (store-relative)."""
    spec = ["--", *(prefix + p for p in paths)]
    if target is None:
        args = ["diff-index", "--cached", *_RAW, base, *spec]
    elif target == WORKTREE:
        args = ["diff", "--no-color", *_RAW, base, *spec]
    else:
        args = ["diff-tree", "-r", *_RAW, base, target, *spec]
    changes = parse_raw(run(cwd, "--literal-pathspecs", *args).stdout, prefix=prefix)[0]
    if target != WORKTREE:
        return changes
    changes = [Change(c.path, c.status, c.old_mode, c.new_mode, c.old_sha, ZERO) for c in changes]
    others = run(cwd, "--literal-pathspecs", "ls-files", "-z", "--others", "--exclude-standard", *spec).stdout
    changes += [Change(decode_path(raw)[len(prefix):], "A", "000000", "100644", ZERO, ZERO)
                for raw in others.split(b"\0") if raw and not raw.endswith(b"/")]
    return changes
