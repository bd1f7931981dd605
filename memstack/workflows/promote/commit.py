"""The promotion commit: its message (what moved, with trailers), what it holds (kb/, intake/, the boot
files and the handoffs they read), and its check run in this process before git commits."""

import os
import re
from collections import Counter
from pathlib import Path

from memstack.base import files, jsonio, layout, ledger
from memstack.base.errors import MemstackError
from memstack.base.output import plural
from memstack.integrity import check
from memstack.kb.routing import SUB_TIERS
from memstack.repo import git
from memstack.repo.store import folder_of

TRAILERS = {"knowledge": "Knowledge", "jeles_atoms": "Jeles-Atoms", "opus_atoms": "Opus-Atoms", "binder": "Binder"}


def commit_message(counts: Counter[str], ratified: int, superseded: int) -> str:
    total = sum(counts.values())
    moved = ([plural(total, "record") + " routed"] if total or not ratified else []) \
        + ([plural(ratified, "ratified record") + " made knowledge"] if ratified else []) \
        + ([plural(superseded, "fact") + " superseded"] if superseded else [])
    head = "memstack promote: " + ", ".join(moved)
    body = [f"{tier}: {counts[tier]}" for tier in SUB_TIERS if counts[tier]]
    if ratified:
        body.append(f"ratified by a human, now knowledge: {ratified}")
    trailers = [f"Memstack-Routed: {total}"] + [f"Memstack-{TRAILERS[t]}: {counts[t]}" for t in SUB_TIERS]
    trailers += [f"Memstack-Ratified: {ratified}", f"Memstack-Superseded: {superseded}"]
    return "\n\n".join([head, "\n".join(body) or "no new records: the views and boot files are refreshed",
                        "\n".join(trailers)]) + "\n"


def _committed_sizes(store: Path) -> dict[str, int]:
    """The size at HEAD of each ledger shard (the hook refuses a commit whose shard does not begin with
    HEAD's, so only the sizes are asked of git: one listing, no content)."""
    env = git.no_git_env()
    if git.rev_parse(store, "HEAD") is None:
        return {}
    listed = git.out(store, "ls-tree", "-r", "-l", "-z", "--full-name", "HEAD", "--", layout.LEDGER_DIR, env=env)
    _, folder = folder_of(store)
    sizes = {}
    for entry in filter(None, listed.split("\0")):
        meta, path = entry.split("\t", 1)
        size = meta.split()[-1]
        if size.isdigit():
            sizes[path[len(folder):]] = int(size)
    return sizes


def uncommitted_ledger(store: Path) -> tuple[Counter[str], int]:
    """Ledger lines not in HEAD, counted by sub-tier (ratified records apart): each shard read from
    its size at HEAD on (a shard the same size as at HEAD is not read)."""
    counts: Counter[str] = Counter()
    ratified = 0
    committed = _committed_sizes(store)
    root = str(store)  # joined as strings: one stat a shard, pathlib would cost more than the stats
    for shard in ledger.shards(store):
        start = committed.get(shard, 0)
        path = f"{root}/{shard}"
        if os.stat(path).st_size <= start:
            continue
        with open(path, "rb") as handle:
            handle.seek(start)
            for entry in jsonio.iter_jsonl(handle.read(), shard):
                if entry.get("via") == "binder":
                    ratified += 1
                else:
                    counts[str(entry.get("sub_tier"))] += 1
    return counts, ratified


def make_commit(store: Path, message: str) -> str | None:
    """Commit kb/, intake/, the boot files and the handoffs they read (nothing else); None when
    they hold no change. Intake and those handoffs go along so the commit holds every source of
    what it derives, also when a second run finishes an interrupted one. A store in a folder of a
    code repository commits only that folder's memory (git runs at the work tree's top)."""
    top, folder = folder_of(store)
    anchors = sorted(store.glob("session_anchor_*.json"))
    read_by_boot = [jsonio.loads(p.read_bytes(), p.name).get("handoff") for p in anchors]
    wanted = ["kb", "intake", "willow.md", *(p.name for p in anchors), *(h for h in read_by_boot if h)]
    changed = git.out(top, "status", "--porcelain", "-z", "--untracked-files=all", "--",
                      *(folder + w for w in wanted))
    paths = sorted({entry[3:] for entry in changed.split("\0") if len(entry) > 3})  # relative to the top
    if not paths:
        return None
    with git.index_kept(top):  # refused: the index as it was (promote then puts the files back: run.py)
        return _commit(top, folder, paths, message)


def _commit(top: Path, folder: str, paths: list[str], message: str) -> str | None:
    git.run(top, "add", "-A", "--", *paths)
    if not git.out(top, "diff", "--cached", "--name-only", "--", *paths).strip():
        return None
    env = git.commit_env(top)
    staged = set(git.out(top, "diff", "--cached", "--name-only", "-z", "--", folder or ".").split("\0"))
    verify: list[str] = []
    only = ["--", *paths]
    if not staged - {""} - set(paths):  # the index holds this commit's memory and nothing else of the store
        check_here(top, folder)
        env["SKIP"] = ",".join(filter(None, [os.environ.get("SKIP"), HOOK]))
        verify = [] if _other_hooks(top) else ["--no-verify"]  # nothing else to run: not even pre-commit
        if not folder or not git.out(top, "diff", "--cached", "--name-only", "--", f":(exclude){folder}").strip():
            only = []  # the index is the commit: git need not stage the paths again in an index of its own
    files.crash_point()
    try:
        git.run(top, "commit", "-q", *verify, "-m", message, *only, env=env)  # through the other hooks
    except MemstackError as exc:
        if exc.message.startswith("git is locked"):
            raise
        detail = exc.message.partition(f"failed in {top}: ")[2] or exc.message
        raise MemstackError.marked("the promotion commit was refused (nothing was written; fix what the hook"
                                   " says, then run `{verb:memstack promote}` again): {detail}",
                                   detail=detail) from None
    return git.out(top, "rev-parse", "HEAD").strip()


HOOK = "memstack-check"  # the pre-commit hook that runs `memstack check --staged` (store-template/)


def check_here(top: Path, folder: str) -> None:
    """The promotion commit's check, as its pre-commit hook runs it (`memstack check --staged`), in this
    process: its modules are loaded and its fact index open, so the commit does not pay for a second
    interpreter; the commit then tells pre-commit to skip that hook (SKIP), and any other hook runs."""
    found = check.staged(top, folder).violations
    if found:
        raise MemstackError.marked("the promotion commit was refused (nothing was written; fix what the check"
                                   " says, then run `{verb:memstack promote}` again):\n{found}",
                                   found="\n".join(map(str, found)))


def _other_hooks(top: Path) -> bool:
    """Whether a commit in `top` would run a hook besides memstack's own (pre-commit configured with
    another hook, or a pre-commit or commit-msg hook pre-commit did not install)."""
    hooks = top / git.out(top, "rev-parse", "--git-path", "hooks").strip()
    for name in ("pre-commit", "commit-msg"):
        script = hooks / name
        if script.exists() and b"# File generated by pre-commit:" not in script.read_bytes()[:200]:
            return True
    path = top / ".pre-commit-config.yaml"
    if not path.exists():
        return False
    ids = _HOOK_ID.findall(path.read_text(encoding="utf-8", errors="replace"))  # read as text: no YAML loader
    return not ids or not all(i.startswith("memstack-") for i in ids)


_HOOK_ID = re.compile(r"""(?<![\w-])id:[ \t]*["']?([^\s"'#,}]+)""")  # block or flow style; a comment's
# mention counts too: a hook read wrongly only costs a pre-commit run, a hook missed would go unrun


def can_commit(store: Path) -> None:
    """Refuse, before anything is written, a promotion whose commit could not be made."""
    if not git.is_worktree(store):
        raise MemstackError.marked("{store} is not inside a git repository (no .git): promote commits its work — run"
                                   " it in the store's clone, or pass {arg:--no-commit}", store=store)
    git.refuse_locked(store)
