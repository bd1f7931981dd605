"""`memstack anchors`: every open fact and pending intake record that carries code anchors, each anchor
followed into the work tree or a revision (follow.py). Cost follows the code that changed: an anchor whose
file still has the anchored blob is fresh without reading it, and where a file changed, what was found in
its new blob is kept in `.memstack/anchors/followed.json`, so the next run reads only files changed since."""

from collections.abc import Iterator
from pathlib import Path
from typing import Any

from memstack.anchors.coderepo import code_repository
from memstack.anchors.follow import STATUSES, Follower
from memstack.base import files, jsonio
from memstack.base.errors import MemstackError, bad
from memstack.kb import factfiles, facts
from memstack.repo import git
from memstack.repo.codetree import CodeTree
from memstack.repo.store import Store

KEY = b'"anchors"'
CACHE = "followed.json"


def anchored_facts(store: Path, subject: str | None) -> Iterator[dict[str, Any]]:
    """The open facts with anchors (of `subject`), in the files' order."""
    for _, _, fact in factfiles.scan_for(store, ["anchors"]):
        if fact.get("anchors") and facts.is_open(fact) and (subject is None or fact["subject"] == subject):
            yield fact


def anchored_intake(store: Path, subject: str | None) -> Iterator[dict[str, Any]]:
    """The pending intake records with anchors (of `subject`), oldest first; only the day files that hold
    anchors at all are read."""
    from memstack.intake import log as intake  # deferred: only when intake is read

    holding = git.files_holding(store, "intake", [KEY])
    records = []
    done: set[str] | None = None
    for path in sorted((store / "intake").glob("*/*.jsonl")):
        relpath = path.relative_to(store).as_posix()
        if holding is not None and relpath not in holding:
            continue
        for line in path.read_bytes().splitlines():
            if KEY not in line:
                continue
            record = jsonio.loads(line, relpath)
            if not isinstance(record, dict) or not record.get("anchors"):
                continue
            if subject is not None and record.get("subject") != subject:
                continue
            done = intake.promoted_ids(store) if done is None else done
            if record.get("id") not in done:
                records.append(record)
    records.sort(key=lambda r: (r["created_at"], r["id"]))
    yield from records


def item(kind: str, record: dict[str, Any], followed: list[dict[str, Any]]) -> dict[str, Any]:
    worst = max((STATUSES.index(a["status"]) for a in followed), default=0)
    about: dict[str, Any] = {k: record[k] for k in ("subject", "predicate", "object") if k in record}
    if kind == "intake":
        about["title"] = record.get("title") or record["content"].splitlines()[0][:80]
    return {"kind": kind, "id": record["id"], **about, "agent": record.get("agent"), "status": STATUSES[worst],
            "anchors": followed}


def survey(store: Store, *, rev: str | None = None, repo: str | None = None, subject: str | None = None,
           status: str | None = None) -> list[dict[str, Any]]:
    """Every anchored open fact, then every anchored pending intake record, each with its anchors followed
    and its status (its worst anchor's); `status`: only records of that status."""
    if status is not None and status not in STATUSES:
        raise bad("--status", repr(status), "must be one of {statuses}", statuses=", ".join(STATUSES))
    records = [("fact", f) for f in anchored_facts(store.root, subject)]
    records += [("intake", r) for r in anchored_intake(store.root, subject)]
    if not records:
        if rev is not None or repo is not None:
            CodeTree(code_repository(store, repo), rev).close()  # a bad --rev or --repo is still said
        return []
    tree = CodeTree(code_repository(store, repo), rev)
    cache_path = files.local_dir(store.root, "anchors") / CACHE
    known = _load(cache_path)
    try:
        paths = {a["path"] for _, record in records for a in record["anchors"]}
        follower = Follower(tree, tree.entries(paths), known)
        found = [item(kind, record, [follower.follow(a) for a in record["anchors"]]) for kind, record in records]
    finally:
        tree.close()
    if follower.learned != known:
        files.write_atomic(cache_path, jsonio.dumps_line(follower.learned))
    return [i for i in found if status is None or i["status"] == status]


def _load(path: Path) -> dict[str, Any]:
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
