"""`memstack init` and `memstack install`."""

from pathlib import Path
from typing import Any

from memstack import install
from memstack.output import emit


def register(sub: Any, common: Any) -> None:
    p = sub.add_parser("init", parents=[common], help="make a new store (template, git, hooks, first commit)",
                       description="Make a new store at PATH: its own git repository, or, inside an existing"
                                   " work tree, a folder of that repository (no nested repository; memstack's"
                                   " hooks join the repository's .pre-commit-config.yaml). A rerun finishes a"
                                   " half-made store and otherwise changes nothing.")
    p.add_argument("path", nargs="?", default=".", metavar="PATH")
    p.add_argument("--agent", action="append", default=[], metavar="NAME", help="an agent of the store (repeatable)")
    p.add_argument("--force", action="store_true",
                   help="make the store in a folder that already holds files (they are committed with it"
                        " when the store is its own repository)")
    p.set_defaults(func=run_init)
    p = sub.add_parser("install", parents=[common], help="in a clone of a store: install the hooks")
    p.set_defaults(func=run_install)


def run_init(args: Any) -> int:
    result = install.init(Path(args.path), args.agent, force=args.force)
    emit(args, result, result["message"])
    return 0


def run_install(args: Any) -> int:
    from memstack.store import open_store

    store = open_store(args.store)
    installed = install.install(store.root)
    emit(args, {"store": str(store.root), "installed": installed},
         "\n".join(f"installed {what}" for what in installed) or "hooks already installed")
    return 0
