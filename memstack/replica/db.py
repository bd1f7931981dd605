"""Connecting to PostgreSQL (psycopg 3) and the DSN a command uses; driver errors become MemstackError."""

import os
import re
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any
from urllib.parse import unquote

from memstack.base.config import load
from memstack.base.errors import MemstackError

ENV = "MEMSTACK_PG"
EXTRA = "pip install 'memstack[pg]'"
HIDDEN = "***"  # a password's place in a message
_USERINFO = re.compile(r"^\s*[A-Za-z][A-Za-z0-9+.-]*://(.*)@", re.S)  # a URI's user:password, to its last @
_KEYWORD = re.compile(r"\bpassword\s*=\s*('(?:[^'\\]|\\.)*'?|\S+)", re.I)  # password=... of a keyword DSN
_IN_URI = re.compile(r"(://[^:/?#@\s\"']*:)[^@\s\"']*@")  # any URI's password in a message


def psycopg() -> Any:
    """The driver, or a clear exit-2 message when the optional extra is not installed."""
    try:
        import psycopg as driver  # the optional `pg` extra: imported only for the replica
    except ImportError:
        raise MemstackError(f"the PostgreSQL replica needs psycopg 3, which is not installed: {EXTRA}") from None
    return driver


def resolve_dsn(given: str | None, store: Path | None) -> str:
    """The DSN: the argument, else MEMSTACK_PG, else `replica.postgres` in the store's memstack.yaml."""
    if given:
        return given
    if os.environ.get(ENV):
        return os.environ[ENV]
    if store is not None:

        configured = load(store).get("replica", "postgres")
        if configured:
            return str(configured)
    raise MemstackError(f"no PostgreSQL DSN: pass one (e.g. 'postgresql://host/db'), set {ENV},"
                        " or set replica.postgres in memstack.yaml")


def describe(dsn: str) -> str:
    """Where a DSN points, without its password (for messages)."""
    try:
        from psycopg.conninfo import conninfo_to_dict  # the optional `pg` extra

        info = conninfo_to_dict(dsn)
    except Exception:  # a malformed DSN is reported by connect(); here only a label is wanted
        return "the given DSN"
    host = info.get("host") or info.get("hostaddr") or "local socket"
    port = f":{info['port']}" if info.get("port") else ""
    return f"{host}{port}/{info.get('dbname') or info.get('user') or 'default'}"


def _passwords(dsn: str) -> list[str]:
    """The password a DSN holds, as written and decoded, found even in a DSN libpq cannot parse; longest first."""
    found = []
    uri = _USERINFO.match(dsn)
    if uri and ":" in uri.group(1):
        found.append(uri.group(1).split(":", 1)[1])
    found += [m.group(1).strip("'") for m in _KEYWORD.finditer(dsn)]
    try:
        from psycopg.conninfo import conninfo_to_dict  # the optional `pg` extra

        found.append(str(conninfo_to_dict(dsn).get("password") or ""))
    except Exception:  # malformed: what the patterns found is all there is
        pass
    found += [unquote(p) for p in found]
    return sorted({p for p in found if p}, key=len, reverse=True)


def hide_password(text: str, dsn: str) -> str:
    """`text` (a message) without the password of `dsn`, nor any URI's password."""
    for password in _passwords(dsn):
        text = text.replace(password, HIDDEN)
    return _IN_URI.sub(rf"\1{HIDDEN}@", text)


def _first_line(exc: BaseException, dsn: str) -> str:
    text = hide_password(str(exc).strip(), dsn) or type(exc).__name__
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    # libpq puts the useful part last on a connection failure ("connection failed: ... \n reason")
    return "; ".join(lines[:2]) if len(lines) > 1 else lines[0]


@contextmanager
def translated(dsn: str, doing: str) -> Iterator[None]:
    """Turn any driver error inside into a one-line MemstackError (exit 2) naming the target."""
    driver = psycopg()
    try:
        yield
    except driver.Error as exc:
        raise MemstackError(f"PostgreSQL at {describe(dsn)}: cannot {doing}: {_first_line(exc, dsn)}") from None


def connect(dsn: str, doing: str) -> Any:
    """An open connection (autocommit off: every sync is one transaction)."""
    driver = psycopg()
    with translated(dsn, doing):
        try:
            return driver.connect(dsn, connect_timeout=10)
        except driver.ProgrammingError as exc:  # a malformed DSN
            raise MemstackError(f"bad DSN: {_first_line(exc, dsn)}") from None
