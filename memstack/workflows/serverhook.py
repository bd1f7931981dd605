"""memstack's server hook in a bare repository (a self-hosted remote): `memstack install` run there.

The installed `hooks/pre-receive` is the shipped one (hooks/pre-receive) with one line more: it runs the
memstack that installed it, as a clone's hooks run the one recorded in `memstack.python`. Without it the hook
runs `memstack` from PATH, and on a remote reached by a path (`git push ../remote.git`) that is the pusher's
PATH: an older memstack there checked a push by its own, older rules. `MEMSTACK`, when set, still names the
command to run; an interpreter that is gone leaves `memstack` on PATH, as before.

A pre-receive hook that does nothing but run memstack's check (the one any release shipped or installed,
whatever its comments) is memstack's: installing replaces it and says so. Any other is the administrator's:
refused and left as it is, since replacing it would drop what it does.
"""

import os
import re
import shlex
import sys
from pathlib import Path
from typing import Any

from memstack.base.errors import MemstackError
from memstack.base.resources import data_dir
from memstack.repo import git

RUN = "exec ${MEMSTACK:-memstack} check --pre-receive"  # the shipped hook's one command, in every release
_PINNED = ('p={python}; if [ -z "$MEMSTACK" ] && [ -x "$p" ]; then exec "$p" -m memstack check --pre-receive;'
           ' fi')
_PINNED_ANY = re.compile(re.escape(_PINNED).replace(re.escape("{python}"), ".+"))


def bare_repository(path: Path) -> Path | None:
    """The git folder of the bare repository at `path` (a self-hosted remote), or None."""
    if not path.is_dir():
        return None
    proc = git.run(path, "rev-parse", "--is-bare-repository", "--absolute-git-dir", env=git.no_git_env(),
                   ok=(0, 128))
    bare, _, git_dir = proc.stdout.decode().partition("\n")
    return Path(git_dir.strip()) if proc.returncode == 0 and bare == "true" else None


def hook_text() -> bytes:
    """The pre-receive hook `install` writes: the shipped one, running this memstack."""
    shipped = (data_dir("hooks") / "pre-receive").read_text(encoding="utf-8")
    pinned = ("# Installed by `memstack install`: the memstack that installed it checks the push, not one on the\n"
              "# pusher's PATH (`memstack install` here again after upgrading memstack).\n"
              + _PINNED.format(python=shlex.quote(sys.executable)) + "\n")
    return shipped.replace(RUN + "\n", pinned + RUN + "\n").encode()


def is_memstacks(data: bytes) -> bool:
    """Whether a pre-receive hook only runs memstack's check (comments and blank lines aside): shipped by a
    release, or installed by one."""
    commands = [line.strip() for line in data.decode("utf-8", "replace").splitlines()
                if line.strip() and not line.lstrip().startswith("#")]
    return bool(commands) and commands[-1] == RUN and all(_PINNED_ANY.fullmatch(c) for c in commands[:-1])


def install_remote(git_dir: Path) -> dict[str, Any]:
    """In a bare repository: memstack's server hook as `hooks/pre-receive`, executable (idempotent; one of an
    earlier memstack replaced; another pre-receive hook left alone and refused)."""
    hook = git_dir / "hooks" / "pre-receive"
    text = hook_text()
    had = hook.read_bytes() if hook.is_file() else None
    if had == text and os.access(hook, os.X_OK):
        return {"installed": [], "already": [str(hook)], "replaced": False, "warnings": _head_warning(git_dir)}
    if hook.exists() and not (had is not None and is_memstacks(had)):
        raise MemstackError(f"{hook} exists and is not memstack's: left as it is — run `memstack check"
                            " --pre-receive` from it (it reads the same stdin), or move it away and install again")
    hook.parent.mkdir(exist_ok=True)
    tmp = hook.with_name(f".pre-receive.memstack-{os.getpid()}")
    tmp.write_bytes(text)
    tmp.chmod(0o755)
    os.replace(tmp, hook)  # executable from its first instant: no push slips through a hook git would skip
    return {"installed": [str(hook)], "already": [], "replaced": had is not None and had != text,
            "warnings": _head_warning(git_dir)}


def _head_warning(git_dir: Path) -> list[str]:
    """A remote whose HEAD names a branch it lacks (made by `git init --bare` with git's default, `master`, while
    the store pushes `main`) hands clones nothing to check out: say so, and the fix."""
    env = git.no_git_env()
    head = git.run(git_dir, "symbolic-ref", "-q", "HEAD", env=env, ok=(0, 1)).stdout.decode().strip()
    if not head or git.rev_parse(git_dir, head) is not None or head == "refs/heads/main":
        return []
    return [f"HEAD names {head.removeprefix('refs/heads/')}, a branch this remote lacks: a clone would check out"
            f" nothing once the store's main is pushed — `git --git-dir {git_dir} symbolic-ref HEAD refs/heads/main`"]
