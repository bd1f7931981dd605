"""`memstack pg sync` / `pg status` against a real PostgreSQL started by the tests (tests/pgcluster.py).

The replica must hold exactly the committed memory at HEAD: every line of every
fact, intake, promotion and Binder file, as a row at its path and line number.
"""

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from helpers import MEMSTACK, copied_to, git, items, made_from, memstack
from memstack.base import layout
from memstack.replica.tables import BY_KIND, TABLES
from memstack.repo import objects
from pgcluster import Cluster, new_cluster

JAN = "2026-01-01T00:00:00Z"


def ok(*args: str, cwd: Path, env: dict[str, str] | None = None) -> Any:
    result = memstack(*args, "--json", cwd=cwd, env=env)
    assert result.returncode == 0, result.stderr
    document = json.loads(result.stdout)
    return items(document) if args[:2] in (("fact", "get-valid-at"), ("fact", "history")) else document


def refused(*args: str, cwd: Path) -> str:
    result = memstack(*args, cwd=cwd)
    assert result.returncode == 2, (result.stdout, result.stderr)
    message = result.stderr.strip()
    assert "\n" not in message and "Traceback" not in message, message
    assert message.startswith("memstack: ")
    return message


def commit(store: Path, message: str = "memory") -> str:
    git(store, "add", "-A")
    git(store, "commit", "-q", "-m", message)  # through the installed pre-commit hook
    return git(store, "rev-parse", "HEAD").stdout.strip()


def committed(store: Path, rev: str = "HEAD") -> dict[str, list[tuple[str, int, str]]]:
    """What the replica must hold for `rev`: (path, line, text) of every memory file's complete lines."""
    prefix = git(store, "rev-parse", "--show-prefix").stdout.strip()
    paths = git(store, "ls-tree", "-r", "--name-only", "-z", f"{rev}:{prefix}").stdout.split("\0")
    found: dict[str, list[tuple[str, int, str]]] = {t.name: [] for t in TABLES}
    with objects.CatFile(store) as cat:
        for path in filter(None, paths):
            table = BY_KIND.get(layout.classify(path).kind)
            if table is None:
                continue
            data = cat.read(f"{rev}:{prefix}{path}") or b""
            for number, line in enumerate(data.split(b"\n")[:-1], start=1):
                found[table.name].append((path, number, line.decode()))
    return {name: sorted(rows) for name, rows in found.items()}


def replica(dsn: str) -> dict[str, list[tuple[str, int, str]]]:
    import psycopg

    with psycopg.connect(dsn) as conn:
        return {t.name: [tuple(r) for r in conn.execute(  # type: ignore[misc]
            f"SELECT path, line_no, line FROM memstack.{t.name} ORDER BY path, line_no").fetchall()]
            for t in TABLES}


def state(dsn: str) -> tuple[Any, ...]:
    import psycopg

    with psycopg.connect(dsn) as conn:
        found = conn.execute("SELECT commit, tree, synced_ms, memstack_version FROM memstack.sync_state").fetchone()
    assert found is not None
    return tuple(found)


def populate(store: Path) -> None:
    """Every kind of replicated file: intake of two agents, a promotion (ledger, facts), a Binder decision,
    direct facts and a contradicting capture (a closing)."""
    ok("intake", "write", "--agent", "alice", "--content", "we chose postgres", "--tier", "verified",
       "--confidence", "0.9", "--subject", "acme", "--predicate", "chose", "--object", "postgres", cwd=store)
    waiting = ok("intake", "write", "--agent", "bob", "--content", "maybe redis", "--confidence", "0.2", cwd=store)
    ok("promote", "--now-ts", "2026-02-01T00:00:00Z", cwd=store)  # commits
    ok("binder", "ratify", waiting["record"]["id"], cwd=store)
    ok("fact", "add", "--subject", "acme", "--predicate", "decided", "--object", "sqlite", "--valid-from", JAN,
       "--recorded-at", JAN, cwd=store)
    ok("capture", "--subject", "acme", "--predicate", "decided", "--object", "postgres", "--contradicts",
       "--valid-from", "2026-03-01T00:00:00Z", "--recorded-at", "2026-03-01T00:00:00Z", cwd=store)
    commit(store, "decisions")



@pytest.fixture(scope="module")
def _populated(_store_template: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    return made_from(_store_template, tmp_path_factory, "populated", populate)[0]


@pytest.fixture
def populated(store: Path, _populated: Path) -> Path:
    """`store` after `populate` (made once for the module, copied in)."""
    return copied_to(_populated, store)

def test_a_full_sync_copies_every_committed_line(populated: Path, pg_dsn: str) -> None:
    store = populated
    report = ok("pg", "sync", pg_dsn, cwd=store)
    assert report["mode"] == "full" and report["previous"] is None
    assert report["commit"] == git(store, "rev-parse", "HEAD").stdout.strip()
    held = replica(pg_dsn)
    assert held == committed(store)
    assert all(held[name] for name in ("facts", "intake", "promotions", "binder")), held
    assert report["inserted"] == {name: len(rows) for name, rows in held.items() if rows}
    status = ok("pg", "status", pg_dsn, cwd=store)
    assert status["relation"] == "current" and status["behind"] == 0 and status["commit"] == report["commit"]
    assert status["rows"] == {name: len(rows) for name, rows in held.items()}
    assert state(pg_dsn)[3] == memstack("--version").stdout.split()[-1]


def test_typed_columns_and_the_validity_range(populated: Path, pg_dsn: str) -> None:
    store = populated
    ok("pg", "sync", pg_dsn, cwd=store)
    import psycopg

    history = ok("fact", "history", "--subject", "acme", cwd=store)
    with psycopg.connect(pg_dsn) as conn:
        for fact in history:
            got = conn.execute(
                'SELECT id, subject, predicate, object, valid_from, valid_to, confidence, recorded_at, "table",'
                " expired_at, superseded_by, source, agent, intake_id, lower(validity), upper(validity)"
                " FROM memstack.facts WHERE id = %s", (fact["id"],)).fetchone()
            assert got == (fact["id"], fact["subject"], fact["predicate"], fact["object"], fact["valid_from"],
                           fact["valid_to"], fact["confidence"], fact["recorded_at"], fact["table"],
                           fact["expired_at"], fact["superseded_by"], fact["source"], fact["agent"],
                           fact["intake_id"], fact["valid_from"], fact["valid_to"])
        closed = [f for f in history if f["valid_to"] is not None]
        assert closed
        at = closed[0]["valid_to"]  # the instant belongs to the successor
        valid = [r[0] for r in conn.execute("SELECT id FROM memstack.facts WHERE subject = 'acme'"
                                            " AND validity @> %s::bigint ORDER BY id", (at,))]
        assert valid == sorted(f["id"] for f in ok("fact", "get-valid-at", "--ts", str(at), "--subject", "acme",
                                                    cwd=store))
        kinds = {r[0] for r in conn.execute("SELECT indexdef FROM pg_indexes WHERE schemaname = 'memstack'"
                                            " AND tablename = 'facts'")}
        assert any("gist (validity)" in k for k in kinds) and any("WHERE (valid_to IS NULL)" in k for k in kinds)


def test_an_incremental_sync_applies_only_the_change_and_closings_in_place(populated: Path, pg_dsn: str) -> None:
    store = populated
    first = ok("pg", "sync", pg_dsn, cwd=store)
    before = replica(pg_dsn)
    new = ok("capture", "--subject", "acme", "--predicate", "decided", "--object", "duckdb", "--contradicts",
             "--valid-from", "2026-04-01T00:00:00Z", "--recorded-at", "2026-04-01T00:00:00Z", cwd=store)
    ok("intake", "write", "--agent", "alice", "--content", "one more", cwd=store)
    head = commit(store, "more")
    report = ok("pg", "sync", cwd=store, env={"MEMSTACK_PG": pg_dsn})  # the DSN from the environment
    assert (report["mode"], report["previous"], report["commit"]) == ("incremental", first["commit"], head)
    # The new fact, the closed one (its line changed in place) and the intake line: nothing else.
    assert report["inserted"] == {"facts": 2, "intake": 1} and report["deleted"] == {"facts": 1}
    after = replica(pg_dsn)
    assert after == committed(store)
    closed_id = new[1]["id"]
    changed = [r for r in after["facts"] if r not in before["facts"]]
    assert len(changed) == 2 and any(closed_id in r[2] and '"valid_to":null' not in r[2] for r in changed)


def test_a_second_sync_changes_nothing(populated: Path, pg_dsn: str) -> None:
    store = populated
    ok("pg", "sync", pg_dsn, cwd=store)
    held, synced = replica(pg_dsn), state(pg_dsn)
    again = ok("pg", "sync", pg_dsn, cwd=store)
    assert again["mode"] == "unchanged" and again["inserted"] == {} and again["deleted"] == {}
    assert replica(pg_dsn) == held and state(pg_dsn) == synced
    git(store, "commit", "-q", "--allow-empty", "-m", "nothing in memory")  # a new commit, the same tree
    empty = ok("pg", "sync", pg_dsn, cwd=store)
    assert empty["mode"] == "incremental" and empty["files"] == 0 and replica(pg_dsn) == held


def test_uncommitted_and_staged_memory_is_never_replicated(populated: Path, pg_dsn: str) -> None:
    store = populated
    ok("fact", "add", "--subject", "draft", "--predicate", "decided", "--object", "x", "--valid-from", JAN,
       "--recorded-at", JAN, cwd=store)
    ok("intake", "write", "--agent", "bob", "--content", "not committed", cwd=store)
    git(store, "add", "kb/facts")  # staged, still not committed
    ok("pg", "sync", pg_dsn, cwd=store)
    held = replica(pg_dsn)
    assert held == committed(store)
    assert not any("draft" in r[2] or "not committed" in r[2] for rows in held.values() for r in rows)
    assert ok("fact", "history", "--subject", "draft", "--pg", pg_dsn, cwd=store) == []


def test_a_rewritten_history_is_followed(populated: Path, pg_dsn: str) -> None:
    store = populated
    base = git(store, "rev-parse", "HEAD").stdout.strip()
    ok("capture", "--subject", "acme", "--predicate", "decided", "--object", "mysql", "--contradicts",
       "--valid-from", "2026-05-01T00:00:00Z", "--recorded-at", "2026-05-01T00:00:00Z", cwd=store)
    abandoned = commit(store, "to be rewritten")
    ok("pg", "sync", pg_dsn, cwd=store)
    git(store, "reset", "-q", "--hard", base)  # history rewritten: `abandoned` is no ancestor of HEAD
    ok("capture", "--subject", "acme", "--predicate", "decided", "--object", "oracle", "--contradicts",
       "--valid-from", "2026-06-01T00:00:00Z", "--recorded-at", "2026-06-01T00:00:00Z", cwd=store)
    head = commit(store, "the other way")
    assert ok("pg", "status", pg_dsn, cwd=store)["relation"] == "diverged"
    report = ok("pg", "sync", pg_dsn, cwd=store)
    assert (report["mode"], report["previous"], report["commit"]) == ("incremental", abandoned, head)
    assert replica(pg_dsn) == committed(store)
    assert not any("mysql" in r[2] for r in replica(pg_dsn)["facts"])


def test_a_replica_fed_by_another_clone_is_refused_then_copied_whole_when_forced(
        populated: Path, tmp_path: Path, pg_dsn: str) -> None:
    store = populated
    other = tmp_path / "other"
    git(tmp_path, "clone", "-q", str(store), str(other))
    ok("fact", "add", "--subject", "only-here", "--predicate", "decided", "--object", "x", "--valid-from", JAN,
       "--recorded-at", JAN, cwd=store)
    commit(store, "not pushed anywhere")
    ok("pg", "sync", pg_dsn, cwd=store)
    import psycopg

    with psycopg.connect(pg_dsn) as conn:  # something people build on the replica
        conn.execute("CREATE VIEW public.subjects AS SELECT DISTINCT subject FROM memstack.facts")
    assert ok("pg", "status", pg_dsn, cwd=other)["relation"] == "unknown to this clone"
    held, synced = replica(pg_dsn), state(pg_dsn)
    message = refused("pg", "sync", pg_dsn, cwd=other)  # it would roll the replica back, in silence
    assert "holds commit" in message and "which this clone does not have" in message and "pull first" in message
    assert "--force" in message
    assert replica(pg_dsn) == held and state(pg_dsn) == synced
    report = ok("pg", "sync", pg_dsn, "--force", cwd=other)  # the other clone does not know the synced tree
    assert report["mode"] == "full"
    assert replica(pg_dsn) == committed(other)
    with psycopg.connect(pg_dsn) as conn:  # emptied and copied again, not dropped: the view still works
        assert ("only-here",) not in conn.execute("SELECT subject FROM public.subjects").fetchall()
        assert ("acme",) in conn.execute("SELECT subject FROM public.subjects").fetchall()


def test_a_clone_behind_the_replica_is_refused_a_rewind_in_this_clone_is_followed(
        populated: Path, tmp_path: Path, pg_dsn: str) -> None:
    store = populated
    other = tmp_path / "other"
    git(tmp_path, "clone", "-q", str(store), str(other))
    old = git(other, "rev-parse", "HEAD").stdout.strip()
    ok("fact", "add", "--subject", "newer", "--predicate", "decided", "--object", "x", "--valid-from", JAN,
       "--recorded-at", JAN, cwd=store)
    newer = commit(store, "newer")
    ok("pg", "sync", pg_dsn, cwd=store)
    held, synced = replica(pg_dsn), state(pg_dsn)
    git(other, "fetch", "-q")  # fetched, not merged: the synced commit is known, ahead of HEAD on origin/master
    message = refused("pg", "sync", pg_dsn, cwd=other)
    assert f"holds commit {newer[:12]}, ahead of this clone's HEAD (on origin/" in message, message
    assert "pull first" in message and "--force" in message
    assert replica(pg_dsn) == held and state(pg_dsn) == synced
    status = ok("pg", "status", pg_dsn, cwd=other)  # the newer commit is on origin/: pull
    assert (status["relation"], status["ahead"], status["behind"]) == ("ahead", 1, None)
    assert "1 commit(s) ahead of HEAD (pull to catch up)" in memstack("pg", "status", pg_dsn, cwd=other).stdout
    git(other, "merge", "-q", "--ff-only", "FETCH_HEAD")
    assert ok("pg", "sync", pg_dsn, cwd=other)["mode"] == "unchanged"
    git(other, "reset", "-q", "--hard", old)  # a rewind of this clone's branch: origin still has `newer`
    assert "ahead of this clone's HEAD" in refused("pg", "sync", pg_dsn, cwd=other)
    report = ok("pg", "sync", pg_dsn, "--force", cwd=other)
    assert (report["mode"], report["previous"], report["commit"]) == ("incremental", newer, old)
    assert replica(pg_dsn) == committed(other)
    ok("pg", "sync", pg_dsn, cwd=store)  # forward again
    git(store, "reset", "-q", "--hard", "HEAD~1")  # a rewind no ref remembers (only the reflog): followed
    status = ok("pg", "status", pg_dsn, cwd=store)
    assert (status["relation"], status["ahead"]) == ("rewound", 1)
    said = memstack("pg", "status", pg_dsn, cwd=store).stdout
    assert "which was rewound here (`memstack pg sync` follows it)" in said
    report = ok("pg", "sync", pg_dsn, cwd=store)
    assert (report["mode"], report["previous"], report["commit"]) == ("incremental", newer, old)
    assert replica(pg_dsn) == committed(store)


def test_behind_head_is_counted(populated: Path, pg_dsn: str) -> None:
    store = populated
    ok("pg", "sync", pg_dsn, cwd=store)
    for n in range(2):
        git(store, "commit", "-q", "--allow-empty", "-m", f"later {n}")
    status = ok("pg", "status", pg_dsn, cwd=store)
    assert (status["relation"], status["behind"]) == ("behind", 2)
    assert "status    behind: 2 commit(s) behind HEAD" in memstack("pg", "status", pg_dsn, cwd=store).stdout
    ok("pg", "sync", pg_dsn, cwd=store)
    assert ok("pg", "status", pg_dsn, cwd=store)["relation"] == "current"
    assert "\nstatus    current\n" in memstack("pg", "status", pg_dsn, cwd=store).stdout  # the word --json gives


def test_a_store_inside_a_code_repository(tmp_path: Path, populated: Path, pg_dsn: str) -> None:
    """The store is a folder of a larger repository: paths in the replica are relative to the store."""
    store = populated
    repo = tmp_path / "code"
    (repo / "src").mkdir(parents=True)
    (repo / "src" / "main.py").write_text("print('hi')\n")
    shutil.copytree(store, repo / ".memory", ignore=shutil.ignore_patterns(".git", ".memstack"))
    git(repo, "init", "-q")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "--no-verify", "-m", "code and memory")
    ok("pg", "sync", pg_dsn, "--store", str(repo / ".memory"), cwd=repo)
    assert replica(pg_dsn) == committed(store)


def test_the_dsn_from_memstack_yaml(populated: Path, pg_dsn: str) -> None:
    store = populated
    config = store / "memstack.yaml"
    config.write_text(config.read_text() + f"replica:\n  postgres: \"{pg_dsn}\"\n")
    commit(store, "replica configured")
    assert ok("pg", "sync", cwd=store)["mode"] == "full"
    assert replica(pg_dsn) == committed(store)
    with_env = memstack("pg", "sync", "--json", cwd=store, env={"MEMSTACK_PG": "not a dsn"})
    assert with_env.returncode == 2 and "bad DSN" in with_env.stderr  # MEMSTACK_PG comes before memstack.yaml


def test_no_dsn_bad_dsn_unreachable_and_missing_privileges_exit_2_writing_nothing(
        populated: Path, pg_cluster: Cluster, pg_dsn: str) -> None:
    store = populated
    assert "no PostgreSQL DSN" in refused("pg", "sync", cwd=store)
    assert "bad DSN" in refused("pg", "sync", "not a dsn", cwd=store)
    assert "cannot connect" in refused("pg", "sync", f"host=127.0.0.1 port={pg_cluster.port + 1} connect_timeout=3"
                                       " user=postgres", cwd=store)
    ok("pg", "sync", pg_dsn, cwd=store)
    held, synced = replica(pg_dsn), state(pg_dsn)
    dbname = pg_dsn.rsplit("=", 1)[1]
    pg_cluster.sql("DO $$ BEGIN IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = 'reader') THEN"
                   " CREATE ROLE reader LOGIN; END IF; END $$")
    pg_cluster.sql("GRANT USAGE ON SCHEMA memstack TO reader", dbname)
    pg_cluster.sql("GRANT SELECT ON ALL TABLES IN SCHEMA memstack TO reader", dbname)
    ok("fact", "add", "--subject", "acme", "--predicate", "likes", "--object", "tea", "--valid-from", JAN,
       "--recorded-at", JAN, cwd=store)
    commit(store)
    reader = pg_cluster.dsn(dbname, user="reader")
    assert "permission denied" in refused("pg", "sync", reader, cwd=store)
    assert replica(pg_dsn) == held and state(pg_dsn) == synced  # nothing half-written
    assert ok("fact", "history", "--subject", "acme", "--pg", reader, cwd=store)  # a reader can read
    fresh = pg_cluster.new_database()
    assert "permission denied for database" in refused("pg", "sync", pg_cluster.dsn(fresh.rsplit("=", 1)[1],
                                                                                    user="reader"), cwd=store)
    assert pg_cluster.sql("SELECT count(*) FROM pg_namespace WHERE nspname = 'memstack'",
                          fresh.rsplit("=", 1)[1]) == [(0,)]


PASSWORD = "Sup3rS3cretPw"  # pragma: allowlist secret


BAD_DSNS = [f"postgresql://fleet:{PASSWORD}@[::1",  # pragma: allowlist secret
            f"postgresql://fleet:{PASSWORD}@[]/x",  # pragma: allowlist secret
            f"postgres://fleet:{PASSWORD}@[::1]x/db",  # pragma: allowlist secret
            f"postgresql://fleet:{PASSWORD}%zz@db/x"]  # pragma: allowlist secret


@pytest.mark.parametrize("dsn", BAD_DSNS)
def test_a_dsns_password_is_never_printed(store: Path, dsn: str) -> None:
    """libpq echoes a URI it cannot parse (or the part it stops at), password included; memstack prints neither,
    whether the DSN is the argument or comes from MEMSTACK_PG."""
    for args, env in ((["pg", "sync", dsn], None), (["pg", "status"], {"MEMSTACK_PG": dsn}),
                      (["recall", "--subject", "x", "--pg"], {"MEMSTACK_PG": dsn})):
        result = memstack(*args, cwd=store, env=env)
        assert result.returncode == 2, (args, result.stdout, result.stderr)
        assert PASSWORD not in result.stdout + result.stderr, result.stderr
        assert result.stderr.startswith("memstack: ") and result.stderr.count("\n") == 1, result.stderr


def test_without_psycopg_the_message_names_the_extra(store: Path, tmp_path: Path) -> None:
    blocker = tmp_path / "blocker"
    blocker.mkdir()
    (blocker / "psycopg.py").write_text("raise ImportError('blocked for this test')\n")
    result = subprocess.run([sys.executable, "-m", "memstack", "pg", "sync", "host=nowhere"], cwd=store,
                            capture_output=True, text=True, env={**os.environ, "PYTHONPATH": str(blocker)})
    assert result.returncode == 2
    assert result.stderr.strip() == ("memstack: the PostgreSQL replica needs psycopg 3, which is not installed:"
                                     " pip install 'memstack[pg]'")


def test_a_server_killed_in_the_middle_of_a_sync(store: Path) -> None:
    """The sync is stopped at its last statement (a lock the test holds), the server killed: the replica
    keeps the previous sync whole, and the next sync completes and equals the files."""
    import psycopg

    cluster = new_cluster()  # its own server: this test kills it
    try:
        dsn = cluster.new_database()
        populate(store)
        first = ok("pg", "sync", dsn, cwd=store)
        held = replica(dsn)
        for n in range(20):
            ok("intake", "write", "--agent", "alice", "--content", f"note {n}", cwd=store)
        ok("capture", "--subject", "acme", "--predicate", "decided", "--object", "duckdb", "--contradicts",
           "--valid-from", "2026-04-01T00:00:00Z", "--recorded-at", "2026-04-01T00:00:00Z", cwd=store)
        commit(store)
        blocker = psycopg.connect(dsn)
        blocker.execute("SELECT * FROM memstack.sync_state FOR UPDATE")  # held until the server dies
        sync = subprocess.Popen([MEMSTACK, "pg", "sync", dsn], cwd=store,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        with psycopg.connect(dsn, autocommit=True) as watcher:
            deadline = time.monotonic() + 60
            while not watcher.execute(
                    "SELECT 1 FROM pg_stat_activity WHERE wait_event_type = 'Lock'"
                    " AND query LIKE 'INSERT INTO memstack.sync_state%'").fetchall():
                assert sync.poll() is None, sync.communicate()
                assert time.monotonic() < deadline, "the sync never reached its last statement"
                time.sleep(0.05)
        cluster.stop("immediate")  # the server dies with the sync's rows written but not committed
        out, err = sync.communicate(timeout=60)
        assert sync.returncode == 2, (out, err)
        assert "Traceback" not in err and len(err.strip().splitlines()) == 1
        blocker.close()
        cluster.start()
        dsn = cluster.dsn(dsn.rsplit("=", 1)[1])
        assert replica(dsn) == held and state(dsn)[0] == first["commit"]
        report = ok("pg", "sync", dsn, cwd=store)
        assert report["mode"] == "incremental" and report["previous"] == first["commit"]
        assert replica(dsn) == committed(store)
    finally:
        cluster.remove()
