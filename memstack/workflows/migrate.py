"""`memstack migrate`: a store of format 1 made format 2 in one commit (docs/migrate.md).

Refused first, nothing written: git's index locked, a merge (cherry-pick, revert, rebase, bisect) under way,
uncommitted memory. Then, holding the commit window (base/files.py: writers wait for the end), from the
committed store:

1. a note in `.memstack/` that a migration is under way (a rerun then knows the uncommitted files are its own);
2. the old ledger, `kb/promotions.jsonl` at HEAD, streamed: each line appended, unchanged, to the shard of its
   record's intake file (`integrity.migration.Routing`), buffered up to BUFFER bytes (bounded memory);
3. the old ledger and the one-file views deleted; memstack.yaml's `format` set to 2 (nothing else in it
   touched but `memstack.version`), the template's attribute lines added;
4. the views and boot files rebuilt from what the commit holds (a private index: HEAD's sources and the new
   ledger), so memory written in the work tree since an interrupted run stays out of them;
5. one commit of those paths alone (workflows/commits.py: checked in this process, what the user staged
   elsewhere left staged); the note removed.

Killed at any step, a rerun starts again from step 2: the shards are written anew from HEAD's ledger, so
nothing is written twice, and memory written meanwhile (a write waits only while a run is alive) stays
uncommitted in the work tree; killed after the commit, the rerun finds the store migrated.
"""

import re
import shutil
import sys
from pathlib import Path
from typing import Any

from memstack import __version__
from memstack.base import config, files, jsonio, layout
from memstack.base.errors import MemstackError
from memstack.base.output import plural
from memstack.boot import context as boot
from memstack.integrity.migration import Routing, format_attributes
from memstack.kb.views import VIEW_DIRS
from memstack.repo import clonehooks, git, objects, pathcommit
from memstack.repo.sources import GitSource
from memstack.repo.store import folder_of
from memstack.workflows import commits, install
from memstack.workflows.derived import parent_trailer, rebuild_views
from memstack.workflows.status import uncommitted

BUFFER = 16 << 20  # ledger bytes held before they are appended to their shards
MESSAGE = "memstack migrate: store format 1 -> 2\n\nThe promotion ledger in one file per intake file, the" \
          " views rebuilt.\n\nMemstack-Format: 2\n"


def _head_format(top: Path, folder: str) -> Any:
    found = git.run(top, "show", f"HEAD:{folder}{config.CONFIG_NAME}", env=git.no_git_env(), ok=(0, 128))
    text = found.stdout.decode("utf-8", "replace") if found.returncode == 0 else ""
    return config.store_format(config.parse(text, config.CONFIG_NAME))


def _ours(path: str) -> bool:
    """A file the migration writes (what a rerun may find uncommitted)."""
    kind = layout.classify(path).kind
    return path in (layout.V1_LEDGER, layout.CONFIG, ".gitattributes", *layout.V1_VIEWS) or kind in layout.DERIVED \
        or path.split("/")[:2] in (["kb", name] for name in (*layout.VIEWS, "promotions"))


def migrate(store: Path) -> dict[str, Any]:
    if not git.is_worktree(store) or not git.has_commits(store):
        raise MemstackError.marked("{store} is not a committed git store: `{verb:memstack migrate}` converts the"
                                   " committed store in one commit", store=store)
    top, folder = folder_of(store)
    git.refuse_locked(top)
    if (doing := git.under_way(top)) is not None:  # its commit would conclude it, or be refused by it
        raise MemstackError(f"migrate: {doing[1]} is in progress in this clone; conclude it with {doing[2]}, then"
                            " run `memstack migrate` again (nothing was written)")
    # The commit window (base/files.py), held to the end, as promote and sync hold it: a write waits, then lands
    # after the commit, in format 2 (one landing meanwhile would be put back by the pre-commit framework's stash).
    with files.committing(store):
        return _migrate(store, top, folder)


def _migrate(store: Path, top: Path, folder: str) -> dict[str, Any]:
    note = files.local_dir(store, "migrate") / "under-way"
    resumed = note.exists()
    if _head_format(top, folder) != 1:
        note.unlink(missing_ok=True)  # killed after its commit: the migration is done
        return {"store": str(store), "migrated": False, "commit": None, "moved": 0, "shards": 0,
                "message": f"nothing to migrate: {store} is a store of format {layout.FORMAT} already"}
    changed = [c["path"] for c in uncommitted(store) or []  # memory: a file of the store's own (a note is not)
               if layout.classify(c["path"]).kind != "other" and not (resumed and _ours(c["path"]))]
    if changed and not resumed:
        raise MemstackError.marked(
            "{store} holds uncommitted memory ({count}: {paths}): commit it first, then run"
            " `{verb:memstack migrate}`: the migration commits nothing but itself", store=store,
            count=plural(len(changed), "file"), paths=", ".join(changed[:5]) + (", …" if len(changed) > 5 else ""))
    files.write_atomic(note, b"format 1 -> 2\n")
    moved, shards = _write_shards(store, top, folder)
    for path in (layout.V1_LEDGER, *layout.V1_VIEWS):
        (store / path).unlink(missing_ok=True)
    files.crash_point()
    _attributes(store)
    settings = config.load(store)
    if config.store_format(settings.document) != layout.FORMAT:
        _set_format(settings.document)
        made_by = settings.document.get("memstack")
        if isinstance(made_by, dict) and made_by.get("version"):  # what the store's CI installs: one reading 2
            made_by["version"] = __version__
        settings.save()
    other = clonehooks.runs_another(store)
    if other is not None:  # the hooks that check the commit must read format 2: this memstack's, from now on
        install.install(store)
    head = git.out(top, "rev-parse", "HEAD").strip()
    paths = _derived(store, top, folder, head)
    commit = commits.commit_paths(top, folder, paths, MESSAGE + parent_trailer(head), REFUSED)
    note.unlink(missing_ok=True)
    ci = workflow_pin(top)
    return {"store": str(store), "migrated": True, "commit": commit, "moved": moved, "shards": shards,
            "resumed": resumed, "hooks_were": other, "uncommitted": changed, "ci_installs": ci,
            "message": f"migrated {store} to format {layout.FORMAT}: "
            f"{plural(moved, 'ledger line')} moved to {plural(shards, 'shard')}"
            + (f", in commit {commit[:12]}" if commit else "")
            + (f"; this clone's hooks and drivers ran {other}, now this memstack's ({sys.executable})" if other
               else "")
            + (f"; memory written since the interrupted run stays uncommitted ({plural(len(changed), 'file')})"
               if changed else "")
            + (f"; {ci[0]}: MEMSTACK_INSTALL installs {ci[1]!r}, a release that cannot check format 2: set it to"
               f" {ci[2]!r} in the push of this migration (docs/migrate.md)" if ci else "")}


REFUSED = "the migration commit was refused (the work tree holds the migration, not committed; fix what it says," \
          " then run `{verb:memstack migrate}` again)"


def _derived(store: Path, top: Path, folder: str, head: str) -> list[str]:
    """The views and boot files rebuilt from what the migration commits (HEAD's sources and the new ledger), not
    from the work tree: memory written since an interrupted run stays out of them as it stays out of the commit.
    Returns the paths of the commit (relative to the top)."""
    with pathcommit.PrivateIndex(top, head, git.commit_env(top)) as index, index.current():
        held = [line[len(folder):] for line in git.out(  # what the migration deletes or may delete, if HEAD has it
            top, "ls-files", "--", *(folder + path for path in (layout.V1_LEDGER, *layout.V1_VIEWS, ANCHORS))
        ).splitlines()]
        sources = [layout.CONFIG, ".gitattributes", *held, *_files(store, layout.LEDGER_DIR)]
        index.stage(folder + path for path in sources)
        with objects.CatFile(top) as blobs:  # GIT_INDEX_FILE: the private index
            rebuild_views(store, source=GitSource(top, blobs, None, folder))
        views = [path for view in VIEW_DIRS for path in _files(store, view)]
        index.stage(folder + path for path in views)  # the boot files read the views
        with objects.CatFile(top) as blobs:
            boot.rebuild(store, source=GitSource(top, blobs, None, folder))
    made = [path.name for path in store.glob(ANCHORS)] + [layout.WILLOW]
    return sorted({folder + path for path in (*sources, *views, *made)})


ANCHORS = "session_anchor_*.json"


def _files(store: Path, folder: str) -> list[str]:
    """The files under `folder` of the store (store-relative)."""
    return sorted(str(path.relative_to(store)) for path in (store / folder).rglob("*") if path.is_file())


def workflow_pin(top: Path) -> tuple[str, str, str] | None:
    """The store's CI workflow (the template's, at the top of the repository), what its MEMSTACK_INSTALL
    installs when that names a release other than this one (the workflow keeps installing it after the
    migration; empty, it installs `memstack.version`, which the migration names), and the same requirement
    naming this release; None otherwise."""
    path = top / WORKFLOW
    text = path.read_text(encoding="utf-8", errors="replace") if path.is_file() else ""
    found = re.search(r"^\s*MEMSTACK_INSTALL:\s*[\"']?([^\"'#\n]*?)[\"']?\s*(#.*)?$", text, re.MULTILINE)
    spec = found.group(1).strip() if found else ""
    named = re.findall(RELEASE, spec)  # a release pinned (`@v0.1.0`, `==0.1.0`, a wheel's name)
    return (WORKFLOW, spec, re.sub(RELEASE, __version__, spec)) if named and __version__ not in named else None


RELEASE = r"\d+\.\d+\.\d+"


WORKFLOW = ".github/workflows/memstack.yml"


def _attributes(store: Path) -> None:
    """The template's .gitattributes lines this store lacks (the drivers of format 2's files), added; every
    line it has is kept (I7)."""
    path = store / ".gitattributes"
    have = path.read_bytes() if path.exists() else b""
    present = {line.strip() for line in have.decode("utf-8", "replace").splitlines()}
    missing = [line for line in format_attributes() if line not in present]
    if missing:
        head = have if not have or have.endswith(b"\n") else have + b"\n"
        files.write_atomic(path, head + b"# Store format 2 (`memstack migrate`): its files' drivers.\n"
                           + "".join(f"{line}\n" for line in missing).encode())


def _set_format(document: Any) -> None:
    """`format: 2` right after `version:` (what follows `version:`, a blank line or a comment, follows it)."""
    keys = list(document)
    if "version" not in keys:
        document.insert(0, "format", layout.FORMAT)
        return
    document.insert(keys.index("version") + 1, "format", layout.FORMAT)
    comments = document.ca.items
    if "version" in comments:
        comments["format"] = comments.pop("version")


def _write_shards(store: Path, top: Path, folder: str) -> tuple[int, int]:
    """HEAD's old ledger, each line appended to its shard (those of an interrupted run removed first)."""
    shutil.rmtree(store / layout.LEDGER_DIR, ignore_errors=True)
    held: dict[str, list[bytes]] = {}
    size = moved = 0
    written: set[str] = set()
    # two cat-file processes: the ledger is streamed from one while the other looks up unbound ids
    with objects.CatFile(top, git.no_git_env()) as blobs, objects.CatFile(top, git.no_git_env()) as lookups:
        routing = Routing(GitSource(top, lookups, "HEAD", folder))
        for number, run in jsonio.line_runs(blobs.stream(f"HEAD:{folder}{layout.V1_LEDGER}")):
            for offset, line in enumerate(run.splitlines(keepends=True)):
                held.setdefault(routing.shard(line, number + offset), []).append(
                    line if line.endswith(b"\n") else line + b"\n")
                size += len(line)
                moved += 1
            if size >= BUFFER:
                written |= _flush(store, held)
                size = 0
    written |= _flush(store, held)
    return moved, len(written)


def _flush(store: Path, held: dict[str, list[bytes]]) -> set[str]:
    """Append what is held to each shard (no fsync: a killed run's shards are written again)."""
    for path, lines in held.items():
        target = store / path
        target.parent.mkdir(parents=True, exist_ok=True)
        files.refuse_symlinks(store, target)
        with target.open("ab") as handle:
            handle.write(b"".join(lines))
    files.crash_point()
    done = set(held)
    held.clear()
    return done
