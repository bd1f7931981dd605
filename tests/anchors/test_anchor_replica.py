"""Code anchors in the PostgreSQL replica: `pg sync` fills an `anchors` jsonb column on the facts and intake
tables, and `--pg` reads show anchors (and, inside a clone, their status) as the files do. A real server
(tests/pgcluster.py), a real code repository and real commits."""

import json
from pathlib import Path

from check_support import committed
from helpers import memstack


def _ok(*args: str, cwd: Path) -> dict:
    result = memstack(*args, "--json", cwd=cwd)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


def test_pg_sync_keeps_anchors_and_pg_reads_show_them_as_the_files_do(code: Path, tmp_path: Path,
                                                                      pg_dsn: str) -> None:
    import psycopg

    [anchored] = _ok("fact", "add", "--subject", "deploys", "--predicate", "decided", "--object", "monday",
                     "--anchor", "app.py:4-5", "--anchor", "lib/util.py", cwd=code)
    [plain] = _ok("fact", "add", "--subject", "deploys", "--predicate", "prefers", "--object", "mornings", cwd=code)
    pending = _ok("intake", "write", "--content", "the helper answers 42", "--anchor", "lib/util.py:2",
                  cwd=code)["record"]
    committed(code, "memory")
    assert _ok("pg", "sync", pg_dsn, cwd=code)["mode"] == "full"
    with psycopg.connect(pg_dsn) as conn:
        facts = dict(conn.execute("SELECT id, anchors FROM memstack.facts").fetchall())
        intake = dict(conn.execute("SELECT id, anchors FROM memstack.intake").fetchall())
        by_path = conn.execute("SELECT id FROM memstack.facts WHERE anchors @> %s::jsonb",
                               (json.dumps([{"path": "app.py"}]),)).fetchall()
    assert facts == {anchored["id"]: anchored["anchors"], plain["id"]: None}
    assert intake == {pending["id"]: pending["anchors"]}
    assert by_path == [(anchored["id"],)]

    (code / "app.py").write_text((code / "app.py").read_text().replace("monday", "friday"))
    for args in (("recall", "--subject", "deploys"), ("fact", "history", "--subject", "deploys"),
                 ("fact", "get-valid-at", "--ts", "now", "--subject", "deploys")):
        from_files = memstack(*args, "--json", cwd=code)
        from_replica = memstack(*args, "--json", "--pg", pg_dsn, cwd=code)
        assert from_replica.returncode == 0, from_replica.stderr
        assert from_replica.stdout == from_files.stdout, args
        [shown] = [f for f in json.loads(from_replica.stdout)["items"] if f["id"] == anchored["id"]]
        assert shown["anchors"] == anchored["anchors"] and shown["code_status"]["status"] == "drifted"
        assert "[code: drifted]" in memstack(*args, "--pg", pg_dsn, cwd=code).stdout

    elsewhere = tmp_path / "elsewhere"  # a host with no clone: the anchors, no status to tell
    elsewhere.mkdir()
    [far] = [f for f in _ok("recall", "--subject", "deploys", "--pg", pg_dsn, cwd=elsewhere)["items"]
             if f["id"] == anchored["id"]]
    assert far["anchors"] == anchored["anchors"] and "code_status" not in far
