"""bench/pgserver.py finds its tools off PATH and says what is missing: a root shell with
PATH=/usr/bin:/bin (sudo's secure_path aside, what `env -i` and many CI images give) has no sbin folder on
PATH, where `runuser` lives; without the tool, the replica tests are skipped with that reason."""

import os
from pathlib import Path

import pytest

import pgcluster
from pgcluster import pgserver  # bench/pgserver.py

root_only = pytest.mark.skipif(os.geteuid() != 0, reason="as a user, the server runs as that user: no runuser")


@root_only
def test_as_root_runuser_is_found_in_the_sbin_folders_with_a_bare_path(monkeypatch: pytest.MonkeyPatch) -> None:
    if not any(Path(folder, "runuser").is_file() for folder in pgserver.SBIN):
        pytest.skip("runuser is not installed in " + ", ".join(pgserver.SBIN))
    monkeypatch.setenv("PATH", "/usr/bin:/bin")
    runuser, *rest = pgserver.as_postgres()
    assert Path(runuser).parent.as_posix() in pgserver.SBIN and os.access(runuser, os.X_OK)
    assert rest == ["-u", "postgres", "--"]


@root_only
def test_as_root_without_runuser_the_replica_tests_skip_saying_so(monkeypatch: pytest.MonkeyPatch,
                                                                   tmp_path: Path) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.setattr(pgserver, "SBIN", (str(tmp_path),))
    with pytest.raises(pgserver.Missing, match="runuser not found"):
        pgserver.as_postgres()
    with pytest.raises(pytest.skip.Exception, match="runuser not found .*the replica tests need a PostgreSQL"):
        pgcluster.new_cluster()


def test_as_a_user_nothing_runs_through_runuser() -> None:
    if os.geteuid() == 0:
        pytest.skip("runs as root")
    assert pgserver.as_postgres() == []


def test_the_newest_postgresql_folder_wins() -> None:
    paths = [f"/usr/lib/postgresql/{v}/bin/initdb" for v in ("9.6", "15", "10")]
    assert max(paths, key=pgserver.version_key) == "/usr/lib/postgresql/15/bin/initdb"
