"""`memstack merge-driver %O %A %B %P` and `memstack textconv FILE` (registered in a clone's git config)."""

import sys
from pathlib import Path
from typing import Any

from memstack.base.errors import MemstackError
from memstack.base.files import write_atomic
from memstack.cli.commands import doc
from memstack.repo import git
from memstack.repo.store import store_relative
from memstack.repo.textconv import convert


def register(sub: Any, common: Any) -> None:
    p = sub.add_parser("merge-driver", help="git merge driver for memory files (%%O %%A %%B %%P)",
                       **doc("git's merge driver for memory files (registered by init and install; git runs"
                             " it, not you): logs are merged by record id, fact closings kept, the result"
                             " written to %A.", "git config merge.memstack.driver 'memstack merge-driver"
                             " %O %A %B %P'"))
    for name in ("base", "ours", "theirs"):
        p.add_argument(name, metavar={"base": "%O", "ours": "%A", "theirs": "%B"}[name],
                       help={"base": "the common ancestor's file", "ours": "our file (the result is written here)",
                             "theirs": "their file"}[name])
    p.add_argument("path", metavar="%P", help="the path in the repository")
    p.set_defaults(func=run_merge)
    p = sub.add_parser("textconv", help="git diff text conversion for memory files",
                       **doc("git's diff text conversion for memory files (registered by init and install):"
                             " a fact shows as its window, so `git diff` shows a closing as the window that"
                             " changed.", "memstack textconv kb/facts/claude/2026-12.jsonl"))
    p.add_argument("file", metavar="FILE", help="the memory file to print as text")
    p.set_defaults(func=run_textconv)


def _read(name: str, verb: str = "merge-driver") -> bytes:
    try:
        return Path(name).read_bytes()
    except OSError as exc:
        raise MemstackError(f"{verb}: cannot read {name}: {exc.strerror}") from None


def run_merge(args: Any) -> int:
    from memstack.kb import merge  # lazy: the merge driver's rules; --help stays quick

    base, ours, theirs = _read(args.base), _read(args.ours), _read(args.theirs)
    try:
        # git runs the driver at the repository's top and names the file from there (%P).
        relpath = store_relative(args.path, Path.cwd())
        sides = merge.forgotten_in_sides(Path.cwd(), args.path[:len(args.path) - len(relpath)])
        result = merge.merge(relpath, base, ours, theirs, sides)
    except merge.Unmergeable as why:
        print(f"memstack merge-driver: {args.path}: {why}; left to git's line merge", file=sys.stderr)
        git.run(Path.cwd(), "merge-file", "-L", "ours", "-L", "base", "-L", "theirs",
                args.ours, args.base, args.theirs, env=git.no_git_env(), ok=range(0, 256))
        return 1
    write_atomic(Path(args.ours), result.data)
    for conflict in result.conflicts:
        print(f"memstack merge-driver: {args.path}: CONFLICT {conflict}", file=sys.stderr)
    return 1 if result.conflicts else 0


def run_textconv(args: Any) -> int:

    data = _read(args.file, "textconv")
    sys.stdout.write(convert(data))
    return 0
