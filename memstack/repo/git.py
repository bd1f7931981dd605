"""The one way memstack talks to git: a `git` subprocess helper and a batch blob reader.

Everything calls the git command line (no GitPython): it honours GIT_INDEX_FILE
inside a hook, where GitPython's index object reads `.git/index` and sees the old
content, and one long-running `git cat-file --batch` reads a commit's blobs ~30x
faster than one read per blob (docs/architecture.md).
"""

import os
import shutil
import subprocess
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import IO

from memstack.base.errors import MemstackError, bad
from memstack.base.patterns import lazy

EMPTY_TREE = "4b825dc642cb6eb9a060e54bf8d69288fbee4904"
ZERO = "0" * 40  # git's "no object": the old side of an added file, the new side of a deleted one
REGULAR = ("100644", "100755")
SYMLINK = "120000"
GITLINK = "160000"  # a submodule

# Every git process memstack starts: `git` with replace refs off. A `refs/replace/<X>` ref makes git read
# another object wherever X is named, and it is local (clones do not fetch one, a push does not send one
# unless named), so what honours it sees a history no other clone holds: a check passes the replacement
# while X is what lands, a merge or a promotion builds on content the commit does not hold. memstack reads
# and checks the commits themselves, everywhere (git passes the switch on to the processes it starts).
GIT = ("git", "--no-replace-objects")

# What git sets while it runs a hook; kept when memstack calls git on *another* repository.
_KEEP = {"GIT_EXEC_PATH", "GIT_SSH", "GIT_SSH_COMMAND", "GIT_SSL_CAINFO", "GIT_SSL_NO_VERIFY",
         "GIT_ASKPASS", "GIT_CONFIG_NOSYSTEM", "GIT_AUTHOR_NAME", "GIT_AUTHOR_EMAIL",
         "GIT_COMMITTER_NAME", "GIT_COMMITTER_EMAIL", "GIT_AUTHOR_DATE", "GIT_COMMITTER_DATE"}


def no_git_env(base: Mapping[str, str] | None = None) -> dict[str, str]:
    """The environment without the GIT_* variables a running hook points at its own repository."""
    env = dict(os.environ if base is None else base)
    return {k: v for k, v in env.items() if not k.startswith("GIT_") or k in _KEEP}


_LOCKED = lazy(r"Unable to create '([^']+\.lock)': File exists|cannot lock ref '[^']*': Unable to create"
                     r" '([^']+\.lock)'")


def locked_message(lock: str) -> str:
    return (f"git is locked: {lock} exists — another git process is working in this repository, or one was killed"
            f" (e.g. an interrupted commit); when no git process is running, remove {lock} and run the command again")


def run(cwd: Path, *args: str, input: bytes | None = None, env: Mapping[str, str] | None = None,
        ok: Sequence[int] = (0,)) -> subprocess.CompletedProcess[bytes]:
    """Run `git ARGS` in `cwd`; a return code outside `ok` raises MemstackError with git's words.

    git's own lock (`index.lock`, a ref's lock) held by another process: retried for about
    two seconds, then a MemstackError naming the lock file and what to do."""
    for attempt in range(20):
        try:
            proc = subprocess.run([*GIT, *args], cwd=cwd, input=input, capture_output=True,
                                  env=None if env is None else dict(env))
        except OSError as exc:  # cwd gone or not a folder, git missing
            raise MemstackError(f"git {' '.join(args[:2])} cannot run in {cwd}: {exc.strerror}") from None
        if proc.returncode in ok:
            return proc
        detail = proc.stderr.decode(errors="replace").strip() or proc.stdout.decode(errors="replace").strip()
        lock = _LOCKED.search(detail)
        if lock is None:
            raise MemstackError(f"git {' '.join(args[:2])} failed in {cwd}: {detail}")
        if attempt < 19:
            time.sleep(0.1)
    assert lock is not None  # the loop ends only on a lock error
    raise MemstackError(locked_message(lock.group(1) or lock.group(2)))


def person(cwd: Path) -> str:
    """Who is at the keyboard: git's `user.name` for the repository at `cwd`, else the login name."""
    import getpass  # deferred: only the verbs that record who decided

    name = run(cwd, "config", "user.name", env=no_git_env(), ok=(0, 1, 128)).stdout.strip()
    return name.decode() if name else getpass.getuser()


def refuse_locked(cwd: Path) -> None:
    """Exit 2 naming git's index lock if it is there now (before memstack writes anything it would commit)."""
    lock = Path(out(cwd, "rev-parse", "--git-path", "index.lock", env=no_git_env()).strip())
    lock = lock if lock.is_absolute() else cwd / lock
    if lock.exists():
        raise MemstackError(locked_message(str(lock)))


# A git operation begun and not concluded: its file in the git dir, what it is, how a person concludes it.
UNDER_WAY = {"MERGE_HEAD": ("a merge", "`git commit` (once the resolved files are added) or `git merge --abort`"),
             "CHERRY_PICK_HEAD": ("a cherry-pick", "`git cherry-pick --continue` or `--abort`"),
             "REVERT_HEAD": ("a revert", "`git revert --continue` or `--abort`"),
             "rebase-merge": ("a rebase", "`git rebase --continue` or `--abort`"),
             "rebase-apply": ("a rebase", "`git rebase --continue` or `--abort`"),
             "BISECT_LOG": ("a bisect", "`git bisect reset`")}


def under_way(cwd: Path) -> tuple[str, str, str] | None:
    """The first git operation under way in `cwd` (UNDER_WAY: its file's name, what it is, how to conclude it)."""
    listed = out(cwd, "rev-parse", *(arg for name in UNDER_WAY for arg in ("--git-path", name)), env=no_git_env())
    for name, line in zip(UNDER_WAY, listed.splitlines(), strict=True):
        if (Path(line) if Path(line).is_absolute() else cwd / line).exists():
            return name, *UNDER_WAY[name]
    return None


def short(rev: str) -> str:
    """A commit id shortened as memstack prints them (12 digits); anything else (a ref's name) as it is."""
    return rev[:12] if len(rev) == 40 and all(c in "0123456789abcdef" for c in rev) else rev


def started(cwd: Path, *args: str, stdin: IO[bytes], env: Mapping[str, str] | None = None) -> Callable[[], object]:
    """`git ARGS` started in `cwd`, reading `stdin` (a file), its output let go: git works on another core meanwhile.
    The call returned waits for it (a no-op if it could not start: for work that only saves time later)."""
    try:
        proc = subprocess.Popen([*GIT, *args], cwd=cwd, stdin=stdin, stdout=subprocess.DEVNULL,
                                stderr=subprocess.DEVNULL, env=None if env is None else dict(env))
    except (OSError, MemoryError):
        return lambda: None
    return proc.wait


def out(cwd: Path, *args: str, env: Mapping[str, str] | None = None) -> str:
    return run(cwd, *args, env=env).stdout.decode()


def later(cwd: Path, *args: str, env: Mapping[str, str] | None = None) -> Callable[[], str]:
    """`out(cwd, *args)` begun now on a thread of its own, so git works on another core while this process
    goes on; the call returned waits for it and gives its output, or raises what `out` raised."""
    told: list[str] = []
    failed: list[BaseException] = []

    def work() -> None:
        try:
            told.append(out(cwd, *args, env=env))
        except BaseException as exc:  # handed to the caller, who waits for it
            failed.append(exc)

    thread = threading.Thread(target=work, name=f"git {args[0] if args else ''}", daemon=True)
    thread.start()

    def result() -> str:
        thread.join()
        if failed:
            raise failed[0]
        return told[0]

    return result


def identity_args(cwd: Path) -> list[str]:
    """`-c user.name/email` for a commit memstack makes itself, when git has no identity to use."""
    if os.environ.get("GIT_AUTHOR_EMAIL") or os.environ.get("EMAIL"):
        return []
    if run(cwd, "config", "user.email", env=no_git_env(), ok=(0, 1)).stdout.strip():
        return []
    return ["-c", "user.name=memstack", "-c", "user.email=memstack@localhost"]


def commit_env(cwd: Path) -> dict[str, str]:
    """The environment for a commit memstack makes itself (promote, sync): git's variables stripped,
    and memstack's own identity when git has none to use."""
    env = no_git_env()
    if identity_args(cwd):
        env.update(GIT_AUTHOR_NAME="memstack", GIT_AUTHOR_EMAIL="memstack@localhost",
                   GIT_COMMITTER_NAME="memstack", GIT_COMMITTER_EMAIL="memstack@localhost")
    return env


@contextmanager
def index_kept(cwd: Path) -> Iterator[None]:
    """The index as it is now, put back if the block raises (a commit that was refused leaves what the user
    had staged, and nothing else, staged)."""
    index = cwd / out(cwd, "rev-parse", "--git-path", "index").strip()
    saved = index.with_name(f"{index.name}.memstack-{os.getpid()}")
    had = index.exists()
    if had:
        shutil.copyfile(index, saved)
    try:
        yield
    except BaseException:
        if had:
            os.replace(saved, index)
        else:
            index.unlink(missing_ok=True)
        raise
    finally:
        saved.unlink(missing_ok=True)


def is_worktree(path: Path) -> bool:
    """Whether `path` is in a git work tree (not in a git dir, not in a bare repository)."""
    return worktree_top(path) is not None


_TOPS: dict[str, str] = {}  # worktree_top's answers, by the folder asked (taken again while `_holds`)


def worktree_top(path: Path) -> Path | None:
    """The top of the git work tree holding `path`, or None outside one (or in a bare repository). Asked of
    git once a process for a folder (a promotion asks for its store's several times): the answer is taken
    again while the top still holds a `.git` and no folder between it and `path` has one."""
    asked = os.path.abspath(path)
    known = _TOPS.get(asked)
    if known is not None and _holds(asked, known):
        return Path(known)
    proc = run(path, "rev-parse", "--show-toplevel", env=no_git_env(), ok=(0, 128))
    top = proc.stdout.decode().strip()
    if proc.returncode != 0 or not top:
        _TOPS.pop(asked, None)
        return None
    _TOPS[asked] = top
    return Path(top)


def _holds(asked: str, top: str) -> bool:
    """Whether `top` is still the work tree of the folder `asked` (a few stats, no git)."""
    if not os.path.exists(os.path.join(top, ".git")):
        return False
    folder = asked
    while folder != top:
        if os.path.lexists(os.path.join(folder, ".git")):
            return False  # a repository of its own now, or a git dir
        parent = os.path.dirname(folder)
        if parent == folder:
            return False  # not below `top` as written (a symbolic link on the way): git says
        folder = parent
    return True


def toplevel(path: Path) -> Path:
    return Path(out(path, "rev-parse", "--show-toplevel", env=no_git_env()).strip())


def has_commits(path: Path) -> bool:
    return run(path, "rev-parse", "--verify", "-q", "HEAD", ok=(0, 1, 128)).returncode == 0


def is_zero(sha: str) -> bool:
    return not sha.strip("0")


def rev_parse(cwd: Path, rev: str) -> str | None:
    """The full object name of `rev`, or None if git has no such revision."""
    proc = run(cwd, "rev-parse", "--verify", "-q", "--end-of-options", rev, ok=(0, 1, 128))
    return proc.stdout.decode().strip() if proc.returncode == 0 else None


def is_ancestor(cwd: Path, ancestor: str, descendant: str) -> bool:
    return run(cwd, "merge-base", "--is-ancestor", ancestor, descendant, ok=(0, 1)).returncode == 0


def range_ends(cwd: Path, spec: str, env: Mapping[str, str] | None = None) -> tuple[str | None, str, str]:
    """`A..B` as a pull request reads it: the full ids of the merge base of A and B (None when they share no
    history), of A and of B. A spec that is not `A..B` of two commits of this repository: exit 2, naming it."""
    ends = spec.split("..")
    if len(ends) != 2 or not all(ends) or spec.startswith("-") or any(end.startswith(".") for end in ends):
        raise bad("range", repr(spec), "expected A..B")
    found = []
    for end in ends:
        proc = run(cwd, "rev-parse", "--verify", "-q", "--end-of-options", f"{end}^{{commit}}", env=env,
                   ok=(0, 1, 128))
        if proc.returncode != 0:
            raise bad("range", repr(spec), "no commit {end!r} in {repo}", end=end, repo=cwd)
        found.append(proc.stdout.decode().strip())
    base = run(cwd, "merge-base", *found, env=env, ok=(0, 1)).stdout.decode().strip()
    return base or None, found[0], found[1]


def files_holding_at(cwd: Path, rev: str, folders: Sequence[str], needles: Sequence[bytes],
                     env: Mapping[str, str] | None = None) -> list[str]:
    """The files of commit `rev` under `folders` whose bytes hold one of `needles`, sorted (`git grep` of a
    tree: only the blobs, no checkout)."""
    patterns = [arg for needle in needles for arg in ("-e", os.fsdecode(needle))]
    found = run(cwd, "grep", "--full-name", "--no-color", "-l", "-z", "-a", "-F", *patterns, rev, "--",
                *folders, env=env, ok=(0, 1)).stdout
    cut = len(rev) + 1  # each name comes as `REV:path`
    return sorted(decode_path(raw)[cut:] for raw in found.split(b"\0") if raw)


def decode_path(raw: bytes) -> str:
    # A name that is not UTF-8 survives as surrogates, so the I7 check can name it.
    return raw.decode("utf-8", "surrogateescape")


def only_folder(prefix: str) -> tuple[str, ...]:
    """The pathspec that limits git to a store folder (nothing for a store at the repository's root)."""
    return ("--", prefix) if prefix else ()


def index_blobs(cwd: Path, prefix: str = "") -> dict[str, str]:
    """The blob id of every file the index holds in the store folder `prefix` (store-relative paths),
    as `:path` names it: stage 0 only (a conflicted path is no file there), submodules left out. One
    `git ls-files -s`."""
    data = run(cwd, "--literal-pathspecs", "ls-files", "-s", "-z", *only_folder(prefix)).stdout
    found = {}
    for raw in data.split(b"\0"):
        meta, tab, path = raw.partition(b"\t")
        if not tab:
            continue
        mode, sha, stage = meta.decode().split(" ")
        name = decode_path(path)
        if stage == "0" and mode != GITLINK and name.startswith(prefix):
            found[name[len(prefix):]] = sha
    return found


def files_holding(cwd: Path, folder: str, needles: Sequence[bytes]) -> set[str] | None:
    """The files under `folder` (relative to `cwd`, tracked or not, ignored or not) whose bytes hold one of
    `needles` (no NUL, no newline), by `git grep --no-index`: a fixed-string search in C that reads 360 MB in
    ~0.1 s of CPU, ten times less than Python's bytes.find. None when git cannot say (then look everywhere)."""
    patterns = [arg for needle in needles for arg in ("-e", os.fsdecode(needle))]
    try:
        found = run(cwd, "grep", "--no-index", "--no-full-name", "--no-color", "-l", "-z", "-a", "-F", *patterns,
                    "--", folder, env=no_git_env(), ok=(0, 1)).stdout
    except MemstackError:
        return None
    paths = {decode_path(raw) for raw in found.split(b"\0") if raw}
    return paths if all(path.startswith(f"{folder}/") for path in paths) else None  # not as asked: look everywhere


def store_configs(cwd: Path, rev: str | None = None) -> list[str]:
    """The paths of the `memstack.yaml` files git tracks (in the index, or in commit `rev`):
    where the repository's stores are. One `ls-files`/`ls-tree`, no work-tree walk."""
    if rev is None:
        data = run(cwd, "ls-files", "-z", "--", "memstack.yaml", ":(glob)**/memstack.yaml").stdout
    else:
        data = run(cwd, "ls-tree", "-r", "-z", "--name-only", rev).stdout
    names = (decode_path(raw) for raw in data.split(b"\0") if raw)
    return sorted(name for name in names if name == "memstack.yaml" or name.endswith("/memstack.yaml"))


def store_configs_touched(cwd: Path, revs: Sequence[str]) -> list[str]:
    """The paths of the `memstack.yaml` files the commits `git log REVS` add, change or delete (merges
    against each parent): the stores a range touches, also one its last commit no longer holds. One
    path-limited `git log`; [] when git does not know REVS (the check that reads them says why)."""
    proc = run(cwd, "log", "-m", "--no-renames", "--name-only", "-z", "--format=", *revs, "--", "memstack.yaml",
               ":(glob)**/memstack.yaml", ok=(0, 128))
    if proc.returncode != 0:
        return []
    names = {decode_path(raw.strip(b"\n")) for raw in proc.stdout.split(b"\0") if raw.strip(b"\n")}
    return sorted(name for name in names if name == "memstack.yaml" or name.endswith("/memstack.yaml"))


def tree_names(data: bytes) -> list[str]:
    """The entry names of a raw tree object (`mode name` NUL, then a binary SHA, repeated)."""
    names = []
    pos = 0
    while pos < len(data):
        nul = data.index(b"\0", pos)
        names.append(decode_path(data[data.index(b" ", pos) + 1:nul]))
        pos = nul + 1 + 20
    return names
