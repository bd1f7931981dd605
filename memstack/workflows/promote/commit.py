"""The promotion commit: its message (what moved, with trailers), what it holds (kb/, intake/, the boot
files and the handoffs they read), and its check run in this process before git commits."""

import os
from collections import Counter
from collections.abc import Callable
from pathlib import Path

from memstack.base import files, jsonio, layout, ledger
from memstack.base.errors import MemstackError
from memstack.base.output import plural
from memstack.base.patterns import lazy
from memstack.integrity import check
from memstack.kb.routing import SUB_TIERS
from memstack.repo import git, pathcommit
from memstack.repo.store import folder_of
from memstack.workflows import derived

TRAILERS = {"knowledge": "Knowledge", "jeles_atoms": "Jeles-Atoms", "opus_atoms": "Opus-Atoms", "binder": "Binder"}


def commit_message(counts: Counter[str], ratified: int, superseded: int) -> str:
    total = sum(counts.values())
    moved = ([plural(total, "record") + " routed"] if total or not ratified else []) \
        + ([plural(ratified, "ratified record") + " made knowledge"] if ratified else []) \
        + ([plural(superseded, "fact") + " superseded"] if superseded else [])
    head = "memstack promote: " + ", ".join(moved)
    body = [f"{tier}: {counts[tier]}" for tier in SUB_TIERS if counts[tier]]
    if ratified:
        body.append(f"ratified in the Binder, now knowledge: {ratified}")
    trailers = [f"Memstack-Routed: {total}"] + [f"Memstack-{TRAILERS[t]}: {counts[t]}" for t in SUB_TIERS]
    trailers += [f"Memstack-Ratified: {ratified}", f"Memstack-Superseded: {superseded}"]
    return "\n\n".join([head, "\n".join(body) or "no new records: the views and boot files are refreshed",
                        "\n".join(trailers)]) + "\n"


def memory_changes(store: Path) -> list[str]:
    """The files a promotion commit holds that differ from HEAD (staged or not, new ones included), store-
    relative: kb/, intake/, the boot files and the handoffs they read."""
    return memory_changes_asked(store)()


def memory_changes_asked(store: Path) -> Callable[[], list[str]]:
    """`memory_changes` asked of git now, on a thread of its own (a promotion reads the intake files
    meanwhile); the call returned gives them, with every file of kb/ and intake/ this thread wrote since
    through `files` (`files.written`: a promotion's fact and ledger lines). One `git status` a promotion,
    taken before the views are rebuilt (what the rebuild writes is added to it: `derived.rebuild` says what
    it wrote), so the work tree is compared with the index once."""
    top, folder = folder_of(store)
    wanted = ["kb", "intake", *_boot_files(store)]
    asked = git.later(top, "status", "--porcelain", "-z", "--untracked-files=all", "--no-renames", "--",
                      *(folder + w for w in wanted))

    def changes() -> list[str]:
        found = {entry[3 + len(folder):] for entry in asked().split("\0") if len(entry) > 3}
        for path in files.written():
            relpath = os.path.relpath(path, store)
            if relpath in wanted or relpath.startswith(("kb/", "intake/")):
                found.add(relpath)
        return sorted(found)

    return changes


def _boot_files(store: Path) -> list[str]:
    """willow.md, the anchors and the handoffs they read (store-relative)."""
    anchors = sorted(store.glob("session_anchor_*.json"))
    read_by_boot = [jsonio.loads(p.read_bytes(), p.name).get("handoff") for p in anchors]
    return ["willow.md", *(p.name for p in anchors), *(h for h in read_by_boot if isinstance(h, str))]


def _committed_sizes(store: Path, shards: list[str]) -> dict[str, int]:
    """The size at HEAD of each of `shards` (the hook refuses a commit whose shard does not begin with
    HEAD's, so only the sizes are asked of git: one `cat-file --batch-check`, no content)."""
    if not shards:
        return {}
    asked = "".join(f"HEAD:./{shard}\n" for shard in shards).encode()  # ./: from the store's folder
    told = git.run(store, "cat-file", "--batch-check=%(objectsize)", input=asked, env=git.no_git_env()).stdout
    return {shard: int(size) for shard, size in zip(shards, told.decode().splitlines(), strict=True)
            if size.isdigit()}  # `HEAD:./path missing`: a shard new since HEAD (or no HEAD yet)


def uncommitted_ledger(store: Path, changed: list[str]) -> tuple[Counter[str], int]:
    """Ledger lines not in HEAD, counted by sub-tier (ratified records apart): each of the `changed`
    shards (`memory_changes`) read from its size at HEAD on."""
    counts: Counter[str] = Counter()
    ratified = 0
    prefix = layout.LEDGER_DIR + "/"
    shards = [p for p in changed if p.startswith(prefix) and p.endswith(ledger.SUFFIX) and (store / p).is_file()]
    committed = _committed_sizes(store, shards)
    for shard in shards:
        start = committed.get(shard, 0)
        with open(store / shard, "rb") as handle:
            handle.seek(start)
            for entry in jsonio.iter_jsonl(handle.read(), shard):
                if entry.get("via") == "binder":
                    ratified += 1
                else:
                    counts[str(entry.get("sub_tier"))] += 1
    return counts, ratified


def make_commit(store: Path, message: str, changed: list[str]) -> str | None:
    """Commit `changed` (store-relative: `memory_changes` and what the rebuild wrote after it; nothing
    else); None when they hold no change. Intake and the handoffs the boot files read go along so the
    commit holds every source of what it derives, also when a second run finishes an interrupted one. A
    store in a folder of a code repository commits only that folder's memory (git runs at the work
    tree's top)."""
    if not changed:
        return None
    top, folder = folder_of(store)
    # A handoff an anchor reads since the rebuild goes along (one git already has is staged unchanged).
    paths = sorted(folder + path for path in {*changed, *_boot_files(store)})  # relative to the top
    proc = git.run(top, "rev-parse", "HEAD", "HEAD^{tree}", "--", ok=(0, 128))  # 128: no commit yet
    head = tuple(proc.stdout.decode().split()[:2]) if proc.returncode == 0 else ()  # (`--` is echoed)
    if head:  # the views are fresh in a commit made on this parent; one replayed onto another is told apart
        message += derived.parent_trailer(head[0])
    if len(head) == 2 and not _other_hooks(top, also=_UNDER_WAY):  # nothing for git commit to run: the paths alone
        return _commit_paths(top, folder, (head[0], head[1]), paths, message)
    with git.index_kept(top):  # refused: the index as it was (promote then puts the files back: run.py)
        return _commit(top, folder, [folder + path for path in memory_changes(store)], message)


def _commit_paths(top: Path, folder: str, head: tuple[str, str], paths: list[str], message: str) -> str | None:
    """The commit of `paths` on HEAD through a private index (repo/pathcommit.py): what the user staged
    elsewhere stays out of the commit and stays staged, their index takes the committed entries of
    `paths`, and the check runs on the private index in this process. Killed anywhere, the next run's
    `memory_changes` still names what is left (the files, or the index entries, that differ from HEAD)."""
    env = git.commit_env(top)
    with pathcommit.PrivateIndex(top, head[0], env) as index:  # HEAD and its tree
        index.stage(paths)
        tree = index.tree()
        moved = tree != head[1]
        if moved:
            with index.current():
                check_here(top, folder)
        files.crash_point()
        with git.index_kept(top):  # the user's index, as `git commit PATHS` leaves it (put back if refused)
            if not index.install():
                pathcommit.set_entries(top, index.entries(paths), env)
            if not moved:  # nothing to commit (a run killed after its commit is finished so)
                return None
            files.crash_point()  # the user's index holds the commit's entries; HEAD has not moved
            try:
                sha = pathcommit.commit(top, tree, head[0], message, env)
            except MemstackError as exc:
                raise _refused(top, exc) from None
        files.crash_point()  # committed; the private index not removed yet
    return sha


def _refused(top: Path, exc: MemstackError) -> MemstackError:
    if exc.message.startswith("git is locked"):
        return exc
    detail = exc.message.partition(f"failed in {top}: ")[2] or exc.message
    return MemstackError.marked("the promotion commit was refused (nothing was written; fix what the hook"
                                " says, then run `{verb:memstack promote}` again): {detail}", detail=detail)


def _commit(top: Path, folder: str, paths: list[str], message: str) -> str | None:
    if not paths:
        return None
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
        raise _refused(top, exc) from None
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


_UNDER_WAY = ("MERGE_HEAD", "CHERRY_PICK_HEAD", "REVERT_HEAD")  # a merge, cherry-pick or revert git commit ends


def _other_hooks(top: Path, also: tuple[str, ...] = ()) -> bool:
    """Whether a commit in `top` would run a hook besides memstack's own (pre-commit configured with
    another hook, or a commit hook pre-commit did not install), or (`also`) any of those files is in the
    git dir: then the commit is made by `git commit`."""
    asked = [arg for name in ("hooks", *also) for arg in ("--git-path", name)]
    hooks, *others = (top / line for line in git.out(top, "rev-parse", *asked).splitlines())
    if any(path.exists() for path in others):
        return True
    for name in ("pre-commit", "prepare-commit-msg", "commit-msg", "post-commit"):
        script = hooks / name
        if script.exists() and b"# File generated by pre-commit:" not in script.read_bytes()[:200]:
            return True
    path = top / ".pre-commit-config.yaml"
    if not path.exists():
        return False
    ids = _HOOK_ID.findall(path.read_text(encoding="utf-8", errors="replace"))  # read as text: no YAML loader
    return not ids or not all(i.startswith("memstack-") for i in ids)


_HOOK_ID = lazy(r"""(?<![\w-])id:[ \t]*["']?([^\s"'#,}]+)""")  # block or flow style; a comment's
# mention counts too: a hook read wrongly only costs a pre-commit run, a hook missed would go unrun


def can_commit(store: Path) -> None:
    """Refuse, before anything is written, a promotion whose commit could not be made."""
    if not git.is_worktree(store):
        raise MemstackError.marked("{store} is not inside a git repository (no .git): promote commits its work — run"
                                   " it in the store's clone, or pass {arg:--no-commit}", store=store)
    git.refuse_locked(store)
