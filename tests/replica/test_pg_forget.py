"""The PostgreSQL replica holds no forgotten content: after `memstack forget` is committed, `pg sync`
leaves every forgotten row as the read verbs show it, and `--pg` answers as the files do."""

import json
import uuid
from pathlib import Path

import psycopg

from helpers import git, memstack, ok
from memstack.replica.tables import SCHEMA, TABLES
from pgcluster import Cluster

DAY = "2026-03-02T10:00:00Z"
GONE = "[forgotten: a phone number]"


def commit(store: Path) -> None:
    git(store, "add", "-A")
    done = git(store, "commit", "-q", "-m", "memory", check=False)
    assert done.returncode == 0, done.stdout + done.stderr


def holding(dsn: str, text: str) -> list[str]:
    """The replica's rows (as text, every column) that hold `text`."""
    found = []
    with psycopg.connect(dsn) as conn:
        for table in TABLES:
            for (row,) in conn.execute(f"SELECT t::text FROM {SCHEMA}.{table.name} t"):
                if text in row:
                    found.append(f"{table.name}: {row}")
    return found


def test_the_replica_holds_no_forgotten_content_and_answers_as_the_files(store: Path, pg_dsn: str) -> None:
    record = ok(store, "intake", "write", "--content", "Ada's phone is 555-0199", "--subject", "ada",
                "--predicate", "prefers", "--object", "phone 555-0199", "--tier", "verified", "--confidence",
                "0.9", "--created-at", DAY)["record"]
    commit(store)
    assert memstack("promote", "--now-ts", DAY, cwd=store).returncode == 0
    assert ok(store, "pg", "sync", pg_dsn)["mode"] == "full"
    assert len(holding(pg_dsn, "555-0199")) == 2  # the intake row and the fact row
    ok(store, "forget", record["id"], "--reason", "a phone number")
    assert ok(store, "pg", "sync", pg_dsn)["mode"] == "unchanged"  # not committed: not replicated yet
    commit(store)
    ok(store, "pg", "sync", pg_dsn)
    assert holding(pg_dsn, "555-0199") == []
    assert len(holding(pg_dsn, GONE)) == 2
    from_files = ok(store, "fact", "get-valid-at", "--ts", DAY)
    assert from_files["items"][0]["object"] == GONE
    assert ok(store, "fact", "get-valid-at", "--ts", DAY, "--pg", pg_dsn) == from_files
    for subject in ("ada", GONE):  # neither what was forgotten nor the marker shown in its place finds it
        for args in (["recall", "--subject", subject, "--now-ts", DAY], ["fact", "history", "--subject", subject],
                     ["fact", "get-valid-at", "--ts", DAY, "--subject", subject]):
            assert ok(store, *args)["items"] == [] and ok(store, *args, "--pg", pg_dsn) == ok(store, *args), args
    git(store, "commit", "-q", "--allow-empty", "-m", "later")
    ok(store, "pg", "sync", pg_dsn)  # an incremental sync keeps them forgotten
    assert holding(pg_dsn, "555-0199") == []


def lines(dsn: str) -> dict[str, list[tuple[str, int, str]]]:
    """Every row of the replica as (path, line_no, line), by table."""
    with psycopg.connect(dsn) as conn:
        return {t.name: [tuple(r) for r in conn.execute(  # type: ignore[misc]
            f"SELECT path, line_no, line FROM {SCHEMA}.{t.name} ORDER BY path, line_no")] for t in TABLES}


def files(store: Path) -> dict[str, list[tuple[str, int, str]]]:
    """What the replica must hold: every committed line of the memory files at HEAD."""
    from memstack.base import layout
    from memstack.replica.tables import BY_KIND

    found: dict[str, list[tuple[str, int, str]]] = {t.name: [] for t in TABLES}
    for path in git(store, "ls-tree", "-r", "--name-only", "HEAD").stdout.split():
        table = BY_KIND.get(layout.classify(path).kind)
        if table is not None:
            data = git(store, "cat-file", "blob", f"HEAD:{path}").stdout
            found[table.name] += [(path, n, line) for n, line in enumerate(data.split("\n")[:-1], start=1)]
    return {name: sorted(rows) for name, rows in found.items()}


def same_answers(store: Path, dsn: str, subject: str, instants: list[str]) -> None:
    """Every read verb answers from the replica as from the files."""
    verbs = [["fact", "history", "--subject", subject]]
    for ts in instants:
        verbs += [["fact", "get-valid-at", "--ts", ts], ["fact", "get-valid-at", "--ts", ts, "--subject", subject],
                  ["fact", "get-valid-at", "--ts", ts, "--as-of", ts], ["recall", "--subject", subject, "--now-ts", ts]]
    for args in verbs:
        assert ok(store, *args, "--pg", dsn) == ok(store, *args), args


def test_a_forget_undone_by_a_history_rewrite_gives_the_fact_back_to_the_replica(store: Path, pg_dsn: str) -> None:
    """The tombstone is the commit's only change: resetting it away changes no memory file, yet the fact's
    rows must show it again."""
    first = ok(store, "capture", "--subject", "proj", "--predicate", "decided", "--object", "use rust",
               "--valid-from", "2026-01-01T00:00:00")
    ok(store, "capture", "--subject", "proj", "--predicate", "decided", "--object", "use go", "--valid-from",
       "2026-02-01T00:00:00", "--contradicts")
    commit(store)
    ok(store, "forget", first[0]["id"], "--reason", "secret")
    commit(store)
    ok(store, "pg", "sync", pg_dsn)
    instants = ["2026-01-15T00:00:00Z", "2026-03-01T00:00:00Z"]
    assert ok(store, "fact", "get-valid-at", "--ts", instants[0], "--pg", pg_dsn)["items"][0]["object"] \
        == "[forgotten: secret]"
    git(store, "reset", "-q", "--hard", "HEAD~1")  # the forget undone
    report = ok(store, "pg", "sync", pg_dsn)
    assert (report["mode"], report["files"], report["restored"]) == ("incremental", 0, 1)
    assert ok(store, "pg", "status", pg_dsn)["relation"] == "current"
    assert ok(store, "fact", "get-valid-at", "--ts", instants[0], "--pg", pg_dsn)["items"][0]["object"] == "use rust"
    assert lines(pg_dsn) == files(store)  # nothing forgotten any more: every row is the committed line
    same_answers(store, pg_dsn, "proj", instants)
    assert holding(pg_dsn, "[forgotten: ") == []


def test_a_forget_undone_gives_back_an_intake_record_and_the_fact_promoted_from_it(store: Path,
                                                                                   pg_dsn: str) -> None:
    """bob's intake record, promoted, then forgotten by alice: the reset leaves bob's files as they were."""
    record = ok(store, "intake", "write", "--agent", "bob", "--content", "Ada's phone is 555-0199", "--subject",
                "ada", "--predicate", "prefers", "--object", "phone 555-0199", "--tier", "verified",
                "--confidence", "0.9", "--created-at", DAY)["record"]
    commit(store)
    assert memstack("promote", "--now-ts", DAY, cwd=store).returncode == 0
    ok(store, "forget", record["id"], "--reason", "a phone number")
    commit(store)
    ok(store, "pg", "sync", pg_dsn)
    assert len(holding(pg_dsn, GONE)) == 2 and holding(pg_dsn, "555-0199") == []
    git(store, "reset", "-q", "--hard", "HEAD~1")  # the forget undone
    synced = memstack("pg", "sync", pg_dsn, cwd=store)
    assert synced.returncode == 0 and "gave back 1 row(s) no longer forgotten" in synced.stdout, synced.stdout
    assert ok(store, "pg", "status", pg_dsn)["relation"] == "current"
    assert holding(pg_dsn, GONE) == []
    assert len(holding(pg_dsn, "555-0199")) == 2  # the intake row and the fact row, as the files hold them
    assert lines(pg_dsn) == files(store)
    same_answers(store, pg_dsn, "ada", [DAY, "2026-03-03T00:00:00Z"])
    ok(store, "forget", record["id"], "--reason", "a phone number")  # forgotten again: masked again
    commit(store)
    ok(store, "pg", "sync", pg_dsn)
    assert holding(pg_dsn, "555-0199") == [] and len(holding(pg_dsn, GONE)) == 2
    same_answers(store, pg_dsn, "ada", [DAY])


def test_a_fact_promoted_on_another_branch_while_its_record_was_forgotten_is_no_row_of_the_replica(
        store: Path, pg_dsn: str) -> None:
    """One branch forgets the pending record, another promotes it, a merge brings both: no tombstone names the
    fact, the record's does (base/forgotten.py). The fact stays open until `memstack sync` closes it."""
    record = ok(store, "intake", "write", "--content", "Ada's phone is 555-0199", "--subject", "ada", "--predicate",
                "prefers", "--object", "phone 555-0199", "--tier", "verified", "--confidence", "0.9",
                "--created-at", DAY)["record"]
    commit(store)
    git(store, "branch", "promoted")
    ok(store, "forget", record["id"], "--reason", "a phone number")
    commit(store)
    git(store, "checkout", "-q", "promoted")
    assert memstack("promote", "--now-ts", DAY, cwd=store).returncode == 0
    git(store, "checkout", "-q", "main")
    merged = git(store, "merge", "-q", "--no-edit", "promoted", check=False)
    assert merged.returncode == 0, merged.stdout + merged.stderr
    [fact] = [json.loads(line) for line in (store / "kb/facts/alice/2026-03.jsonl").read_text().splitlines()]
    assert fact["valid_to"] is None  # open: no forget saw it
    ok(store, "pg", "sync", pg_dsn)
    assert holding(pg_dsn, "555-0199") == [] and len(holding(pg_dsn, GONE)) == 2  # the record's row, the fact's
    same_answers(store, pg_dsn, "ada", [DAY, "2026-03-03T00:00:00Z"])


def test_every_page_of_a_listing_holding_a_forgotten_fact_is_the_same_from_the_replica(store: Path,
                                                                                       pg_dsn: str) -> None:
    """`fact get-valid-at` of every subject places a forgotten fact by its marker, from the files as from the
    replica (which holds nothing else of it): every page and cursor alike, before an excise and after it."""
    for subject in ("zed-secret-name", "alpha", "mid", "zzz-last"):
        ok(store, "fact", "add", "--subject", subject, "--predicate", "decided", "--object", "x",
           "--valid-from", DAY, "--recorded-at", DAY)
    commit(store)
    [fact] = ok(store, "fact", "history", "--subject", "zed-secret-name")["items"]
    ok(store, "forget", fact["id"], "--reason", "erasure request")
    commit(store)

    def same_pages() -> None:
        for limit in ("1", "2", "3", "4"):
            for extra in ([], ["--as-of", DAY]):
                cursor: str | None = ""
                while cursor is not None:
                    args = ["fact", "get-valid-at", "--ts", DAY, "--limit", limit, *extra,
                            *(["--cursor", cursor] if cursor else [])]
                    page = ok(store, *args)
                    assert ok(store, *args, "--pg", pg_dsn) == page, args
                    assert "zed-secret" not in json.dumps(page), args
                    cursor = page["next_cursor"]
        whole = ok(store, "fact", "get-valid-at", "--ts", DAY)
        assert whole == ok(store, "fact", "get-valid-at", "--ts", DAY, "--pg", pg_dsn)
        assert whole["items"][0]["subject"] == "[forgotten: erasure request]"

    ok(store, "pg", "sync", pg_dsn)
    same_pages()
    assert memstack("excise", "--reason", "an erasure request", cwd=store).returncode == 0
    ok(store, "pg", "sync", pg_dsn, "--force")
    same_pages()


def on_disk(cluster: Cluster, text: str) -> list[str]:
    """The server's files (its databases' table and index files, its WAL) holding `text`, after a checkpoint."""
    cluster.sql("CHECKPOINT")
    data = cluster.dir / "data"
    return [str(p.relative_to(data)) for folder in ("base", "pg_wal") for p in sorted((data / folder).rglob("*"))
            if p.is_file() and text.encode() in p.read_bytes()]


def test_a_record_forgotten_before_its_first_sync_never_reaches_the_servers_disk(
        store: Path, pg_cluster: Cluster) -> None:
    """Its line is copied in as the reads show it, not copied whole and masked after (which leaves the old row
    version in the table's file and in WAL until VACUUM FULL, docs/forgetting.md)."""
    secret = f"phone 555-{uuid.uuid4().hex[:12]}"  # nothing else the cluster ever held
    captured = ok(store, "capture", "--subject", "ada", "--predicate", "prefers", "--object", secret)
    commit(store)
    ok(store, "forget", captured[0]["id"], "--reason", "a phone number")
    commit(store)
    dsn = pg_cluster.new_database()
    assert ok(store, "pg", "sync", dsn)["mode"] == "full"
    assert holding(dsn, secret) == [] and len(holding(dsn, GONE)) == 1
    assert on_disk(pg_cluster, secret) == []
    when = str(captured[0]["valid_from"])
    from_files = ok(store, "fact", "get-valid-at", "--ts", when)
    assert from_files["items"][0]["object"] == GONE
    assert ok(store, "fact", "get-valid-at", "--ts", when, "--pg", dsn) == from_files
