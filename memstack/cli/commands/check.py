"""`memstack check`: the invariants I1-I8 (docs/reference.md); exit 1 when one is broken."""

import argparse
import os
import sys
from pathlib import Path
from typing import Any

from memstack.base import layout, progress
from memstack.base.errors import MemstackError, bad
from memstack.base.output import emit
from memstack.repo import clonehooks, diffs, git, store

HELP = """\
Checks memory changes against the invariants I1-I8 and lists every violation as
`path:line: I<n> what is wrong — how to fix it`. Exit 0: clean; 1: violations; 2: bad usage.

With no mode flag, the work tree (tracked and untracked files) is checked against
HEAD: what `git add -A && git commit` would be checked for.
"""
EXAMPLES = """\
examples:
  memstack check
  memstack check --range origin/main..HEAD
"""


def register(sub: Any, common: Any) -> None:
    p = sub.add_parser("check", parents=[common], help="check the invariants I1-I8 (exit 1 on a violation)",
                       description=HELP, epilog=EXAMPLES, formatter_class=argparse.RawDescriptionHelpFormatter)
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


def _scope(explicit: str | None, hook: bool, tips: list[str], revs: list[str]) -> tuple[Path, list[str]]:
    """The repository to check and the folders of the stores to check in it ("" at the top, "path/").

    A work tree: --store, MEMSTACK_HOME, WILLOW_HOME, the nearest memstack.yaml upward; else every
    store the repository tracks (its index; none there: HEAD's, so a commit deleting a store is
    checked). A hook checks the repository git runs it in, so MEMSTACK_HOME naming a store outside
    it is passed over. A bare repository (pre-receive): every store the old or new tips hold. And
    every store whose memstack.yaml the commits to check (`revs`) add, change or delete: a store
    that existed in the base of a step is checked even where the new state deletes it (also one
    named by --store that the work tree no longer holds).
    """
    named = explicit or os.environ.get("MEMSTACK_HOME") or os.environ.get("WILLOW_HOME")
    located = store.locate(None, old_format_ok=True) if named and not explicit and not hook else None
    start = Path(explicit) if explicit else located or Path.cwd()
    if not start.is_dir():
        raise bad("--store", repr(str(start)), "no such folder")
    proc = git.run(start, "rev-parse", "--is-bare-repository", "--absolute-git-dir", ok=(0, 128))
    if proc.returncode != 0:
        raise MemstackError.marked("{start} is not in a git repository — `{verb:memstack init}` makes a store",
                                   start=start)
    bare, git_dir = proc.stdout.decode().split("\n")[:2]
    if bare == "true":
        held = {f for tip in tips for f in store.folders(Path(git_dir), tip)}
        return Path(git_dir), sorted(held | set(store.folders_touched(Path(git_dir), revs)))
    top = git.toplevel(start).resolve()
    gone = _deleted(named, top, revs) if named else None
    if gone is not None:
        return top, [gone]
    root = store.locate(explicit, start, old_format_ok=True) if named else None
    if root is None or not root.resolve().is_relative_to(top):  # a hook: MEMSTACK_HOME names another repository's
        here = start.resolve()
        root = next((c for c in (here, *here.parents) if store.is_store(c) and c.is_relative_to(top)), None)
    if root is not None:
        clonehooks.remark(root)  # found here without `locate`: its one line too
        top, folder = store.folder_of(root)
        return top, [folder]
    found = store.folders(top) or (store.folders(top, "HEAD") if git.rev_parse(top, "HEAD") else [])
    return top, sorted(set(found) | set(store.folders_touched(top, revs)))


def _deleted(named: str, top: Path, revs: list[str]) -> str | None:
    """The folder of the store `named` (--store, MEMSTACK_HOME) names when the work tree no longer holds
    it but the commits to check touch its memstack.yaml (a range that deletes it); else None."""
    path = Path(named).expanduser().resolve()
    if not revs or not path.is_dir() or store.is_store(path) or not path.is_relative_to(top):
        return None
    folder = "" if path == top else f"{path.relative_to(top).as_posix()}/"
    return folder if folder in store.folders_touched(top, revs) else None


def _revs(args: Any, lines: list[str]) -> list[str]:
    """The rev-list arguments of the commits a range or push check reads ([] for the other modes, or
    when the mode's input is bad: the check says why)."""
    if not (args.range_ or args.pre_push or args.pre_receive):
        return []
    from memstack.integrity import check, guard  # lazy: the checks and their rules; --help stays quick

    try:
        if args.range_:
            return check.range_revs(args.range_)
        if args.pre_push:
            return check.pushed_revs(*check.pre_push_updates(os.environ))
        return check.pushed_revs([(u.old, u.new) for u in check.receive_updates(lines)], list(guard.ON_REMOTE))
    except MemstackError:
        return []


def _no_store(repo: Path) -> int:
    """No store to check against: fine for a code-only change, an error when memory files are staged."""
    _, changes = diffs.staged_changes(repo)
    looks = [c.path for c in changes if _memory_like(c.path, layout)]
    if looks:
        raise MemstackError.marked("memory files staged ({looks}) but no memstack store (memstack.yaml) in {repo}:"
                                   " nothing can check them — commit the store's memstack.yaml, or"
                                   " {pass:--store PATH}", repo=repo,
                                   looks=", ".join(looks[:3]) + (", ..." if len(looks) > 3 else ""))
    return _nothing(repo)


def _memory_like(path: str, layout: Any) -> bool:
    parts = path.split("/")
    return any(layout.classify("/".join(parts[i:])).kind in (*layout.LOGS, layout.FACTS, layout.HANDOFF,
                                                               layout.CONFIG_KIND) for i in range(len(parts)))


def run(args: Any) -> int:
    hook = args.staged or args.pre_push or args.pre_receive
    if args.format == "json":

        progress.silence()  # one document on stdout, nothing beside it
    lines = list(sys.stdin) if args.pre_receive else []
    # Old tips too: a push that deletes a store is checked against the store it deletes.
    tips = [sha for parts in (line.split() for line in lines) if len(parts) == 3 for sha in parts[:2] if sha.strip("0")]
    repo, folders = _scope(args.store, hook, tips, _revs(args, lines))
    if not folders:
        if args.staged:
            return _no_store(repo)
        if hook:
            return _nothing(repo)
        raise MemstackError.marked("no memstack store in {repo}: {pass:--store PATH}, or run inside a store",
                                   repo=repo)
    reports = [_check(args, repo, folder, lines) for folder in folders]
    report = reports[0]
    for more in reports[1:]:  # several stores in one repository: each checked, one report
        report.results += more.results
        if more.scope not in report.scope.split("; "):
            report.scope += f"; {more.scope}"
    if len(reports) > 1:
        report.scope += f", in {len(reports)} stores ({', '.join(f.rstrip('/') or '.' for f in folders)})"
    if args.json or args.format == "json":

        emit(argparse.Namespace(json=True), report.to_dict())
    else:
        sys.stdout.write(_text(report))
    return 1 if report.violations else 0


def _check(args: Any, repo: Path, folder: str, lines: list[str]) -> Any:
    from memstack.integrity import check  # lazy: the checks and their rules; --help stays quick

    if args.staged:
        return check.staged(repo, folder)
    if args.range_ is not None:
        return check.check_range(repo, args.range_, folder)
    if args.all:
        return check.audit(repo, folder)
    if args.pre_push:
        return check.pre_push(repo, os.environ, folder)
    if args.pre_receive:
        return check.pre_receive(repo, lines, folder)
    return check.worktree(repo, folder)


def _nothing(repo: Path) -> int:
    print(f"memstack check: no memstack store in {repo}; nothing to check")
    return 0


def _text(report: Any) -> str:
    from memstack.integrity.report import stale_line  # loaded already: the check ran

    out = []
    many = report.mode not in ("staged", "worktree", "all")  # commits, not a state (one a store)
    for result in report.results:
        if not result.violations:
            continue
        if many and result.commit:
            out.append(f"commit {result.commit[:12]} {result.subject!r} (against {result.against}):")
        out += [str(v) for v in result.violations]
    out += [stale_line(path) for path in report.stale]
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
