"""The promotion commit: its message (what moved, with trailers) and what it holds (kb/, intake/, the boot
files and the handoffs they read); workflows/commits.py checks and makes it."""

import os
from collections import Counter
from collections.abc import Callable
from pathlib import Path

from memstack.base import files, jsonio, layout, ledger
from memstack.base.errors import MemstackError
from memstack.base.output import plural
from memstack.kb.routing import SUB_TIERS
from memstack.repo import git, pathcommit
from memstack.repo.store import folder_of
from memstack.workflows import commits, derived

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


def written_ahead(store: Path, changed: list[str]) -> Callable[[], object]:
    """The blobs of `changed` (store-relative: what this promotion wrote to kb/ and intake/) written by git on
    another core while the views are rebuilt (repo/pathcommit.py): the commit then only hashes them."""
    top, folder = folder_of(store)
    return pathcommit.written_ahead(top, [folder + path for path in changed])


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
    tree's top); what the user staged elsewhere stays staged (workflows/commits.py)."""
    if not changed:
        return None
    top, folder = folder_of(store)
    # A handoff an anchor reads since the rebuild goes along (one git already has is staged unchanged).
    paths = sorted(folder + path for path in {*changed, *_boot_files(store)})  # relative to the top
    proc = git.run(top, "rev-parse", "HEAD", "--", ok=(0, 128))  # 128: no commit yet
    if proc.returncode == 0:  # the views are fresh in a commit made on this parent; one replayed is told apart
        message += derived.parent_trailer(proc.stdout.decode().split()[0])
    return commits.commit_paths(top, folder, paths, message, REFUSED)  # refused: promote puts the files back


REFUSED = "the promotion commit was refused (nothing was written; fix what it says, then run" \
          " `{verb:memstack promote}` again)"


def can_commit(store: Path) -> None:
    """Refuse, before anything is written, a promotion whose commit could not be made."""
    if not git.is_worktree(store):
        raise MemstackError.marked("{store} is not inside a git repository (no .git): promote commits its work — run"
                                   " it in the store's clone, or pass {arg:--no-commit}", store=store)
    git.refuse_locked(store)
