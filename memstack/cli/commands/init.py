"""`memstack init` and `memstack install`."""

from pathlib import Path
from typing import Any

from memstack.base.errors import bad
from memstack.base.output import emit, note
from memstack.cli.commands import doc
from memstack.repo import clonehooks
from memstack.repo.store import open_store
from memstack.workflows import install, serverhook


def register(sub: Any, common: Any) -> None:
    p = sub.add_parser("init", parents=[common], help="make a new store (template, git, hooks, first commit)",
                       **doc("Make a new store at PATH: its own git repository, or, inside an existing"
                             " work tree, a folder of that repository (no nested repository; memstack's"
                             " hooks join the repository's .pre-commit-config.yaml). A rerun finishes a"
                             " half-made store and otherwise changes nothing (it adds no agent).",
                             "memstack init ../my-memory --agent claude --agent codex",
                             "cd my-project && memstack init .memory --agent claude"))
    p.add_argument("path", nargs="?", metavar="PATH",
                   help="where to make the store (default: --store, else the current folder)")
    p.add_argument("--agent", action="append", default=[], metavar="NAME", help="an agent of the store (repeatable)")
    p.add_argument("--force", action="store_true",
                   help="make the store in a folder that already holds files (they are committed with it"
                        " when the store is its own repository)")
    p.set_defaults(func=run_init)
    p = sub.add_parser("install", parents=[common], help="in a clone of a store: install the hooks",
                       **doc("In a clone of a store: install the pre-commit and pre-push hooks and register the"
                             " merge and diff drivers in the clone's git config (never committed). Run it once"
                             " per clone; a rerun says what was already in place. In a bare repository (a"
                             " self-hosted remote): install memstack's server hook, hooks/pre-receive.",
                             "git clone URL my-memory && cd my-memory && memstack install",
                             "git init --bare -b main remote.git && memstack --store remote.git install"))
    p.set_defaults(func=run_install)


def run_init(args: Any) -> int:
    if args.path is not None and args.store is not None and Path(args.path).resolve() != Path(args.store).resolve():
        raise bad("--store", repr(args.store), "init makes the store at {arg:PATH} ({path!r}); give one",
                  path=args.path)
    result = install.init(Path(args.path or args.store or "."), args.agent, force=args.force)
    emit(args, result, result["message"])
    if result.get("git_identity_missing"):
        note("memstack init: git has no name and email for you, so the first commit is memstack's own"
             " (memstack <memstack@localhost>); set yours before you commit:\n"
             '  git config --global user.name "Your Name"\n'
             "  git config --global user.email you@example.com")
    return 0


def run_install(args: Any) -> int:
    remote = serverhook.bare_repository(Path(args.store or "."))
    if remote is not None:  # a self-hosted remote: its server hook
        done = serverhook.install_remote(remote)
        emit(args, {"remote": str(remote), **done},
             "\n".join([f"installed {what}" + (" in place of an earlier memstack's hook" if done["replaced"] else "")
                        for what in done["installed"]]
                       + [f"already in place: {what}" for what in done["already"]]))
        for warning in done["warnings"]:
            note(f"memstack install: {warning}")
        return 0
    clonehooks.hush()  # what the remark asks for is being done
    store = open_store(args.store, old_format_ok=True)  # format 1 too: hooks that run this memstack can migrate it
    done = install.install_report(store.root)
    emit(args, {"store": str(store.root), **done},
         "\n".join([f"installed {what}" for what in done["installed"]]
                   + ([f"already in place: {', '.join(done['already'])}"] if done["already"] else [])))
    return 0
