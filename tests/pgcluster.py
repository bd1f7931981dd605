"""The replica tests' PostgreSQL: a throwaway cluster (bench/pgserver.py) per test process.

Each pytest-xdist worker starts its own cluster, on its own free port; each
test gets a new database in it. Without the PostgreSQL binaries (or psycopg)
the tests that need one are skipped, saying why.
"""

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "bench"))
import pgserver  # noqa: E402  (bench/pgserver.py: one way to start a cluster)
from pgserver import Cluster, Missing  # noqa: E402

__all__ = ["Cluster", "new_cluster", "pg_cluster", "pg_dsn", "pgserver"]


def new_cluster() -> Cluster:
    pytest.importorskip("psycopg", reason="psycopg is not installed: pip install -e '.[test]'")
    try:
        return Cluster()
    except Missing as exc:
        pytest.skip(f"{exc}: the replica tests need a PostgreSQL server")


@pytest.fixture(scope="session")
def pg_cluster() -> Iterator[Cluster]:
    pytest.importorskip("psycopg", reason="psycopg is not installed: pip install -e '.[test]'")
    cluster = new_cluster()
    yield cluster
    cluster.remove()


@pytest.fixture
def pg_dsn(pg_cluster: Cluster) -> str:
    """A new, empty database in the session's cluster."""
    return pg_cluster.new_database()
