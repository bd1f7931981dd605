"""A store in a bad state: a clear exit 2 (or a repair), never a traceback, nothing written.

The permission cases need a process the permission bits stop. Tests run as root, where they
do not: the command runs under `setpriv` with the capabilities that bypass them
(CAP_DAC_OVERRIDE, CAP_DAC_READ_SEARCH) dropped, so it is stopped as any other user would be.
"""

import json
import os
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from check_support import copy_store
from helpers import MEMSTACK, git, items, memstack, tree_snapshot

NOW = "2026-03-01T00:00:00Z"
FACT = ("--subject", "db", "--predicate", "decided", "--object", "sqlite")


def refused(result: subprocess.CompletedProcess[str], names: str) -> str:
    assert result.returncode == 2, (result.returncode, result.stdout, result.stderr)
    assert "Traceback" not in result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and names in lines[0], result.stderr
    return lines[0]


def fill(store: Path) -> None:
    for args in (("intake", "write", "--content", "c", "--tier", "verified", "--confidence", "0.9",
                  "--created-at", "2026-01-02T00:00:00Z"),
                 ("capture", *FACT, "--valid-from", "2026-01-01T00:00:00Z", "--recorded-at", "2026-01-01T00:00:00Z"),
                 ("soil", "put", "notes", "k", "--value", "1")):
        assert memstack(*args, cwd=store).returncode == 0
    git(store, "add", "-A")
    git(store, "commit", "-q", "-m", "memory")


@pytest.fixture
def filled(states: Callable[[str, Callable[[Path], Any]], Path], tmp_path: Path) -> Path:
    """A store with an intake record pending, a fact and a SOIL record, all committed: filled once, copied
    for each test."""
    return copy_store(states("filled", fill), tmp_path)


def test_promote_in_a_copy_without_git_is_refused_before_writing(filled: Path, tmp_path: Path) -> None:
    copy = tmp_path / "copy"
    shutil.copytree(filled, copy, symlinks=True, ignore=shutil.ignore_patterns(".git"))
    before = tree_snapshot(copy)
    refused(memstack("promote", "--now-ts", NOW, cwd=copy), "not inside a git repository")
    assert tree_snapshot(copy) == before
    assert memstack("promote", "--now-ts", NOW, "--no-commit", cwd=copy).returncode == 0  # what it offers


@pytest.mark.parametrize("args", [
    ("intake", "write", "--content", "c"),
    ("fact", "history", "--subject", "db"),
    ("capture", *FACT, "--valid-from", NOW),
    ("soil", "put", "notes", "k2", "--value", "1"),
    ("promote", "--now-ts", NOW),
])
def test_memstack_s_local_folder_being_a_file_is_named(filled: Path, args: tuple[str, ...]) -> None:
    shutil.rmtree(filled / ".memstack", ignore_errors=True)
    (filled / ".memstack").write_text("not a folder\n")
    before = tree_snapshot(filled)
    refused(memstack(*args, cwd=filled), f"{filled / '.memstack'}: not a folder")
    assert tree_snapshot(filled) == before


def test_a_folder_in_place_of_the_index_is_named(filled: Path) -> None:
    shutil.rmtree(filled / ".memstack")
    (filled / ".memstack" / "facts.sqlite3").mkdir(parents=True)
    refused(memstack("fact", "history", "--subject", "db", cwd=filled), "facts.sqlite3")
    (filled / ".memstack" / "facts.sqlite3").rmdir()
    assert memstack("fact", "history", "--subject", "db", cwd=filled).returncode == 0  # rebuilt


def test_the_index_notices_an_edit_in_place_that_keeps_size_and_mtime(filled: Path) -> None:
    assert "sqlite" in memstack("fact", "history", "--subject", "db", cwd=filled).stdout  # indexed now
    [path] = (filled / "kb" / "facts" / "alice").glob("*.jsonl")
    st = path.stat()
    data = path.read_bytes()
    edited = data.replace(b'"object":"sqlite"', b'"object":"oracle"')
    assert len(edited) == len(data) and edited != data
    with open(path, "r+b") as handle:  # in place: same inode, same size
        handle.write(edited)
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))
    after = path.stat()
    assert (after.st_ino, after.st_size, after.st_mtime_ns) == (st.st_ino, st.st_size, st.st_mtime_ns)
    [fact] = items(json.loads(memstack("fact", "history", "--subject", "db", "--json", cwd=filled).stdout))
    assert fact["object"] == "oracle"


def _without_dac_override() -> list[str] | None:
    """A command prefix that runs a process without the capabilities that bypass permission bits."""
    setpriv = shutil.which("setpriv")
    if setpriv is None:
        return None
    prefix = [setpriv, "--inh-caps=-dac_override,-dac_read_search", "--bounding-set=-dac_override,-dac_read_search"]
    probe = subprocess.run([*prefix, "true"], capture_output=True)
    return prefix if probe.returncode == 0 else None


def as_user(prefix: list[str], *args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*prefix, MEMSTACK, *args], cwd=cwd, capture_output=True, text=True)


def _intake_file(store: Path) -> Path:
    return next((store / "intake" / "alice").glob("*.jsonl"))


def _fact_file(store: Path) -> Path:
    return next((store / "kb" / "facts" / "alice").glob("*.jsonl"))


@pytest.mark.parametrize(("make_bad", "args", "names"), [
    (lambda s: _intake_file(s).chmod(0), ("intake", "list"), "intake/alice/"),
    (lambda s: _intake_file(s).chmod(0), ("promote", "--now-ts", NOW), "intake/alice/"),
    (lambda s: _fact_file(s).chmod(0), ("fact", "history", "--subject", "db"), "kb/facts/alice/"),
    (lambda s: (s / "memstack.yaml").chmod(0), ("intake", "write", "--content", "c"), "memstack.yaml"),
    (lambda s: (s / "intake" / "alice").chmod(0o555),
     ("intake", "write", "--content", "c", "--created-at", "2026-02-01T00:00:00Z"), "intake/alice/2026-02-01"),
    (lambda s: (s / "store" / "notes").chmod(0o555), ("soil", "put", "notes", "k2", "--value", "2"), "k2.json"),
    (lambda s: (s / "store" / "notes").chmod(0o555), ("soil", "update", "notes", "k", "--value", "2"), "k.json"),
], ids=["unreadable intake: list", "unreadable intake: promote", "unreadable fact file", "unreadable memstack.yaml",
        "read-only intake folder", "read-only SOIL folder: put", "read-only SOIL folder: update"])
def test_what_the_file_system_refuses_is_one_line_naming_the_file(filled: Path, make_bad, args: tuple[str, ...],
                                                                  names: str) -> None:
    prefix = _without_dac_override()
    if prefix is None:
        pytest.skip("setpriv cannot drop CAP_DAC_OVERRIDE here: permission bits would not stop this process")
    shutil.rmtree(filled / ".memstack", ignore_errors=True)  # the index must be read from the files
    status, before = git(filled, "status", "--porcelain").stdout, tree_snapshot(filled)
    make_bad(filled)
    try:
        message = refused(as_user(prefix, *args, cwd=filled), names)
        assert "Permission denied" in message
    finally:
        for path in filled.rglob("*"):
            if ".git" not in path.parts:
                path.chmod(0o755 if path.is_dir() else 0o644)
        (filled / "memstack.yaml").chmod(0o644)
    assert git(filled, "status", "--porcelain").stdout == status
    assert tree_snapshot(filled) == before
    tmp = filled / ".memstack" / "tmp"
    assert not tmp.exists() or not any(tmp.iterdir())


def test_the_mcp_server_turns_a_refused_read_into_a_tool_error_and_keeps_serving(filled: Path) -> None:
    import anyio
    from mcp import Client, StdioServerParameters

    prefix = _without_dac_override()
    if prefix is None:
        pytest.skip("setpriv cannot drop CAP_DAC_OVERRIDE here: permission bits would not stop this process")
    shutil.rmtree(filled / ".memstack", ignore_errors=True)
    _fact_file(filled).chmod(0)
    expected = refused(as_user(prefix, "fact", "history", "--subject", "db", cwd=filled), "Permission denied")

    async def session() -> None:
        params = StdioServerParameters(command=prefix[0], args=[*prefix[1:], MEMSTACK, "mcp", "--store", str(filled)])
        async with Client(params, mode="legacy") as client:
            result = await client.call_tool("fact_history", {"subject": "db"})
            assert result.is_error and "memstack: " + result.content[0].text == expected
            assert not (await client.call_tool("soil_get", {"collection": "notes", "key": "k"})).is_error

    try:
        anyio.run(session)
    finally:
        _fact_file(filled).chmod(0o644)


@pytest.mark.parametrize("args", [("status",), ("rebuild", "--check"), ("rebuild",)])
def test_a_fact_line_that_is_json_but_no_record_is_named_not_a_traceback(filled: Path, args: tuple[str, ...]) -> None:
    """A hand edit the hooks would refuse (I5): the views cannot be built from it, and the command says so."""
    [facts] = (filled / "kb/facts").rglob("*.jsonl")
    with facts.open("a") as out:
        out.write('{"id": "x"}\n')
    before = tree_snapshot(filled)
    said = refused(memstack(*args, cwd=filled), "cannot be built from the sources in the work tree")
    assert "a record is not valid" in said and "`memstack check` names it" in said
    assert tree_snapshot(filled) == before
    checked = memstack("check", cwd=filled)  # which does
    assert checked.returncode == 1 and f"{facts.relative_to(filled)}:2: I5" in checked.stdout
