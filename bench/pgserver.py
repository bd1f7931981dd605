"""A throwaway PostgreSQL cluster (initdb + pg_ctl in a temporary folder), for the bench and the tests.

As root, the server runs as the `postgres` system user (initdb refuses root), through `runuser`.
`Missing` is raised, saying what is missing, when the PostgreSQL binaries are not installed, or when
running as root and `runuser` or the `postgres` user is not there.

Tools are looked up on PATH, then where Debian keeps them off it: the PostgreSQL binaries in
/usr/lib/postgresql/<version>/bin (the newest version), `runuser` in the sbin folders (a root shell
with PATH=/usr/bin:/bin does not search them).
"""

import glob
import os
import pwd
import shutil
import socket
import subprocess
import tempfile
import uuid
from pathlib import Path


class Missing(Exception):
    """A throwaway cluster cannot be started here: the message says what is missing."""


SBIN = ("/usr/local/sbin", "/usr/sbin", "/sbin")


def binary(name: str) -> str | None:
    """A PostgreSQL program: on PATH, else the newest /usr/lib/postgresql/<version>/bin/<name>."""
    found = shutil.which(name)
    if found:
        return found
    candidates = sorted(glob.glob(f"/usr/lib/postgresql/*/bin/{name}"), key=version_key)
    return candidates[-1] if candidates else None


def version_key(path: str) -> tuple[int, ...]:
    """(15,) for /usr/lib/postgresql/15/bin/initdb: 10 sorts after 9."""
    folder = Path(path).parent.parent.name
    return tuple(int(part) for part in folder.split(".") if part.isdigit())


def system_tool(name: str) -> str | None:
    """An administration program: on PATH, else in the sbin folders."""
    return shutil.which(name) or shutil.which(name, path=os.pathsep.join(SBIN))


def as_postgres() -> list[str]:
    """The prefix that runs a command as the `postgres` user when this process is root (else none)."""
    if os.geteuid() != 0:
        return []
    runuser = system_tool("runuser")
    if runuser is None:
        raise Missing("runuser not found (on PATH or in " + ", ".join(SBIN) + "): as root, initdb and the"
                      " server must run as the postgres user")
    try:
        pwd.getpwnam("postgres")
    except KeyError:
        raise Missing("no postgres system user: as root, initdb and the server must run as it") from None
    return [runuser, "-u", "postgres", "--"]


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


class Cluster:
    def __init__(self, fsync: bool = False) -> None:
        initdb, pg_ctl = binary("initdb"), binary("pg_ctl")
        if not initdb or not pg_ctl:
            raise Missing("PostgreSQL binaries (initdb, pg_ctl) not found: install postgresql-15")
        self.pg_ctl = pg_ctl
        self.fsync = fsync
        self.as_postgres = as_postgres()
        # In /tmp, not TMPDIR: the socket path must fit 107 bytes, and the server's user must reach the folder.
        self.dir = Path(tempfile.mkdtemp(prefix="mspg-", dir="/tmp" if os.path.isdir("/tmp") else None))
        if self.as_postgres:
            shutil.chown(self.dir, "postgres")
        subprocess.run([*self.as_postgres, initdb, "-D", str(self.dir / "data"), "-A", "trust", "-U", "postgres",
                        "-E", "UTF8", "--no-locale"], check=True, capture_output=True)
        self.port = 0
        self.start()

    def start(self) -> None:
        for _ in range(5):  # a free port may be taken between the probe and the start
            self.port = _free_port()
            options = f"-p {self.port} -k {self.dir} -c listen_addresses=127.0.0.1"
            if not self.fsync:
                options += " -c fsync=off"
            started = subprocess.run(
                [*self.as_postgres, self.pg_ctl, "-D", str(self.dir / "data"), "-l", str(self.dir / "log"), "-w",
                 "-o", options, "start"], capture_output=True, text=True)
            if started.returncode == 0:
                return
        raise RuntimeError(f"pg_ctl start failed: {started.stderr}{(self.dir / 'log').read_text()[-2000:]}")

    def stop(self, mode: str = "fast") -> None:
        subprocess.run([*self.as_postgres, self.pg_ctl, "-D", str(self.dir / "data"), "-m", mode, "-w", "stop"],
                       capture_output=True)

    def dsn(self, dbname: str = "postgres", user: str = "postgres") -> str:
        return f"host=127.0.0.1 port={self.port} user={user} dbname={dbname}"

    def sql(self, statement: str, dbname: str = "postgres") -> list[tuple]:  # type: ignore[type-arg]
        import psycopg

        with psycopg.connect(self.dsn(dbname), autocommit=True) as conn:
            cur = conn.execute(statement)
            return cur.fetchall() if cur.description else []

    def new_database(self) -> str:
        """A new, empty database; returns its DSN."""
        name = "t_" + uuid.uuid4().hex[:12]
        self.sql(f"CREATE DATABASE {name}")
        return self.dsn(name)

    def remove(self) -> None:
        self.stop("immediate")
        shutil.rmtree(self.dir, ignore_errors=True)
