"""A commit of named paths only, made with git's plumbing through a private index file.

`git add` and `git commit` each compare every file of the work tree with the index (about 20,000 files in a
store of a million records); a commit whose paths are known needs none of that. A private index starts
from HEAD's tree (`read-tree`), takes the named paths from the work tree (`update-index --add --remove`,
which hashes only them), and gives the tree (`write-tree`); `commit-tree` makes the commit and
`update-ref HEAD NEW OLD` moves HEAD only if it is still where it was read, so a commit made meanwhile is
never lost. What the user has staged is neither read nor committed, and stays staged; the user's index
takes the committed entries of the named paths, so `git status` shows them unchanged after.
"""

import os
import tempfile
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path

from memstack.base.errors import MemstackError
from memstack.repo import git

_NAME = "memstack-index-"  # the private index in the git dir: `memstack-index-<pid>`


class PrivateIndex:
    """An index file of this process in the git dir of `top`, holding HEAD's tree (`head`) to begin with;
    removed on leaving the block (one a killed process left is removed by the next). When the user's index
    holds HEAD's tree (nothing staged), it is copied rather than read from the tree: its file stats and its
    tree cache come along, and `install` can make the private index the user's after the commit."""

    def __init__(self, top: Path, head: str, env: Mapping[str, str]) -> None:
        self.top, self.head, self.user_env = top, head, env
        where = git.out(top, "rev-parse", "--git-path", "index", "--git-path", f"{_NAME}{os.getpid()}", env=env)
        self.user, self.path = (top / line for line in where.splitlines())
        self.env = {**env, "GIT_INDEX_FILE": str(self.path)}
        self.copied: bytes | None = None  # the user's index as copied

    def __enter__(self) -> "PrivateIndex":
        _remove_leftovers(self.path.parent)
        staged = git.run(self.top, "diff-index", "--cached", "--quiet", self.head, "--", env=self.user_env,
                         ok=(0, 1)).returncode
        if staged == 0 and self.user.is_file():
            self.copied = self.user.read_bytes()
            self.path.write_bytes(self.copied)
        else:
            git.run(self.top, "read-tree", self.head, env=self.env)
        return self

    def __exit__(self, *exc: object) -> None:
        self.path.unlink(missing_ok=True)

    def install(self) -> bool:
        """Make this index the user's, under git's lock (`index.lock`), if the user's index is still the one
        copied: the committed paths with their stats, so `git status` is clean and quick after. False when
        it was not copied, has changed since or is locked (then `entries` brings it up to date)."""
        if self.copied is None:
            return False
        lock = self.user.with_name(self.user.name + ".lock")
        try:
            fd = os.open(lock, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
        except FileExistsError:
            return False
        try:
            with os.fdopen(fd, "wb") as handle:
                if self.user.read_bytes() != self.copied:
                    lock.unlink()
                    return False
                handle.write(self.path.read_bytes())
            os.replace(lock, self.user)
        except BaseException:
            lock.unlink(missing_ok=True)
            raise
        return True

    def stage(self, paths: Iterable[str]) -> None:
        """Each of `paths` (relative to the top) as it is in the work tree; a path gone from it, removed."""
        names = b"".join(os.fsencode(path) + b"\0" for path in paths)
        git.run(self.top, "update-index", "--add", "--remove", "-z", "--stdin", input=names, env=self.env)

    def tree(self) -> str:
        return git.out(self.top, "write-tree", env=self.env).strip()

    @contextmanager
    def current(self) -> Iterator[None]:
        """Inside the block, git run by this process reads this index (as a hook's git does under
        `git commit PATH`): what `memstack check --staged` reads."""
        was = os.environ.get("GIT_INDEX_FILE")
        os.environ["GIT_INDEX_FILE"] = str(self.path)
        try:
            yield
        finally:
            if was is None:
                del os.environ["GIT_INDEX_FILE"]
            else:
                os.environ["GIT_INDEX_FILE"] = was

    def entries(self, paths: Iterable[str]) -> bytes:
        """`update-index --index-info` input that gives another index this index's entries of `paths`
        (a path this index does not hold: removed there)."""
        wanted = set(paths)
        listed = git.run(self.top, "ls-files", "-s", "-z", env=self.env).stdout
        info = []
        for raw in listed.split(b"\0"):
            meta, tab, name = raw.partition(b"\t")
            path = git.decode_path(name)
            if tab and path in wanted:
                wanted.discard(path)
                mode, sha, _ = meta.decode().split(" ")
                info.append(f"{mode} {sha}\t".encode() + name + b"\0")
        info += [f"0 {git.ZERO}\t".encode() + os.fsencode(path) + b"\0" for path in sorted(wanted)]
        return b"".join(info)


def written_ahead(top: Path, paths: Iterable[str]) -> Callable[[], object]:
    """git writes the blobs of `paths` (relative to the top; files in the work tree) now, on another core,
    while this process goes on (a promotion rebuilds its views meanwhile): the commit that stages them then
    only hashes them, as `update-index` writes no object git has (a promotion of 200,000 records: 200 MB of
    fact files and ledger shards, 1.2 s of compressing). The call returned waits for it. Only a head start:
    a path it cannot read, or one changed after, is staged as it is then, and what it wrote for nothing git's
    gc removes."""
    names = b"".join(os.fsencode(path) + b"\n" for path in paths if "\n" not in path and (top / path).is_file())
    with tempfile.TemporaryFile() as listed:  # git reads the paths from a file: no thread writes them
        listed.write(names)
        listed.seek(0)
        return git.started(top, "hash-object", "-w", "--stdin-paths", stdin=listed, env=git.no_git_env())


def _remove_leftovers(folder: Path) -> None:
    for entry in folder.glob(f"{_NAME}*"):
        pid = entry.name[len(_NAME):]
        if pid.isdigit() and int(pid) != os.getpid():
            try:
                os.kill(int(pid), 0)
            except ProcessLookupError:
                entry.unlink(missing_ok=True)
            except PermissionError:  # alive, another user's
                pass


def set_entries(top: Path, info: bytes, env: Mapping[str, str]) -> None:
    """Give the user's index the entries `info` (from `PrivateIndex.entries`), nothing else of it changed."""
    if info:
        git.run(top, "update-index", "-z", "--index-info", input=info, env=env)


def commit(top: Path, tree: str, parent: str, message: str, env: Mapping[str, str]) -> str:
    """A commit of `tree` on `parent`, made HEAD only if HEAD is still `parent` (git's words otherwise).
    What `git commit` does beside that and `commit-tree` does not, done too: signed when `commit.gpgSign`
    asks for it, and git's automatic maintenance run after (unless `maintenance.auto` is false), which
    packs the loose objects promotions write once there are many."""
    listed = git.run(top, "config", "--type=bool", "--get-regexp", r"^(commit\.gpgsign|maintenance\.auto)$",
                     env=env, ok=(0, 1)).stdout.decode().splitlines()
    settings = dict(line.partition(" ")[::2] for line in listed)
    sign = ["-S"] if settings.get("commit.gpgsign") == "true" else []
    sha = git.run(top, "commit-tree", *sign, tree, "-p", parent, "-F", "-", input=message.encode(), env=env).stdout
    new = sha.decode().strip()
    subject = message.split("\n", 1)[0]
    git.run(top, "update-ref", "-m", f"commit: {subject}", "HEAD", new, parent, env=env)
    if settings.get("maintenance.auto") != "false":
        try:  # as after `git commit`: quick when there is nothing to do, in the background when there is
            git.run(top, "maintenance", "run", "--auto", "--quiet", env=env, ok=range(256))
        except MemstackError:  # the commit is made: maintenance that cannot run now runs after a later one
            pass
    return new
