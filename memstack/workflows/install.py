"""Making a store (`memstack init`) and readying a clone of one (`memstack install`).

A store is either a repository of its own (`memstack init mem`: git init, the
template's files, a first commit of everything) or a folder of an existing code
repository (`memstack init .memory` inside a work tree: no nested repository; the
repository's `.pre-commit-config.yaml` gains memstack's hooks; the first commit
holds only the store's files and that configuration, whatever else is staged).

`init` is all-or-nothing: a failure (a refused commit, a hook that cannot run)
removes what it made and restores what it edited. A rerun on a store left half-made
by an older memstack or a killed process (files there, no commit) finishes it.
"""

import os
import shlex
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

from memstack import __version__
from memstack.base import config, files
from memstack.base.errors import MemstackError, bad
from memstack.base.names import check_name
from memstack.base.resources import data_dir
from memstack.boot import context as boot
from memstack.repo import git, precommit, store
from memstack.repo.store import is_store
from memstack.workflows.agents import identity_text

WORKFLOW = ".github/workflows/memstack.yml"
REPO_LEVEL = (precommit.NAME, WORKFLOW)  # template files that live at a repository's top, not in a store folder


def _drivers(python: str) -> dict[str, str]:
    """Git config of the clone (never committed): the store's .gitattributes names the drivers.
    They run the Python that installed them, so a merge works without the venv on PATH."""
    run = f"{shlex.quote(python)} -m memstack"
    return {
        "memstack.python": python,  # what the committed hook launcher runs (.pre-commit-config.yaml)
        "merge.memstack.name": "memstack: union of append-only logs and fact closings",
        "merge.memstack.driver": f"{run} merge-driver %O %A %B %P",
        "diff.memstack.textconv": f"{run} textconv",
    }


def install(root: Path) -> list[str]:
    """Install the hooks and drivers in the clone holding `root` (idempotent); returns what was installed."""
    return [what for what, _ in _install(root)]


def _configured(top: Path, key: str, env: dict[str, str]) -> str:
    """A key of the clone's git config ("" when it is not set)."""
    return git.run(top, "config", "--get", key, env=env, ok=(0, 1)).stdout.decode().rstrip("\n")


def install_report(root: Path) -> dict[str, list[str]]:
    """`install`, saying what was `installed` (new or changed) and what was `already` in place."""
    done = _install(root)
    return {"installed": [what for what, had in done if not had], "already": [what for what, had in done if had]}


def _install(root: Path) -> list[tuple[str, bool]]:
    """(what, whether it was already in place) for each hook and git config entry, in order."""
    top = git.worktree_top(root)
    if top is None:
        raise MemstackError.marked("{root} is not a git work tree — `{verb:memstack init {root}}` makes a store",
                                   root=root)
    env = git.no_git_env()
    hooks = Path(git.out(top, "rev-parse", "--absolute-git-dir", env=env).strip()) / "hooks"
    before = {p.name: p.read_bytes() for p in hooks.iterdir() if p.is_file()} if hooks.is_dir() else {}
    # pre-commit writes sys.executable into the hook script: the hook runs without the venv on PATH.
    proc = subprocess.run([sys.executable, "-m", "pre_commit", "install"], cwd=top, env=env,
                          capture_output=True, text=True)
    if proc.returncode != 0:
        raise MemstackError(f"pre-commit install failed in {top}: {(proc.stderr or proc.stdout).strip()}")
    done = [(hook, before.get(Path(hook).name) == (hooks / Path(hook).name).read_bytes())
            for hook in (line.split(" at ", 1)[-1] for line in proc.stdout.splitlines() if "installed at" in line)]
    for key, value in _drivers(sys.executable).items():
        had = _configured(top, key, env)
        git.run(top, "config", key, value, env=env)
        done.append((f"git config {key}", had == value))
    done.append(_excluded(top))
    return done


def _excluded(top: Path) -> tuple[str, bool]:
    """The stores' clone-local folders (every one, wherever it is) in the clone's `info/exclude`: a store's
    .gitignore is not on a branch made before the store, where its caches would be committed (and removed by the
    next checkout)."""
    line = files.LOCAL + "/"
    path = Path(git.out(top, "rev-parse", "--git-path", "info/exclude", env=git.no_git_env()).strip())
    path = path if path.is_absolute() else top / path
    have = path.read_text(encoding="utf-8") if path.is_file() else ""
    if line not in have.splitlines():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(have + ("" if not have or have.endswith("\n") else "\n") + line + "\n", encoding="utf-8")
    return f"{path.name} {line}", line in have.splitlines()


def _refuse_inside(root: Path) -> None:
    """A store is never made in a git folder (`.git/…`: git's own, never committed) nor inside another store
    (its files would be that store's unknown files, and every command run there would find two)."""
    for parent in root.parents:
        if parent.name == ".git" or is_store(parent):
            raise bad("PATH", repr(str(root)), "is inside " + ("a git folder ({at}): make the store in the work tree"
                      if parent.name == ".git" else "the store at {at}: make it beside that store"), at=parent)


def _template_files() -> list[Path]:
    """The template's files, without the clone-local folder: a memstack command run in memstack's own checkout
    takes the template for the repository's one store and leaves its caches there (git-ignored, never shipped
    by git, but on disk), which a new store must not start with."""
    template = data_dir("store-template")
    return sorted(rel for rel in (p.relative_to(template) for p in template.rglob("*") if p.is_file())
                  if rel.parts[0] != files.LOCAL)


class _Undo:
    """What init made or changed, to put back if it fails."""

    def __init__(self) -> None:
        self.made: list[Path] = []  # files and folders init created, in order
        self.saved: dict[Path, bytes] = {}  # files init changed: their bytes before

    def mkdir(self, folder: Path) -> None:
        missing = [p for p in (folder, *folder.parents) if not p.exists()]
        folder.mkdir(parents=True, exist_ok=True)
        self.made += reversed(missing)

    def write(self, path: Path, data: bytes) -> None:
        self.mkdir(path.parent)
        if path.exists():
            self.saved.setdefault(path, path.read_bytes())
        else:
            self.made.append(path)
        path.write_bytes(data)

    def keep(self, path: Path) -> None:
        """Remember a file something else (git, pre-commit) may change."""
        if path.is_file():
            self.saved.setdefault(path, path.read_bytes())
        elif not path.exists():
            self.made.append(path)

    def rollback(self) -> None:
        for path, data in self.saved.items():
            path.write_bytes(data)
        for path in reversed(self.made):
            if path.is_dir() and not path.is_symlink():
                shutil.rmtree(path, ignore_errors=True)
            else:
                path.unlink(missing_ok=True)


def _committed(top: Path, folder: str) -> bool:
    return git.has_commits(top) and git.rev_parse(top, f"HEAD:{folder}{config.CONFIG_NAME}") is not None


def _busy(root: Path) -> list[str]:
    """What is already in a folder init would fill (git's own folder aside)."""
    return sorted(p.name for p in root.iterdir() if p.name != ".git") if root.is_dir() else []


def _start(root: Path) -> Path:
    """The nearest existing folder at or above `root` (where git is asked about the work tree)."""
    return next(p for p in (root, *root.parents) if p.is_dir())


def init(root: Path, agents: list[str], commit_identity: dict[str, str] | None = None,
         force: bool = False) -> dict[str, Any]:
    """Make a new store at `root` (its own repository, or a folder of the work tree around it);
    on a finished store change nothing and say so; on a half-made one, finish it."""
    for agent in agents:
        check_name(agent, "agent")
    root = root.expanduser().resolve()
    if root.exists() and not root.is_dir():
        raise bad("PATH", repr(str(root)), "exists and is not a folder")
    top = git.worktree_top(_start(root))
    if top is not None and top.resolve() == root:
        top = None  # the top of a repository: the store is that repository
    folder = "" if top is None else root.relative_to(top.resolve()).as_posix() + "/"
    repo = root if top is None else top.resolve()
    if is_store(root):
        if git.is_worktree(root) and _committed(repo, folder):
            listed = config.load(root).agents
            new = [a for a in agents if a not in listed]
            return {"store": str(root), "created": False, "agents_not_added": new,
                    "message": f"{root} is already a memstack store; nothing changed"
                               " (`memstack install` reinstalls the hooks in a clone)" + _not_added(new)}
        return _finish(root, repo, folder, resumed=True)
    _refuse_inside(root)
    busy = _busy(root)
    if busy and not force:
        what = "a folder of this repository" if folder else "a folder that is not a git work tree"
        raise MemstackError.marked("{root} is not empty ({busy}): init makes a store in an empty folder or a new path"
                                   " ({what}); {arg:--force} makes it here anyway", root=root, what=what,
                                   busy=", ".join(busy[:5]) + (", ..." if len(busy) > 5 else ""))
    template = data_dir("store-template")
    made = [rel for rel in _template_files() if not (folder and rel.as_posix() in REPO_LEVEL)]
    clashes = [str(rel) for rel in made if (root / rel).exists()]
    if clashes:
        raise MemstackError(f"{root}: would overwrite {', '.join(clashes)} — init an empty folder or a new path")
    undo = _Undo()
    try:
        undo.mkdir(root)
        for rel in made:
            undo.write(root / rel, (template / rel).read_bytes())
        cfg = config.load(root)
        listed = cfg.agents
        for agent in agents:
            if agent not in listed:
                listed.append(agent)
                undo.write(root / "identity" / f"{agent}.md", identity_text(agent).encode())
        if agents:
            cfg.document["agents"] = listed
            if not cfg.get("memory", "default_agent"):
                cfg.document["memory"]["default_agent"] = agents[0]
        cfg.document.setdefault("memstack", {})["version"] = __version__
        cfg.save()

        undo.made += [root / rel for rel in boot.rebuild(root)]
        return _finish(root, repo, folder, resumed=False, undo=undo, agents=listed)
    except BaseException:
        undo.rollback()
        raise


def _not_added(agents: list[str]) -> str:
    """A rerun of init adds no agent: say so, and how (any agent may write with --agent already)."""
    if not agents:
        return ""
    names = ", ".join(agents)
    return (f"\nnot added: agent{'s' * (len(agents) > 1)} {names} (init never changes a finished store;"
            f" `memstack agent add NAME` lists an agent, then commit)")


def _finish(root: Path, repo: Path, folder: str, resumed: bool, undo: _Undo | None = None,
            agents: list[str] | None = None) -> dict[str, Any]:
    """Git, hooks, drivers and the first commit; on failure, back to how things were."""
    undo = undo or _Undo()
    env = git.no_git_env()
    own = not folder
    try:
        if own and not (git.is_worktree(root) and git.toplevel(root).resolve() == root):
            undo.keep(root / ".git")
            git.run(root, "init", "-q", "-b", "main", env=env)
        paths = ["."] if own else [folder, precommit.NAME]
        git_dir = Path(git.out(repo, "rev-parse", "--absolute-git-dir", env=env).strip())
        for name in ("pre-commit", "pre-push"):
            undo.keep(git_dir / "hooks" / name)
            undo.keep(git_dir / "hooks" / f"{name}.legacy")
        undo.keep(git_dir / "config")
        if not own:
            text = precommit.merged(_read(repo / precommit.NAME))
            if text is not None:
                undo.write(repo / precommit.NAME, text.encode())
            workflow = repo / WORKFLOW
            if not workflow.exists():
                undo.write(workflow, _workflow_for(folder))
                paths.append(WORKFLOW)
        hooks = install(repo)
        git.run(repo, "add", "-A", "--", *paths, env=env)
        message = "memstack init" if own else f"memstack init {folder.rstrip('/')}"
        # `--only` the store's paths: whatever else the user had staged stays staged, uncommitted.
        borrowed = git.identity_args(repo)  # git knows no one: the first commit is memstack's own
        proc = git.run(repo, *borrowed, "commit", "-q", "-m", message,
                       *(() if own else ("--only", "--", *paths)), env=env, ok=(0, 1))
        if proc.returncode != 0:
            out = (proc.stdout + proc.stderr).decode(errors="replace").strip()
            raise MemstackError(f"the first commit of the store was refused; nothing was kept:\n{out}")
    except BaseException:
        if not own:
            git.run(repo, "reset", "-q", "--", *paths, env=env, ok=range(0, 256))
        undo.rollback()
        raise
    state = "finished" if resumed else "new"
    message = f"{state} memstack store at {root}"
    if not own:
        still = git.out(repo, "diff", "--cached", "--name-only", env=env).split()
        message += (f", a folder of the repository {repo}; committed only {', '.join(paths)}"
                    + (f" ({len(still)} other staged file{'s' * (len(still) != 1)} left staged, not committed)"
                       if still else ""))
        others = [other.rstrip("/") or "." for other in store.folders(repo) if other != folder]
        if others:  # a command run outside the new store's folder cannot tell which one is meant
            message += (f"; the repository holds {'another store' if len(others) == 1 else 'other stores'} too"
                        f" ({', '.join(others)}): outside {folder.rstrip('/')}, pass --store"
                        f" {shlex.quote(os.path.relpath(root))} or set MEMSTACK_HOME")  # as pasted where it ran
        if WORKFLOW not in paths and (repo / WORKFLOW).is_file():  # its MEMSTACK_STORE names one store
            message += (f"; {WORKFLOW} was there already and checks the store it names (MEMSTACK_STORE), not"
                        f" {folder.rstrip('/')}: add a job for it")
    return {"store": str(root), "created": True, "resumed": resumed,
            "agents": agents if agents is not None else config.load(root).agents,
            "repository": str(repo), "folder": folder.rstrip("/") or ".", "committed": paths, "hooks": hooks,
            "git_identity_missing": bool(borrowed), "message": message}


def _read(path: Path) -> str | None:
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None


def _workflow_for(folder: str) -> bytes:
    """The template's CI workflow, pointed at the store's folder in the repository."""
    text = (data_dir("store-template") / WORKFLOW).read_text(encoding="utf-8")
    return text.replace("MEMSTACK_STORE: .\n", f"MEMSTACK_STORE: {folder.rstrip('/')}\n").encode()
