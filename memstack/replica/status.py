"""`memstack pg status`: what the replica holds, against the clone's HEAD."""

from pathlib import Path
from typing import Any

from memstack.base.times import iso
from memstack.replica import db, replicate
from memstack.replica.tables import SCHEMA, TABLES, VERSION
from memstack.repo import git


def status(root: Path | None, dsn: str) -> dict[str, Any]:
    """The synced commit, when and by which memstack, HEAD and how far behind it is, and the row counts."""
    document: dict[str, Any] = {"replica": db.describe(dsn), "synced": False, "commit": None, "synced_at": None,
                                "memstack_version": None, "head": None, "behind": None, "ahead": None,
                                "relation": "not synced",
                                "rows": {}}
    conn = db.connect(dsn, "connect")
    try:
        with db.translated(dsn, "read the replica"), conn.transaction(), conn.cursor() as cur:
            cur.execute("SELECT to_regclass(%s)", (f"{SCHEMA}.sync_state",))
            if cur.fetchone()[0] is not None:
                cur.execute(f"SELECT commit, synced_ms, memstack_version, schema_version FROM {SCHEMA}.sync_state")
                found = cur.fetchone()
                if found is not None and found[3] == VERSION:

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
        synced = document["commit"]
        if synced is None:
            pass
        elif synced == head:
            document.update(behind=0, relation="current")
        elif git.rev_parse(root, f"{synced}^{{commit}}") is None:
            document["relation"] = "unknown to this clone"
        elif head is not None and git.is_ancestor(root, synced, head):
            count = git.out(root, "rev-list", "--count", f"{synced}..{head}").strip()
            document.update(behind=int(count), relation="behind")
        elif head is not None and git.is_ancestor(root, head, synced):
            count = git.out(root, "rev-list", "--count", f"{head}..{synced}").strip()
            # on a ref: another clone synced newer work (pull); in the reflog only: this clone rewound (followed)
            document.update(ahead=int(count), relation="ahead" if replicate.behind(root, synced, head) else "rewound")
        else:
            document["relation"] = "diverged"  # a rewritten history, or a clone on another branch
    return document


def render(document: dict[str, Any]) -> str:
    if not document["synced"]:
        return f"{document['replica']}: no memstack replica yet (run `memstack pg sync`)"
    lines = [f"replica   {document['replica']}",
             f"commit    {document['commit']} (synced {document['synced_at']} by memstack"
             f" {document['memstack_version']})"]
    if document["head"] is not None:
        where = {"current": "HEAD", "behind": f"{document['behind']} commit(s) behind HEAD",
                 "ahead": f"{document['ahead']} commit(s) ahead of HEAD (pull to catch up)",
                 "rewound": f"{document['ahead']} commit(s) ahead of HEAD, which was rewound here (`memstack pg"
                            " sync` follows it)"}.get(
            document["relation"], f"{document['relation']} (HEAD is {document['head'][:12]})")
        lines.append(f"status    {where}")
    lines.append("rows      " + ", ".join(f"{n} {t}" for t, n in document["rows"].items()))
    return "\n".join(lines)
