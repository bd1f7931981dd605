"""`memstack status`: where a store stands, from the cheapest signal for each question.

- pending intake per agent: each intake file's line count (a newline count, no JSON parsed;
  remembered by the file's stat signature, and for a file that grew, only its new bytes
  counted) less the lines of its promotion-ledger shard (ratifications apart; each shard read
  only when its stat signature changed) and the forgotten records no line routes (promote passes them by);
- Binder waiting: intake records routed to the Binder, not decided and not forgotten (the same shards,
  `kb/binder.jsonl` and the tombstones), and disagreements between agents when the fact index is in step (an indexed
  query; with the index behind they are not counted, `binder list` counts them);
- stale derived files: the comparison `memstack rebuild --check` makes, of the view shards whose sources
  changed since the last commit whose views are known fresh (promote.stale, derived.fresh_base: O(change);
  every shard where no such commit is),
  remembered (in `.memstack/status.json`, with the counts above) under the stat signatures of every source and
  derived file, so it is made again only after one of them changed;
- uncommitted memory: `git status` of the store's folder;
- last promotion: the newest commit carrying promote's `Memstack-Routed:` trailer, and the last
  `promoted_at` of the ledger;
- the fact index: in step with the fact files or not, from stats alone (kb/index/build.freshness).
"""

import hashlib
import os
from pathlib import Path
from typing import Any

import orjson

from memstack.base import files, jsonio, layout, ledger, logfiles
from memstack.base.forgotten import StoreFiles, each_tombstone
from memstack.base.times import iso
from memstack.kb import disputes as disputes_module
from memstack.kb.index.build import freshness
from memstack.repo import git
from memstack.repo.store import folder_of
from memstack.workflows import promote

CACHE = "status.json"  # in .memstack/: what status remembers, each part with the signature it holds for
_SOURCES = ("kb", "intake", "handoffs")  # what the derived files are built from (and the views themselves)


def _stat(path: Path) -> list[int] | None:
    try:
        st = path.stat()
    except FileNotFoundError:
        return None
    return [st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns]


def _ledger(store: Path, memory: dict[str, Any]) -> tuple[dict[str, int], set[str], int | None]:
    """The ledger's routed lines per intake file, Binder-routed ids and last promoted_at: each shard
    read only when its stat signature changed since the last status (remembered per shard)."""
    kept = memory.get("ledger")
    before: dict[str, Any] = kept if isinstance(kept, dict) else {}
    now: dict[str, Any] = {}
    per_file: dict[str, int] = {}
    to_binder: set[str] = set()
    last = None
    for shard in ledger.shards(store):
        signature = _stat(store / shard)
        known = before.get(shard)
        if not (isinstance(known, dict) and known.get("signature") == signature):
            known = {"signature": signature, **_read_shard(store, shard)}
        now[shard] = known
        per_file[ledger.intake_file(shard)] = known["routed"]
        to_binder.update(known["to_binder"])
        if known["last"] is not None:
            last = known["last"] if last is None else max(last, known["last"])
    memory["ledger"] = now
    return per_file, to_binder, last


def _read_shard(store: Path, shard: str) -> dict[str, Any]:
    """One shard's routed lines (ratifications apart), the intake ids it routes to the Binder, and its
    last promoted_at."""
    counted: set[str] = set()  # a record two clones promoted differently has two lines: counted once
    to_binder: list[str] = []
    last = None
    data = (store / shard).read_bytes()
    for line in jsonio.iter_jsonl(data, shard):
        if line.get("via") != "binder" and isinstance(line.get("intake_id"), str):
            counted.add(line["intake_id"])
        if line.get("sub_tier") == "binder" and isinstance(line.get("intake_id"), str):
            to_binder.append(line["intake_id"])
        if type(line.get("promoted_at")) is int:
            last = line["promoted_at"] if last is None else max(last, line["promoted_at"])
    return {"routed": len(counted), "to_binder": to_binder, "last": last}


def _lines(path: Path, rel: str, counts: dict[str, Any]) -> int:
    """The file's line count, remembered in `counts` with its stat signature; an append-only file that
    grew (same inode, larger) has only its new bytes counted."""
    signature = _stat(path) or [0, 0, 0, 0]
    kept = counts.get(rel)
    if kept and kept[:4] == signature:
        return int(kept[4])
    if kept and kept[0] == signature[0] and signature[1] > kept[1]:
        with open(path, "rb") as handle:
            handle.seek(kept[1])
            count = kept[4] + handle.read().count(b"\n")
    else:
        count = path.read_bytes().count(b"\n")
    counts[rel] = [*signature, count]
    return count


def pending_intake(store: Path, per_file: dict[str, int], memory: dict[str, Any],
                   unrouted: dict[str, int]) -> dict[str, int]:
    """Intake records not yet routed, per agent (agents with none left out), less the forgotten ones no line
    routes (`unrouted`, by intake file)."""
    found: dict[str, int] = {}
    root = store / "intake"
    lines_before = memory.get("lines")
    before: dict[str, Any] = lines_before if isinstance(lines_before, dict) else {}
    counts: dict[str, Any] = {}
    for folder in sorted(p for p in root.glob("*") if p.is_dir()) if root.is_dir() else []:
        for path in sorted(folder.glob("*.jsonl")):
            rel = f"intake/{folder.name}/{path.name}"
            counts[rel] = before.get(rel)
            lines = _lines(path, rel, counts)
            left = lines - per_file.get(rel, 0) - unrouted.get(rel, 0)
            if left > 0:
                found[folder.name] = found.get(folder.name, 0) + left
    memory["lines"] = counts
    return found


def _forgotten_intake(store: Path) -> set[str]:
    """The ids of the intake records the store's tombstones forget (promote passes them by)."""
    return {t["forgets"] for t in each_tombstone(StoreFiles(store)) if t.get("kind") == "intake"}


def _unrouted(store: Path, forgotten: set[str]) -> dict[str, int]:
    """How many forgotten intake records each intake file holds that no ledger line routes: never pending."""
    by_file: dict[str, list[str]] = {}
    for intake_id in forgotten:
        for relpath in ledger.intake_files_of(store, intake_id)[:1]:
            by_file.setdefault(relpath, []).append(intake_id)
    found = {relpath: len(set(ids) - ledger.routed_ids(store, relpath)) for relpath, ids in by_file.items()}
    return {relpath: count for relpath, count in found.items() if count}  # each shard read once


def binder_waiting(store: Path, to_binder: set[str], index_fresh: bool, forgotten: set[str]) -> dict[str, int | None]:
    """The records routed to the Binder that wait for a decision (not decided, not forgotten), and the
    disagreements."""
    decided = {d.get("intake_id") for d in logfiles.read_log(store, layout.DECISIONS)} | forgotten
    disputes = None
    if index_fresh:

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


def stale_derived(store: Path, memory: dict[str, Any]) -> tuple[list[str], bool]:
    """The derived files that differ from a rebuild, and whether that was remembered (no rebuild made)."""

    before = _signature(store)
    kept = memory.get("derived")
    if isinstance(kept, dict) and kept.get("signature") == before and isinstance(kept.get("stale"), list):
        return list(kept["stale"]), True
    stale = promote.stale(store, changed_only=True)
    if _signature(store) == before:  # nothing changed while it was compared: worth remembering
        memory["derived"] = {"signature": before, "stale": stale}
    return stale, False


def _recall(store: Path) -> dict[str, Any]:
    try:
        memory = orjson.loads((files.local_dir(store, "") / CACHE).read_bytes())
    except (FileNotFoundError, NotADirectoryError, orjson.JSONDecodeError):
        return {}
    return memory if isinstance(memory, dict) else {}


def uncommitted(store: Path) -> list[dict[str, str]] | None:
    """The store's files git would commit (`git status`, untracked included); None outside a work tree."""

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

    memory = _recall(store)
    per_file, to_binder, last = _ledger(store, memory)
    forgotten = _forgotten_intake(store)
    pending = pending_intake(store, per_file, memory, _unrouted(store, forgotten))
    index = freshness(store)
    stale, remembered = stale_derived(store, memory)
    files.write_atomic(files.local_dir(store, "") / CACHE, orjson.dumps(memory))
    return {
        "store": str(store),
        "pending_intake": pending,
        "pending_total": sum(pending.values()),
        "binder_waiting": binder_waiting(store, to_binder, index["fresh"], forgotten),
        "stale": stale,
        "stale_remembered": remembered,
        "uncommitted": uncommitted(store),
        "last_promotion": last_promotion(store, last),
        "index": index,
    }
