"""`memstack check`: the invariants I1-I7 (SPEC section 2); exit 1 when one is broken."""

import argparse
import os
import sys
from pathlib import Path
from typing import Any

from memstack.errors import MemstackError

HELP = """\
Checks memory changes against the invariants I1-I7 and lists every violation as
`path:line: I<n> what is wrong — how to fix it`. Exit 0: clean; 1: violations; 2: bad usage.

With no mode flag, the work tree (tracked and untracked files) is checked against
HEAD: what `git add -A && git commit` would be checked for.
"""


def register(sub: Any, common: Any) -> None:
    p = sub.add_parser("check", parents=[common], help="check the invariants I1-I7 (exit 1 on a violation)",
                       description=HELP, formatter_class=argparse.RawDescriptionHelpFormatter)
    mode = p.add_mutually_exclusive_group()
    mode.add_argument("--staged", action="store_true", help="the staged index against HEAD (the pre-commit hook)")
    mode.add_argument("--range", dest="range_", metavar="A..B",
                      help="every commit of A..B against its parent(s), merges included (one revision: its history)")
    mode.add_argument("--all", action="store_true",
                      help="every file at HEAD as if newly added: a full audit, O(size of the store)")
    mode.add_argument("--pre-push", action="store_true",
                      help="what is being pushed (pre-commit's pre-push stage; reads its PRE_COMMIT_* variables)")
    mode.add_argument("--pre-receive", action="store_true",
                      help="server-side pre-receive hook: checks the pushed commits of `old new ref` lines on stdin")
    p.add_argument("--format", choices=("text", "json"), default="text", help="text (default) or json (as --json)")
    p.set_defaults(func=run)


def _repository(explicit: str | None, here_only: bool) -> Path:
    """The repository to check. Hooks (--staged, --pre-push, --pre-receive) check the one git runs
    them in, the working directory; otherwise --store, MEMSTACK_HOME, WILLOW_HOME, then the
    working directory's repository."""
    from memstack import git
    from memstack.store import locate

    start = Path(explicit) if explicit else None
    if start is None and not here_only:
        start = locate(None)
    start = start or Path.cwd()
    if not start.is_dir():
        raise MemstackError(f"bad --store {str(start)!r}: no such folder")
    proc = git.run(start, "rev-parse", "--is-bare-repository", "--absolute-git-dir", ok=(0, 128))
    if proc.returncode != 0:
        raise MemstackError(f"{start} is not in a git repository — `memstack init` makes a store")
    bare, git_dir = proc.stdout.decode().split("\n")[:2]
    return Path(git_dir) if bare == "true" else git.toplevel(start)


def run(args: Any) -> int:
    from memstack import check

    hook = args.staged or args.pre_push or args.pre_receive
    repo = _repository(args.store, here_only=hook)
    if args.staged:
        report = check.staged(repo)
    elif args.range_ is not None:
        report = check.check_range(repo, args.range_)
    elif args.all:
        report = check.audit(repo)
    elif args.pre_push:
        report = check.pre_push(repo, os.environ)
    elif args.pre_receive:
        report = check.pre_receive(repo, sys.stdin)
    else:
        report = check.worktree(repo)
    if args.json or args.format == "json":
        from memstack.output import emit

        emit(argparse.Namespace(json=True), report.to_dict())
    else:
        sys.stdout.write(_text(report))
    return 1 if report.violations else 0


def _text(report: Any) -> str:
    out = []
    many = len(report.results) > 1 or report.mode not in ("staged", "worktree", "all")
    for result in report.results:
        if not result.violations:
            continue
        if many:
            out.append(f"commit {result.commit[:12]} {result.subject!r} (against {result.against}):")
        out += [str(v) for v in result.violations]
    out += [f"{path}: stale — differs from a rebuild of the sources; derived files may lag them between promotions"
            " (SPEC I4), so this is no violation — `memstack rebuild` refreshes it" for path in report.stale]
    count = len(report.violations)
    if count:
        failing = sum(1 for r in report.results if r.violations)
        where = f" in {failing} of {len(report.results)} commits" if many else ""
        rules = ", ".join(sorted({v.rule for v in report.violations}))
        out.append(f"memstack check: {count} violation{'s' * (count != 1)} ({rules}){where} — {report.scope}")
    else:
        states = f", {len(report.results)} commit{'s' * (len(report.results) != 1)}" if many else ""
        out.append(f"memstack check: ok — {report.scope}{states}")
    return "\n".join(out) + "\n"
