"""Which memstack a clone's hooks and drivers run: the Python `memstack install` recorded as `memstack.python` in
the clone's git config (never committed).

A clone installed by an older release keeps running it after the upgrade (a new virtual environment is a new
interpreter): its pre-push calls the newer format's files stray, its merge driver cannot merge them. Every
command that finds a store says so in one line (`remark`), so the user runs `memstack install`. That costs no
process where the hooks are this memstack's or were never installed: the clone's config file is read, and git
is asked only when it names another Python.
"""

import glob
import os
import sys
from pathlib import Path

from memstack import __version__
from memstack.base.output import note
from memstack.repo import git

_said: set[str] = set()  # the clones already remarked on by this process (an MCP server opens its store often)


def hush() -> None:
    """No remark from this process: `memstack install` and `migrate` install this memstack's hooks themselves."""
    _said.add("")


def runs_another(root: Path) -> str | None:
    """The Python this clone's hooks and drivers run when it is not this memstack's environment (another
    virtual environment, or one that is gone); None when it is this one's, or none is recorded (hooks never
    installed: left so)."""
    config = _config_file(root)
    if config is None:
        return None
    try:
        text = config.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None
    if "[memstack]" not in text or f"\tpython = {sys.executable}\n" in text:
        return None  # the common cases, decided without git: never installed, or installed by this one
    found = git.run(root, "config", "--get", "memstack.python", env=git.no_git_env(),
                    ok=(0, 1, 128)).stdout.decode().rstrip("\n")
    return found if found and not _same_environment(found) else None


def remark(root: Path) -> None:
    """One line on stderr, once a process, when the clone's hooks and drivers run an older memstack (or a
    Python that is gone): `memstack install` makes them this one's."""
    if "" in _said or str(root) in _said:
        return
    _said.add(str(root))
    other = runs_another(root)
    if other is None:
        return
    version = _version_of(other)
    if version is not None and not _older(version):
        return  # the same release or a newer one, in another environment: its hooks read this store too
    what = (f"{other}, which is gone" if not os.path.exists(other)
            else f"memstack {version} ({other})" if version else f"another memstack ({other})")
    note(f"memstack: this clone's hooks and merge driver run {what}, not this memstack {__version__}: run"
         " `memstack install` in it")


def _config_file(root: Path) -> Path | None:
    """The git config file of the clone holding `root` (a worktree's is its repository's), found with a few
    stats; None outside a work tree."""
    for folder in (root, *root.parents):
        dot = folder / ".git"
        if dot.is_dir():
            return dot / "config"
        if dot.is_file():
            try:
                named = dot.read_text(encoding="utf-8").strip().removeprefix("gitdir:").strip()
                git_dir = (folder / named).resolve()
                common = git_dir / "commondir"
                if common.is_file():
                    git_dir = (git_dir / common.read_text(encoding="utf-8").strip()).resolve()
            except OSError:
                return None
            return git_dir / "config"
    return None


def _same_environment(python: str) -> bool:
    """Whether `python` is of this memstack's environment (its folder is this interpreter's: `python` and
    `python3` of one virtual environment are one)."""
    try:
        return os.path.samefile(os.path.dirname(python), os.path.dirname(sys.executable))
    except OSError:
        return False


def _version_of(python: str) -> str | None:
    """The memstack release installed in the virtual environment of `python` (its dist-info folder), when
    that says."""
    found = glob.glob(os.path.join(os.path.dirname(os.path.dirname(python)), "lib", "python*", "site-packages",
                                   "memstack-*.dist-info"))
    return found[0].rsplit("memstack-", 1)[1].removesuffix(".dist-info") if len(found) == 1 else None


def _older(version: str) -> bool:
    def key(text: str) -> tuple[int, ...]:
        return tuple(int(part) if part.isdigit() else -1 for part in text.split("."))

    return key(version) < key(__version__)
