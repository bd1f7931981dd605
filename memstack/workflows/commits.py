"""A commit memstack makes itself of named memory paths (a promotion's, a migration's), checked in this process
first: what the user staged elsewhere stays staged and out of it.

With nothing but memstack's own hook to run, the paths are committed through a private index
(repo/pathcommit.py); with another hook (pre-commit configured with one, a commit hook of the user's), or a
merge, cherry-pick or revert under way, `git commit -- PATHS` makes it, through those hooks.
"""

import os
from pathlib import Path

from memstack.base import files
from memstack.base.errors import MemstackError
from memstack.base.patterns import lazy
from memstack.integrity import check
from memstack.repo import git, pathcommit

HOOK = "memstack-check"  # the pre-commit hook that runs `memstack check --staged` (store-template/)


def commit_paths(top: Path, folder: str, paths: list[str], message: str, refused: str) -> str | None:
    """Commit `paths` (relative to the top of the repository, work-tree content; a path gone from the work
    tree is removed) on HEAD and nothing else; None when they hold no change. `refused` begins the message of
    a commit the check or a hook refused (`{verb:...}` markup allowed): "the promotion commit was refused
    (…)"."""
    if not paths:
        return None
    proc = git.run(top, "rev-parse", "HEAD", "HEAD^{tree}", "--", ok=(0, 128))  # 128: no commit yet
    head = tuple(proc.stdout.decode().split()[:2]) if proc.returncode == 0 else ()  # (`--` is echoed)
    if len(head) == 2 and not _other_hooks(top, also=_UNDER_WAY):  # nothing for git commit to run: the paths alone
        return _commit_paths(top, folder, (head[0], head[1]), paths, message, refused)
    with git.index_kept(top):  # refused: the index as it was
        return _commit(top, folder, paths, message, refused)


def _commit_paths(top: Path, folder: str, head: tuple[str, str], paths: list[str], message: str,
                  refused: str) -> str | None:
    """The commit of `paths` on HEAD through a private index (repo/pathcommit.py): what the user staged
    elsewhere stays out of the commit and stays staged, their index takes the committed entries of
    `paths`, and the check runs on the private index in this process. Killed anywhere, what is left is
    what differs from HEAD (the files, or the index entries), which the next run commits."""
    env = git.commit_env(top)
    with pathcommit.PrivateIndex(top, head[0], env) as index:  # HEAD and its tree
        index.stage(paths)
        tree = index.tree()
        moved = tree != head[1]
        if moved:
            with index.current():
                check_here(top, folder, refused)
        files.crash_point()
        with git.index_kept(top):  # the user's index, as `git commit PATHS` leaves it (put back if refused)
            if not index.install():
                pathcommit.set_entries(top, index.entries(paths), env)
            if not moved:  # nothing to commit (a run killed after its commit is finished so)
                return None
            files.crash_point()  # the user's index holds the commit's entries; HEAD has not moved
            try:
                sha = pathcommit.commit(top, tree, head[0], message, env)
            except MemstackError as exc:
                raise _refused(top, exc, refused) from None
        files.crash_point()  # committed; the private index not removed yet
    return sha


def _refused(top: Path, exc: MemstackError, refused: str) -> MemstackError:
    if exc.message.startswith("git is locked"):
        return exc
    detail = exc.message.partition(f"failed in {top}: ")[2] or exc.message
    return MemstackError.marked(refused + ": {detail}", detail=detail)


def _commit(top: Path, folder: str, paths: list[str], message: str, refused: str) -> str | None:
    git.run(top, "add", "-A", "--", *paths)
    if not git.out(top, "diff", "--cached", "--name-only", "--", *paths).strip():
        return None
    env = git.commit_env(top)
    staged = set(git.out(top, "diff", "--cached", "--name-only", "-z", "--", folder or ".").split("\0"))
    verify: list[str] = []
    only = ["--", *paths]
    if not staged - {""} - set(paths):  # the index holds this commit's memory and nothing else of the store
        check_here(top, folder, refused)
        env["SKIP"] = ",".join(filter(None, [os.environ.get("SKIP"), HOOK]))
        verify = [] if _other_hooks(top) else ["--no-verify"]  # nothing else to run: not even pre-commit
        if not folder or not git.out(top, "diff", "--cached", "--name-only", "--", f":(exclude){folder}").strip():
            only = []  # the index is the commit: git need not stage the paths again in an index of its own
    files.crash_point()
    try:
        git.run(top, "commit", "-q", *verify, "-m", message, *only, env=env)  # through the other hooks
    except MemstackError as exc:
        raise _refused(top, exc, refused) from None
    return git.out(top, "rev-parse", "HEAD").strip()


def check_here(top: Path, folder: str, refused: str) -> None:
    """The commit's check, as its pre-commit hook runs it (`memstack check --staged`), in this process: its
    modules are loaded and its fact index open, so the commit does not pay for a second interpreter; the
    commit then tells pre-commit to skip that hook (SKIP), and any other hook runs."""
    found = check.staged(top, folder).violations
    if found:
        raise MemstackError.marked(refused + ":\n{found}", found="\n".join(map(str, found)))


_UNDER_WAY = ("MERGE_HEAD", "CHERRY_PICK_HEAD", "REVERT_HEAD")  # a merge, cherry-pick or revert git commit ends


def _other_hooks(top: Path, also: tuple[str, ...] = ()) -> bool:
    """Whether a commit in `top` would run a hook besides memstack's own (pre-commit configured with
    another hook, or a commit hook pre-commit did not install), or (`also`) any of those files is in the
    git dir: then the commit is made by `git commit`."""
    asked = [arg for name in ("hooks", *also) for arg in ("--git-path", name)]
    hooks, *others = (top / line for line in git.out(top, "rev-parse", *asked).splitlines())
    if any(path.exists() for path in others):
        return True
    for name in ("pre-commit", "prepare-commit-msg", "commit-msg", "post-commit"):
        script = hooks / name
        if script.exists() and b"# File generated by pre-commit:" not in script.read_bytes()[:200]:
            return True
    path = top / ".pre-commit-config.yaml"
    if not path.exists():
        return False
    ids = _HOOK_ID.findall(path.read_text(encoding="utf-8", errors="replace"))  # read as text: no YAML loader
    return not ids or not all(i.startswith("memstack-") for i in ids)


_HOOK_ID = lazy(r"""(?<![\w-])id:[ \t]*["']?([^\s"'#,}]+)""")  # block or flow style; a comment's
# mention counts too: a hook read wrongly only costs a pre-commit run, a hook missed would go unrun
