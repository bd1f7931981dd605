"""`memstack anchors check A..B`: the memory a code change makes stale, per changed file, for review and CI.

The change is the one a pull request shows: from the merge base of A and B to B (renames paired by git). Of
the records the store holds at B (its anchored open facts and pending intake records, with their latest
re-checks), only the anchors that point into a file the change touched are followed, at B; those that are
no longer fresh there (moved, drifted, orphaned) are the answer. Cost follows the change: one diff of the
range, one `git grep` of B's store for the files that hold anchors at all, and only the touched anchors
followed. A store that is a repository of its own (`code.repo`) is read from its work tree. A forgotten record
and a credential are shown as every read shows them (survey.py, base/shown.py)."""

from pathlib import Path
from typing import Any

from memstack.anchors.coderepo import code_repository
from memstack.anchors.follow import STATUSES, Follower
from memstack.anchors.records import anchored_at, anchored_facts, anchored_intake, latest, latest_of, rechecked
from memstack.anchors.survey import cache_file, item, load_cache
from memstack.base.errors import MemstackError
from memstack.base.shown import Shown
from memstack.repo import git
from memstack.repo.codetree import Change, CodeTree
from memstack.repo.store import Store, folder_of

CHANGES = {"A": "added", "M": "modified", "R": "renamed", "C": "copied", "D": "deleted", "T": "type changed"}

Record = tuple[str, dict[str, Any]]  # (kind, record)


def check(store: Store, spec: str, repo: str | None = None) -> dict[str, Any]:
    """`{"range", "base", "tip", "changed_files", "anchored_files", "stale", "files"}`: `files` holds each
    changed file some anchor pointed into whose anchors are stale at B, with the records made stale
    (`anchors`: only their anchors into that file); `stale` counts the records."""
    top = code_repository(store, repo)
    base, start, tip = git.range_ends(top, spec, env=git.no_git_env())
    tree = CodeTree(top, tip, store.root)
    try:
        changes = tree.changes(base or start)
        records = _records(store, top, tip, tree)
        touched = [(kind, record, [a for a in record["anchors"] if a["path"] in changes])
                   for kind, record in records]
        touched = [(kind, record, anchors) for kind, record, anchors in touched if anchors]
        follower = Follower(tree, tree.entries({a["path"] for _, _, anchors in touched for a in anchors}),
                            load_cache(cache_file(store)))
        shown = Shown.in_store(store.root)
        found = [item(kind, record, [follower.follow(a) for a in anchors], shown) for kind, record, anchors in touched]
    finally:
        tree.close()
    files: dict[str, list[dict[str, Any]]] = {}
    for record in found:
        for anchor in record["anchors"]:
            if anchor["status"] != "fresh":
                listed = files.setdefault(anchor["path"], [])
                if not listed or listed[-1]["id"] != record["id"]:
                    listed.append({**record, "anchors": []})
                listed[-1]["anchors"].append(anchor)
    for record in (r for records_of in files.values() for r in records_of):
        record["status"] = max((a["status"] for a in record["anchors"]), key=STATUSES.index)
    stale = {(r["kind"], r["id"]) for records_of in files.values() for r in records_of}
    return shown.redacted({
        "range": spec, "base": base or start, "tip": tip, "changed_files": len(set(changes.values())),
        "anchored_files": len({a["path"] for _, _, anchors in touched for a in anchors}), "stale": len(stale),
        "files": [{"path": path, **_change(changes[path]), "records": files[path]} for path in sorted(files)]})


def _change(change: Change) -> dict[str, Any]:
    """What the range did to a file: `change` (added, modified, renamed, deleted, ...) and, for a rename or
    a copy, `to`."""
    found: dict[str, Any] = {"change": CHANGES.get(change.status, change.status)}
    if change.status in "RC":
        found["to"] = change.new
    return found


def _records(store: Store, top: Path, tip: str, tree: CodeTree) -> list[Record]:
    """The anchored records of the store at commit `tip`: read from git when the store is a folder of the
    code repository, else (a repository of its own) from its files."""
    holder, folder = folder_of(store.root)
    if holder.resolve() == top:
        facts, intake, lines = anchored_at(top, tip, folder, tree.cat)
        checked = latest_of(lines)
    else:
        facts, intake = list(anchored_facts(store.root, None)), list(anchored_intake(store.root, None))
        checked = latest(store.root)
    return [("fact", rechecked(f, checked)) for f in facts] + [("intake", r) for r in intake]


def check_of_review(store: Store, spec: str) -> dict[str, Any] | None:
    """`check` for `memstack review A..B`, whose range names commits of the store's repository: None when
    those hold no code anchors point into (a store that is a repository of its own, or names another
    code repository)."""
    top, folder = folder_of(store.root)
    try:
        code = code_repository(store)
    except MemstackError:
        return None
    return check(store, spec) if folder and code == top.resolve() else None
