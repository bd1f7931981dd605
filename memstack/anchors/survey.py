"""`memstack anchors`: every open fact and pending intake record that carries code anchors, each anchor
followed into the work tree or a revision (follow.py). Cost follows the code that changed: an anchor whose
file still has the anchored blob is fresh without reading it, and where a file changed, what was found in
its new blob is kept in `.memstack/anchors/followed.json`, so the next run reads only files changed since.

What it shows is what every read shows (docs/forgetting.md): a forgotten record `[forgotten: reason]`, with
the old lines of its drifted anchors (what it knew of the code) hidden too, and not listed at all when asked
for by its subject; a credential in a record or in a code line `[redacted: kind]` (base/shown.py)."""

from pathlib import Path
from typing import Any

from memstack.anchors.coderepo import code_repository
from memstack.anchors.follow import STATUSES, Follower, worst
from memstack.anchors.records import anchored_facts, anchored_intake, latest, rechecked
from memstack.base import files, jsonio
from memstack.base.errors import MemstackError, bad
from memstack.base.forgotten import marker
from memstack.base.shown import Shown
from memstack.repo.codetree import CodeTree
from memstack.repo.store import Store

CACHE = "followed.json"


def item(kind: str, record: dict[str, Any], followed: list[dict[str, Any]], shown: Shown) -> dict[str, Any]:
    """One record with its anchors followed, as a read shows it (forgotten: its content and the old lines of
    its drifted anchors gone; the caller redacts credentials, a page at once: `Shown.redacted_where`)."""
    reason = shown.hides(record["id"])
    if reason is not None:
        record = shown.forgotten.mask(record)
        followed = [{**a, "old_lines": [marker(reason)]} if a.get("old_lines") else a for a in followed]
    found: dict[str, Any] = {"kind": kind, "id": record["id"], "agent": record.get("agent"),
                             "status": worst(followed), "anchors": followed}
    for key in ("subject", "predicate", "object"):
        if key in record:
            found[key] = record[key]
    if kind == "intake":
        found["title"] = record.get("title") or record["content"].splitlines()[0][:80]
    if "reverified" in record:  # followed from where `anchors reverify` took them again
        found["reverified"] = {k: record["reverified"][k] for k in ("by", "decided_at")}
    return found


def texts(found: dict[str, Any]) -> list[Any]:
    """What of a listed record can hold a credential (`Shown.redacted_where`): its content fields and the
    code lines of its drifted anchors."""
    return [found.get("subject"), found.get("predicate"), found.get("object"), found.get("title"),
            [(a.get("old_lines"), a.get("new_lines")) for a in found["anchors"] if "new_lines" in a]]


def survey(store: Store, *, rev: str | None = None, repo: str | None = None, subject: str | None = None,
           status: str | None = None) -> list[dict[str, Any]]:
    """Every anchored open fact, then every anchored pending intake record, each with its anchors followed
    and its status (its worst anchor's); `status`: only records of that status."""
    if status is not None and status not in STATUSES:
        raise bad("--status", repr(status), "must be one of {statuses}", statuses=", ".join(STATUSES))
    checked, shown = latest(store.root), Shown.in_store(store.root)
    records = [("fact", rechecked(f, checked)) for f in anchored_facts(store.root, subject)]
    records += [("intake", r) for r in anchored_intake(store.root, subject)]
    if subject is not None and shown.forgotten:  # a forgotten record's subject is gone with its content
        records = [(kind, record) for kind, record in records if record["id"] not in shown]
    if not records:
        if rev is not None or repo is not None:
            CodeTree(code_repository(store, repo), rev).close()  # a bad --rev or --repo is still said
        return []
    tree = CodeTree(code_repository(store, repo), rev, store.root)
    cache_path = cache_file(store)
    known = load_cache(cache_path)
    try:
        paths = {a["path"] for _, record in records for a in record["anchors"]}
        follower = Follower(tree, tree.entries(paths), known)
        found = [item(kind, record, [follower.follow(a) for a in record["anchors"]], shown)
                 for kind, record in records]
    finally:
        tree.close()
    if follower.learned != known:
        files.write_atomic(cache_path, jsonio.dumps_line(follower.learned))
    return [i for i in found if status is None or i["status"] == status]


def cache_file(store: Store) -> Path:
    return files.local_dir(store.root, "anchors") / CACHE


def load_cache(path: Path) -> dict[str, Any]:
    """What earlier runs found of anchors in changed files (`Follower`'s `known`); {} when there is none."""
    try:
        found = jsonio.loads(path.read_bytes(), str(path))
    except (OSError, MemstackError):  # a cache: a missing or broken one is rebuilt, never an error
        return {}
    return found if isinstance(found, dict) else {}


def counts(store: Store) -> dict[str, int] | None:
    """How many anchored records are of each status now (`memstack status`); None when records carry
    anchors but no code repository is named (a standalone store without `code.repo`)."""
    found = dict.fromkeys(STATUSES, 0)
    try:
        for record in survey(store):
            found[record["status"]] += 1
    except MemstackError:
        return None
    return found
