"""`memstack pg status`: what the replica holds, against the clone's HEAD."""

from pathlib import Path
from typing import Any

from memstack.base.times import iso
from memstack.replica import db, lineage
from memstack.replica.tables import SCHEMA, TABLES, VERSION
from memstack.repo import git, objects


def status(root: Path | None, dsn: str) -> dict[str, Any]:
    """The synced commit, when and by which memstack, HEAD and how far behind it is, and the row counts."""
    document: dict[str, Any] = {"replica": db.describe(dsn), "synced": False, "commit": None, "synced_at": None,
                                "memstack_version": None, "head": None, "behind": None, "ahead": None,
                                "relation": "not synced",
                                "rows": {}}
    tree = ""
    conn = db.connect(dsn, "connect")
    try:
        with db.translated(dsn, "read the replica"), conn.transaction(), conn.cursor() as cur:
            cur.execute("SELECT to_regclass(%s)", (f"{SCHEMA}.sync_state",))
            if cur.fetchone()[0] is not None:
                cur.execute(f"SELECT commit, synced_ms, memstack_version, schema_version, tree"
                            f" FROM {SCHEMA}.sync_state")
                found = cur.fetchone()
                if found is not None and found[3] == VERSION:
                    tree = found[4]
                    document.update(synced=True, commit=found[0], synced_at=iso(found[1]),
                                    memstack_version=found[2])
                    for table in TABLES:
                        cur.execute(f"SELECT count(*) FROM {SCHEMA}.{table.name}")
                        document["rows"][table.name] = cur.fetchone()[0]
    finally:
        conn.close()
    if root is not None and git.has_commits(root):
        head = git.rev_parse(root, "HEAD")
        document["head"] = head
        if document["commit"] is not None and head is not None:
            document.update(_relation(root, (document["commit"], tree), head))
    return document


def _relation(root: Path, synced: tuple[str, str], head: str) -> dict[str, Any]:
    """Where the replica's commit (`synced`: commit, store's tree) stands against HEAD (lineage.py)."""
    commit = synced[0]
    if commit == head:
        return {"behind": 0, "relation": "current"}
    head_tree = git.rev_parse(root, f"{head}:./") or ""
    with objects.CatFile(root) as cat:
        if not lineage.known(root, commit):
            excised = head_tree and lineage.excised_from(cat, head_tree, commit) is not None
            return {"relation": lineage.EXCISED if excised else "unknown to this clone"}
        if git.is_ancestor(root, commit, head):
            return {"behind": _count(root, commit, head), "relation": "behind"}
        if git.is_ancestor(root, head, commit):
            # on a ref: another clone synced newer work (pull); in the reflog only: this clone rewound (followed)
            return {"ahead": _count(root, head, commit),
                    "relation": "ahead" if lineage.ahead_on(root, commit, head) else "rewound"}
        if head_tree and lineage.before_excise(root, cat, synced, (head, head_tree)) is not None:
            return {"relation": lineage.STALE}
    return {"relation": "diverged"}  # a rewritten history, or a clone on another branch


def _count(root: Path, older: str, newer: str) -> int:
    return int(git.out(root, "rev-list", "--count", f"{older}..{newer}").strip())


def render(document: dict[str, Any]) -> str:
    if not document["synced"]:
        return f"{document['replica']}: no memstack replica yet (run `memstack pg sync`)"
    lines = [f"replica   {document['replica']}",
             f"commit    {document['commit']} (synced {document['synced_at']} by memstack"
             f" {document['memstack_version']})"]
    if document["head"] is not None:
        where = {"current": "current",
                 "behind": f"behind: {document['behind']} commit(s) behind HEAD",
                 "ahead": f"ahead: {document['ahead']} commit(s) ahead of HEAD (pull to catch up)",
                 "rewound": f"rewound: {document['ahead']} commit(s) ahead of HEAD, which was rewound here"
                            " (`memstack pg sync` follows it)",
                 lineage.EXCISED: "excised: the history an excise in this clone rewrote (`memstack pg sync`"
                                  " follows it)",
                 lineage.STALE: f"stale: HEAD ({document['head'][:12]}) is from before an excise the replica's"
                                " commit holds (fetch, then `memstack sync`)"}.get(
            document["relation"], f"{document['relation']} (HEAD is {document['head'][:12]})")
        lines.append(f"status    {where}")
    lines.append("rows      " + ", ".join(f"{n} {t}" for t, n in document["rows"].items()))
    return "\n".join(lines)
