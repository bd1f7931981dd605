"""Making a store (`memstack init`) and readying a clone of one (`memstack install`)."""

import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

from memstack import config, git
from memstack.errors import MemstackError
from memstack.names import check_name
from memstack.resources import data_dir
from memstack.store import is_store


# Git config of the clone (never committed); the store's .gitattributes names them.
DRIVERS = {
    "merge.memstack.name": "memstack: union of append-only logs and fact closings",
    "merge.memstack.driver": "memstack merge-driver %O %A %B %P",
    "diff.memstack.textconv": "memstack textconv",
}


def install(root: Path) -> list[str]:
    """Install the hooks in the clone at `root` (idempotent); returns what was installed."""
    if not git.is_worktree(root):
        raise MemstackError(f"{root} is not a git work tree — `memstack init {root}` makes a store")
    env = git.no_git_env()
    proc = subprocess.run([sys.executable, "-m", "pre_commit", "install"], cwd=root, env=env,
                          capture_output=True, text=True)
    if proc.returncode != 0:
        raise MemstackError(f"pre-commit install failed in {root}: {(proc.stderr or proc.stdout).strip()}")
    installed = [line.split(" at ", 1)[-1] for line in proc.stdout.splitlines() if "installed at" in line]
    for key, value in DRIVERS.items():
        git.run(root, "config", key, value, env=env)
    return installed + [f"git config {key}" for key in DRIVERS]


def _template_files() -> list[Path]:
    template = data_dir("store-template")
    return sorted(p.relative_to(template) for p in template.rglob("*") if p.is_file())


def _identity_text(agent: str) -> str:
    return f"# {agent}\n\nWho this agent is, what it is for, and how it works. Written by a human.\n"


def init(root: Path, agents: list[str], commit_identity: dict[str, str] | None = None) -> dict[str, Any]:
    """Make a new store at `root`; on an existing store change nothing and say so."""
    for agent in agents:
        check_name(agent, "agent")
    root = root.expanduser().resolve()
    if is_store(root):
        return {"store": str(root), "created": False,
                "message": f"{root} is already a memstack store; nothing changed"
                           " (`memstack install` reinstalls the hooks in a clone)"}
    if root.exists() and not root.is_dir():
        raise MemstackError(f"bad PATH {str(root)!r}: exists and is not a folder")
    template = data_dir("store-template")
    clashes = [str(rel) for rel in _template_files() if (root / rel).exists()]
    if clashes:
        raise MemstackError(f"{root}: would overwrite {', '.join(clashes)} — init an empty folder or a new path")
    root.mkdir(parents=True, exist_ok=True)
    for rel in _template_files():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(template / rel, root / rel)
    cfg = config.load(root)
    listed = cfg.agents
    for agent in agents:
        if agent not in listed:
            listed.append(agent)
            identity = root / "identity" / f"{agent}.md"
            identity.parent.mkdir(parents=True, exist_ok=True)
            identity.write_text(_identity_text(agent), encoding="utf-8")
    if agents:
        cfg.document["agents"] = listed
        if not cfg.get("memory", "default_agent"):
            cfg.document["memory"]["default_agent"] = agents[0]
        cfg.save()
    from memstack import boot

    boot.rebuild(root)
    env = git.no_git_env()
    if not (git.is_worktree(root) and git.toplevel(root).resolve() == root):
        git.run(root, "init", "-q", "-b", "main", env=env)
    hooks = install(root)
    git.run(root, "add", "-A", ".", env=env)
    git.run(root, *git.identity_args(root), "commit", "-q", "-m", "memstack init", env=env)
    return {"store": str(root), "created": True, "agents": listed, "hooks": hooks,
            "message": f"new memstack store at {root}"}

