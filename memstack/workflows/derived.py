"""The derived files a promotion rewrites: the view shards whose sources changed (kb/views.py), and the
boot files that read them. `rebuild` without `changed_only` makes every shard from every source."""

from collections import Counter
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

from memstack.base import files, layout, synced
from memstack.base.errors import MemstackError
from memstack.base.forgotten import Forgotten
from memstack.base.jsonio import iter_jsonl
from memstack.boot import context as boot
from memstack.kb import views
from memstack.repo import diffs, git
from memstack.repo.counts import CachedCounts
from memstack.repo.sources import Source, WorktreeSource
from memstack.repo.store import folder_of

_SOURCES = ("kb/facts", "intake", layout.LEDGER_DIR, layout.DECISIONS, layout.FORGOTTEN_DIR, *views.VIEW_DIRS)


@contextmanager
def _readable() -> Iterator[None]:
    """A source line that is JSON but no record (a hand edit the hooks would refuse) makes the builders
    fail on a missing or mistyped field: said as what it is, with where to find it, never a traceback.
    (A line that is not JSON at all is named by its reader, `path:line: I5 …`.)"""
    try:
        yield
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        raise MemstackError(f"the derived files cannot be built from the sources in the work tree: a record is"
                            f" not valid ({type(exc).__name__}: {exc}); `memstack check` names it (I5)") from None


def _built(store: Path, changed_only: bool, dirty: Sequence[str] | None = None, source: Source | None = None
           ) -> Iterable[tuple[str, bytes | None]]:
    if source is None:
        source = WorktreeSource(store)
        wanted = touched(store, source, dirty) if changed_only else None
    else:
        wanted = None
    shards = views.Shards(source)
    return shards.every() if wanted is None else shards.of(wanted).items()


def rebuild(store: Path, changed_only: bool = False, dirty: Sequence[str] | None = None) -> list[str]:
    """Rewrite the view shards (all, or with `changed_only` those whose sources changed since the last
    commit whose views are known fresh, `fresh_base`), then the boot files that read them; returns the
    paths that changed. `dirty`: the store's files that differ from HEAD, when the caller has asked git
    already (`touched`)."""
    with _readable():
        return rebuild_views(store, changed_only, dirty) + boot.rebuild(store)


def rebuild_views(store: Path, changed_only: bool = False, dirty: Sequence[str] | None = None,
                  source: Source | None = None) -> list[str]:
    """`rebuild`'s view shards alone; `source`: every shard built from the sources it reads (the index a
    commit is made from) rather than from the work tree's."""
    written: list[str] = []

    def changed() -> Iterator[tuple[Path, bytes]]:
        for path, data in _built(store, changed_only, dirty, source):
            if data is None:
                if files.remove(store / path):
                    written.append(path)
            elif not files.holds(store / path, data):
                written.append(path)
                yield store / path, data

    with _readable():
        synced.write_atomic_many(changed())  # their fsyncs made together: one each is seconds at 1,000 shards
        return sorted(written)


def stale(store: Path, changed_only: bool = False) -> list[str]:
    """The derived files that differ from a rebuild (nothing written). `changed_only`: of the shards, only
    those whose sources changed since the last commit whose views are known fresh (`fresh_base`) are
    compared."""
    found = []
    with _readable():
        for path, data in _built(store, changed_only):
            if (store / path).is_file() if data is None else not files.holds(store / path, data):
                found.append(path)
        counts = CachedCounts(store)
        built = boot.build(WorktreeSource(store), counts)
        counts.save()
    found += boot.leftover(store, built)
    return sorted(found + [p for p, data in built.items() if not files.holds(store / p, data)])


def touched(store: Path, source: WorktreeSource, dirty: Sequence[str] | None = None) -> set[str] | None:
    """The shards whose sources changed in the work tree since the last commit whose views are known fresh
    (`fresh_base`): names from git, and the lines appended to the ledger and the decisions since. None:
    every shard (no such commit, or a change whose records cannot be told). `dirty`: the
    store's files that differ from HEAD (staged or not, new ones included), which name the changed
    sources when that commit is HEAD, so git need not compare the work tree again."""
    if not (git.is_worktree(store) and git.has_commits(store)):
        return None
    top, folder = folder_of(store)
    base = fresh_base(top, folder)
    if base is None:
        return None
    if dirty is not None and base == git.rev_parse(top, "HEAD"):
        paths = [p for p in dirty if any(p == s or p.startswith(s + "/") for s in _SOURCES)]
    else:
        paths = [c.path for c in diffs.changes_since(top, base, diffs.WORKTREE, list(_SOURCES), folder)]
    decided: list[str] = []
    if layout.DECISIONS in paths:
        appended = _added_lines(top, base, folder + layout.DECISIONS, store / layout.DECISIONS)
        if appended is None:
            return None
        decided = [d["intake_id"] for d in iter_jsonl(appended, layout.DECISIONS)
                   if isinstance(d.get("intake_id"), str)]
    if any(p.startswith(layout.FORGOTTEN_DIR + "/") for p in paths):  # a forgotten record leaves its queue shard
        decided += [i for i, t in Forgotten.of(source).by_id.items() if t.get("kind") == "intake"]
    return views.touched(source, paths, (), decided)  # a changed ledger shard names its queue shard


# The trailer of a commit whose views are fresh, naming the commit it was made on: a promotion's
# (workflows/promote/commit.py) and sync's commit of the views it rebuilt (workflows/sync.py).
PARENT = "Memstack-Parent"
STEPS = (1, 15, 240)  # commits that changed a view looked at, newest first, 256 at most in all


def parent_trailer(parent: str) -> str:
    """The trailer line a commit whose views are fresh ends its message with (`fresh_base` reads it)."""
    return f"{PARENT}: {parent}\n"


def fresh_base(top: Path, folder: str) -> str | None:
    """The newest commit HEAD reaches whose views are known to be what its sources make: one made on the
    parent its `Memstack-Parent` trailer names (a promotion, sync's commit of rebuilt views). Comparing what
    differs between its tree and the work tree then finds every stale view, whichever way the commits
    between came: newer commits that changed a view are passed over, so what they changed is compared too
    (a merge keeps one side's view of a file the other side changed; a promotion that `git pull --rebase`
    or a cherry-pick replayed onto another parent changes a fact file whose view it does not carry; a hand
    commit of `memstack rebuild`). A promotion that reached this branch by a merge counts (its tree is as
    good a base as any: only the size of the difference depends on which). None: no such commit among the
    256 newest that changed a view (history made before the trailer, or none): every shard is compared."""
    seen = 0
    for most in STEPS:  # the newest alone first: as a rule the last promotion, made on its parent
        listed = git.out(top, "log", "--no-show-signature", f"--max-count={most}", f"--skip={seen}",
                         f"--format=%H %P%x00%(trailers:key={PARENT},valueonly,separator=%x20)%x00", "HEAD", "--",
                         *(folder + d for d in views.VIEW_DIRS), env=git.no_git_env())
        fields = listed.split("\0")
        for commit, named in zip(fields[0::2], fields[1::2], strict=False):
            sha, *parents = commit.split()
            if len(parents) == 1 and named.strip() == parents[0]:
                return sha
        if len(fields) // 2 < most:
            break  # every commit that changed a view looked at
        seen += most
    return None


def _added_lines(top: Path, base: str, spec: str, path: Path) -> bytes | None:
    """The lines of a log that commit `base` does not hold (None: the log is gone): those appended since, or,
    after a merge, those the other side brought in too (the base is then no prefix of the file). For the
    decisions, a human's: few, read whole."""
    old = git.run(top, "cat-file", "blob", f"{base}:{spec}", env=git.no_git_env(), ok=(0, 128)).stdout
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return None
    if data.startswith(old):
        return data[len(old):]
    had = Counter(old.splitlines())
    added = []
    for line in data.splitlines():
        if had[line] > 0:
            had[line] -= 1
        else:
            added.append(line + b"\n")
    return b"".join(added)
