"""The derived files a promotion rewrites: the KB views (patched from the last committed ones where they
can be, else built from every fact file) and the boot files that read them."""

from collections.abc import Iterator
from contextlib import contextmanager
from functools import partial
from pathlib import Path

from memstack.base import files
from memstack.base.errors import MemstackError
from memstack.boot import context as boot
from memstack.integrity import buildmemo
from memstack.kb import viewpatch, views
from memstack.repo import diffs, git, objects
from memstack.repo.sources import WorktreeSource
from memstack.repo.store import folder_of


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


def rebuild(store: Path, patched: bool = False) -> list[str]:
    """Rewrite the KB views, then the boot files that read them; returns the paths that changed.
    `patched`: the views of the last commit that changed them, patched with what changed since
    (viewpatch.py), where they can be; else (and by default) built from every fact file."""
    source = WorktreeSource(store)
    with _readable():
        built = patched_views(store, source) if patched else views.build(source)
    written = files.write_changed(store, built)
    with _readable():
        return written + boot.rebuild(store)


def patched_views(store: Path, source: WorktreeSource) -> dict[str, files.Data]:
    """The views of the work tree: patched from the last committed ones where they can be."""
    if not (git.is_worktree(store) and git.has_commits(store)):
        return views.build(source)
    top, folder = folder_of(store)
    with objects.CatFile(top, git.no_git_env()) as blobs:  # a whole build is recorded for the commit's check
        return viewpatch.views_of(top, folder, blobs, diffs.WORKTREE, source,
                                  build=partial(buildmemo.build, top, folder))


def stale(store: Path, patched: bool = False) -> list[str]:
    """The derived files that differ from a rebuild (nothing written). `patched`: the views compared
    with the last committed ones patched (viewpatch.py), where they can be, not with a build from
    every fact file."""
    source = WorktreeSource(store)
    with _readable():
        built = patched_views(store, source) if patched else views.build(source)

    class Overlay(WorktreeSource):
        def read(self, relpath: str) -> bytes | None:
            return files.whole(built[relpath]) if relpath in built else super().read(relpath)

    with _readable():
        built.update(boot.build(Overlay(store)))
    return sorted(p for p, data in built.items() if not files.holds(store / p, data))
