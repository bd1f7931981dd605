"""What an excise would rewrite: the forgotten records not yet excised, the blobs T changes (with their new
bytes) and the commits whose ids change (docs/forgetting.md, "Excise")."""

from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import NoReturn

import orjson

from memstack.base import layout
from memstack.base.errors import bad
from memstack.base.forgotten import Forgotten, find
from memstack.base.reasons import repeated, repeats, texts_in
from memstack.integrity import excision
from memstack.integrity.excision import Excised, Marker
from memstack.repo import git
from memstack.repo.objects import CatFile
from memstack.repo.sources import GitSource


@dataclass
class Plan:
    heads: dict[str, str]  # refs/heads/<name> -> its commit, before
    records: list[str]  # what the tombstones forget that no receipt excised yet
    excised: Excised = field(default_factory=Excised)
    blobs: dict[str, bytes] = field(default_factory=dict)  # old blob id -> T of it
    paths: dict[str, int] = field(default_factory=dict)  # store-relative path -> blobs T changes there
    commits: set[str] = field(default_factory=set)  # the commits whose id the rewrite changes


def branch_heads(top: Path) -> dict[str, str]:
    data = git.run(top, "for-each-ref", "--format=%(objectname) %(refname)", "refs/heads/").stdout.decode()
    return {ref: sha for sha, ref in (line.split(" ", 1) for line in data.splitlines() if line)}


def receipts(source: GitSource) -> list[dict[str, object]]:
    """The erasure receipts of a commit's kb/erasures.jsonl, in order."""
    found = []
    for line in (source.read(layout.ERASURES_LOG) or b"").splitlines():
        try:
            receipt = orjson.loads(line)
        except orjson.JSONDecodeError:
            continue
        if isinstance(receipt, dict):
            found.append(receipt)
    return found


def pending_records(sources: list[GitSource]) -> list[str]:
    """Every record a branch head forgets (a tombstone names it, or it is a fact promoted from a record one names:
    base/forgotten.py) and no receipt of any head excised, in order."""
    done = {r for source in sources for receipt in receipts(source)
            for r in (receipt.get("records") or []) if isinstance(r, str)}  # type: ignore[attr-defined]
    names: dict[str, None] = {}
    for source in sources:
        for record_id in Forgotten.of(source).by_id:
            if record_id not in done:
                names.setdefault(record_id, None)
    return list(names)


def _changes(top: Path, heads: list[str], folder: str) -> Iterator[tuple[str, str, str]]:
    """(commit, store-relative path, new blob) of every file a commit of `heads`' history adds or changes
    (merges against each parent), inside the store's folder."""
    out = git.run(top, "log", *heads, "--root", "-m", "--raw", "--no-abbrev", "--no-renames", "-z",
                  "--format=@%H", "--", folder or ".").stdout
    tokens = iter(out.split(b"\0"))
    commit = ""
    for token in tokens:
        token = token.strip(b"\n")
        if token.startswith(b"@"):
            commit = token[1:].decode()
        elif token.startswith(b":"):
            blob = token.split()[3].decode()
            path = git.decode_path(next(tokens, b""))
            if path.startswith(folder) and not git.is_zero(blob):
                yield commit, path[len(folder):], blob


def _refuse_repeating(record: str) -> NoReturn:
    raise bad("--reason", None, "it repeats the content of a record it excises ({record}), and the receipt keeps it"
              " in history: say why without it (nothing was changed)", record=record)


def plan(top: Path, folder: str, mark: Marker, records: list[str] | None = None, reason: str | None = None) -> Plan:
    """The plan of an excise of `records` (default: every forgotten record not yet excised); with `reason` (the
    receipt's), refused if it repeats what a record excised said, in any version the rewrite changes."""
    heads = branch_heads(top)
    with CatFile(top) as cat:
        sources = [GitSource(top, cat, sha, folder) for sha in heads.values()]
        found = Plan(heads, pending_records(sources) if records is None else records)
        if not found.records:
            return found
        for record in found.records if reason is not None else ():
            for source in sources:
                where = find(source, record)
                if where is not None and repeats(source, *where, record, reason):  # type: ignore[arg-type]
                    _refuse_repeating(record)
        found.excised = excision.gather(sources, found.records)  # type: ignore[arg-type]
        touched: set[str] = set()
        seen: dict[str, bool] = {}
        for commit, path, blob in _changes(top, list(heads.values()), folder):
            if blob not in seen:
                data = cat.read(blob) if found.excised.may_change(path) else None
                if reason is not None and data is not None and path in found.excised.soil \
                        and repeated(texts_in("soil", data, ""), reason):  # a SOIL record's older values too
                    _refuse_repeating(path.removeprefix("store/").removesuffix(".json"))
                new = None if data is None else excision.transform(path, data, found.excised, mark)
                seen[blob] = new is not None
                if new is not None:
                    found.blobs[blob] = new
                    found.paths[path] = found.paths.get(path, 0) + 1
            if seen[blob]:
                touched.add(commit)
    found.commits = _descendants(top, list(heads.values()), touched)
    return found


def _descendants(top: Path, heads: list[str], touched: set[str]) -> set[str]:
    """The commits of `heads`' history that are in `touched` or have an ancestor there (their ids change)."""
    if not touched:
        return set()
    listed = git.run(top, "rev-list", "--parents", "--topo-order", "--reverse", *heads).stdout.decode()
    changed: set[str] = set()
    for line in listed.splitlines():
        sha, *parents = line.split()
        if sha in touched or any(p in changed for p in parents):
            changed.add(sha)
    return changed
