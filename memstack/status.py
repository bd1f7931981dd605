"""`memstack status`: where a store stands, from the cheapest signal for each question.

- pending intake per agent: each intake file's line count (a newline count, no JSON parsed)
  less the promotion-ledger lines that name that file (one pass over the ledger);
- Binder waiting: intake records routed to the Binder and not decided (the same ledger pass and
  `kb/binder.jsonl`), and disagreements between agents when the fact index is in step (an indexed
  query; with the index behind they are not counted, `binder list` counts them);
- stale derived files: the comparison `memstack rebuild --check` makes (promote.stale, O(store)),
  remembered in `.memstack/status-derived.json` under the stat signatures of every source and
  derived file, so it is made again only after one of them changed;
- uncommitted memory: `git status` of the store's folder;
- last promotion: the newest commit carrying promote's `Memstack-Routed:` trailer, and the last
  `promoted_at` of the ledger;
- the fact index: in step with the fact files or not, from stats alone (factindex.freshness).
"""

import hashlib
import os
from pathlib import Path
from typing import Any

import orjson

from memstack import binder, files, git, jsonio
from memstack.times import iso

CACHE = "status-derived.json"  # in .memstack/: the stale-file verdict and the signature it holds for
_SOURCES = ("kb", "intake", "handoffs")  # what the derived files are built from (and the views themselves)


def _ledger(store: Path) -> tuple[dict[str, int], set[str], int | None]:
    """One pass over the promotion ledger: routed lines per intake file (ratifications apart), the
    intake ids routed to the Binder, and the last promoted_at."""
    per_file: dict[str, int] = {}
    to_binder: set[str] = set()
    last = None
    path = store / binder.LEDGER
    data = path.read_bytes() if path.exists() else b""
    for line in jsonio.iter_jsonl(data, binder.LEDGER):
        if line.get("via") != "binder" and isinstance(line.get("file"), str):
            per_file[line["file"]] = per_file.get(line["file"], 0) + 1
        if line.get("sub_tier") == "binder" and isinstance(line.get("intake_id"), str):
            to_binder.add(line["intake_id"])
        if type(line.get("promoted_at")) is int:
            last = line["promoted_at"] if last is None else max(last, line["promoted_at"])
    return per_file, to_binder, last


def pending_intake(store: Path, per_file: dict[str, int]) -> dict[str, int]:
    """Intake records not yet routed, per agent (agents with none left out)."""
    found: dict[str, int] = {}
    root = store / "intake"
    for folder in sorted(p for p in root.glob("*") if p.is_dir()) if root.is_dir() else []:
        for path in sorted(folder.glob("*.jsonl")):
            lines = path.read_bytes().count(b"\n")
            left = lines - per_file.get(f"intake/{folder.name}/{path.name}", 0)
            if left > 0:
                found[folder.name] = found.get(folder.name, 0) + left
    return found


def binder_waiting(store: Path, to_binder: set[str], index_fresh: bool) -> dict[str, int | None]:
    decided = {d.get("intake_id") for d in binder.read_log(store, binder.DECISIONS)}
    disputes = None
    if index_fresh:
        from memstack import disputes as disputes_module

        disputes = len(disputes_module.waiting(store))
    return {"records": len(to_binder - decided), "disputes": disputes}


def _signature(store: Path) -> str:
    """A digest of the stats of every file the derived files are built from, and of the derived files."""
    entries = []
    for top in _SOURCES:
        for dirpath, dirnames, names in os.walk(store / top):
            dirnames.sort()
            for name in sorted(names):
                st = os.stat(os.path.join(dirpath, name))
                entries.append((os.path.relpath(os.path.join(dirpath, name), store), st.st_ino, st.st_size,
                                st.st_mtime_ns, st.st_ctime_ns))
    for path in sorted(store.glob("session_anchor_*.json")) + [store / "willow.md"]:
        if path.exists():
            st = path.stat()
            entries.append((path.name, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns))
    return hashlib.sha256(orjson.dumps(entries)).hexdigest()


def stale_derived(store: Path) -> tuple[list[str], bool]:
    """The derived files that differ from a rebuild, and whether that was remembered (no rebuild made)."""
    from memstack import promote

    cache = files.local_dir(store, "") / CACHE
    before = _signature(store)
    try:
        remembered = orjson.loads(cache.read_bytes())
        if remembered.get("signature") == before and isinstance(remembered.get("stale"), list):
            return list(remembered["stale"]), True
    except (FileNotFoundError, orjson.JSONDecodeError, AttributeError):
        pass
    stale = promote.stale(store)
    if _signature(store) == before:  # nothing changed while it was compared: worth remembering
        files.write_atomic(cache, orjson.dumps({"signature": before, "stale": stale}))
    return stale, False


def uncommitted(store: Path) -> list[dict[str, str]] | None:
    """The store's files git would commit (`git status`, untracked included); None outside a work tree."""
    from memstack.store import folder_of

    if not git.is_worktree(store):
        return None
    top, folder = folder_of(store)
    listed = git.run(top, "status", "--porcelain", "-z", "--untracked-files=all", "--", folder or ".",
                     env=git.no_git_env()).stdout.decode("utf-8", "surrogateescape")
    found = []
    entries = iter(listed.split("\0"))
    for entry in entries:
        if len(entry) < 4:
            continue
        code, path = entry[:2], entry[3:]
        if code[0] in "RC":
            next(entries, None)  # a rename's source path follows
        found.append({"path": path[len(folder):] if path.startswith(folder) else path, "status": code.strip()})
    return found


def last_promotion(store: Path, last_promoted_at: int | None) -> dict[str, Any] | None:
    """The newest promotion commit touching the store, and the ledger's last promoted_at."""
    from memstack.store import folder_of

    commit = None
    if git.is_worktree(store) and git.has_commits(store):
        top, folder = folder_of(store)
        line = git.run(top, "log", "-1", "-F", "--grep=Memstack-Routed: ", "--format=%H%x00%cI%x00%s", "--",
                       folder or ".", env=git.no_git_env()).stdout.decode().strip()
        if line:
            sha, when, subject = line.split("\0", 2)
            commit = {"commit": sha, "time": when, "subject": subject}
    if commit is None and last_promoted_at is None:
        return None
    return {**(commit or {"commit": None, "time": None, "subject": None}),
            "promoted_at": None if last_promoted_at is None else iso(last_promoted_at)}


def status(store: Path) -> dict[str, Any]:
    from memstack import factindex

    per_file, to_binder, last = _ledger(store)
    pending = pending_intake(store, per_file)
    index = factindex.freshness(store)
    stale, remembered = stale_derived(store)
    return {
        "store": str(store),
        "pending_intake": pending,
        "pending_total": sum(pending.values()),
        "binder_waiting": binder_waiting(store, to_binder, index["fresh"]),
        "stale": stale,
        "stale_remembered": remembered,
        "uncommitted": uncommitted(store),
        "last_promotion": last_promotion(store, last),
        "index": index,
    }
