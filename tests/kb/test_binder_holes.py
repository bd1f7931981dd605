"""Attacks on what a human confirms in the Binder: control characters in edge names, a credential in a
decision's note, and a filed document taken from anywhere on the host.

Each attack goes through the public surface (the installed `memstack` command, the MCP server over the
SDK client, real `git commit`s through the installed hook) and must be refused naming the problem, with
nothing written."""

import hashlib
import json
import os
import socket
from pathlib import Path

import pytest

from check_support import append, copy_store, refused
from helpers import git, memstack, tree_snapshot
from mcp_support import refused as mcp_refused
from mcp_support import run, server
from secret_corpus import AWS_ID, AWS_SK, GH, SECRETS

PW = "Tr0ub4" + "dor&3"
EDGE = ("binder", "edge", "--from", "parser", "--to", "lexer", "--relation", "depends-on", "--by", "Ada")


def refused_cli(root: Path, *args: str) -> str:
    """A refused command: exit 2, one line on stderr, no traceback, nothing written (files and git status)."""
    status, files = git(root, "status", "--porcelain").stdout, tree_snapshot(root)
    result = memstack(*args, cwd=root)
    assert result.returncode == 2, (args, result.stdout, result.stderr)
    line = result.stderr.strip()
    assert line.startswith("memstack: ") and "\n" not in line and "Traceback" not in result.stderr, result.stderr
    assert result.stdout == ""
    assert git(root, "status", "--porcelain").stdout == status
    assert tree_snapshot(root) == files
    return line


def edge_line(**fields: str) -> bytes:
    entry = {"kind": "edge", "from": "parser", "to": "lexer", "relation": "depends-on", "decided_at": 1767225600000,
             "by": "Ada", **fields}
    return json.dumps(entry).encode() + b"\n"


# ---- control characters in edge names and relations ------------------------------------------------

CONTROLS = {"newline": "a\nb", "escape": "\x1b[2J\x1b[31mowned", "carriage return": "ok\rforged", "tab": "a\tb",
            "delete": "a\x7fb", "c1 csi": "a\x9b31mb", "bell": "a\x07"}


@pytest.mark.parametrize("option", ["--from", "--to", "--relation", "--by"])
@pytest.mark.parametrize("name", sorted(CONTROLS))
def test_a_control_character_in_an_edge_is_refused_at_write(repo: Path, option: str,  # noqa: F811
                                                             name: str) -> None:
    args = list(EDGE)
    args[args.index(option) + 1] = CONTROLS[name]
    line = refused_cli(repo, *args)
    assert f"bad {option}" in line and "control character" in line
    assert "\x1b" not in line and "\r" not in line  # the message shows the value escaped


def test_a_hand_committed_edge_with_a_control_character_is_refused_by_the_hook(repo: Path) -> None:  # noqa: F811
    for field in ("from", "to", "relation", "by"):
        append(repo, "kb/binder.jsonl", edge_line(**{field: "lexer\x1b[2J"}))
        refused(repo, "kb/binder.jsonl:1", "I5", field)
        git(repo, "checkout", "--", "kb/binder.jsonl")


def test_related_escapes_control_characters_that_reach_it(repo: Path) -> None:  # noqa: F811
    append(repo, "kb/binder.jsonl", edge_line(to="lex\x1b[2Jer\rX", relation="dep\nends"))
    result = memstack("related", "parser", cwd=repo)
    assert result.returncode == 0, result.stderr
    assert "\x1b" not in result.stdout and "\r" not in result.stdout
    assert result.stdout.count("\n") == 1
    assert "lex\\x1b[2Jer\\rX" in result.stdout and "dep\\nends" in result.stdout
    nothing = memstack("related", "no\x1bbody", cwd=repo)
    assert "\x1b" not in nothing.stdout


# ---- a credential in a decision's note ------------------------------------------------------------

def _waiting(store: Path) -> str:
    assert memstack("intake", "write", "--content", "maybe", "--created-at", "2026-01-02T00:00:00Z",
                    cwd=store).returncode == 0
    git(store, "add", "-A")
    git(store, "commit", "-q", "-m", "memory")
    assert memstack("promote", "--now-ts", "2026-03-01T00:00:00Z", cwd=store).returncode == 0
    git(store, "add", "-A")
    git(store, "commit", "-q", "-m", "promoted", check=False)  # promote commits its own work
    queue = json.loads(memstack("binder", "list", "--json", cwd=store).stdout)["items"]
    return queue[0]["id"]


@pytest.fixture(scope="session")
def _waiting_template(tmp_path_factory: pytest.TempPathFactory, store_template: Path) -> tuple[Path, str]:  # noqa: F811
    root = copy_store(store_template, tmp_path_factory.mktemp("waiting"))
    return root, _waiting(root)


@pytest.fixture
def waiting(_waiting_template: tuple[Path, str], tmp_path: Path) -> tuple[Path, str]:
    """A store with one intake record waiting in the Binder queue (committed): made once, copied for each test."""
    template, waiting_id = _waiting_template
    return copy_store(template, tmp_path), waiting_id


@pytest.mark.parametrize("verb", ["ratify", "reject"])
@pytest.mark.parametrize("name", ["github classic token", "markdown bullet aws secret", "base64 dotenv"])
def test_a_decision_whose_note_holds_a_credential_is_refused_before_anything_is_written(
        waiting: tuple[Path, str], verb: str, name: str) -> None:
    root, waiting_id = waiting
    line = refused_cli(root, "binder", verb, waiting_id, "--by", "Ada", "--note", f"checked: {SECRETS[name][0]}")
    assert line.startswith("memstack: bad note: holds a credential") and "(I8)" in line
    assert SECRETS[name][0] not in line
    assert memstack("binder", verb, waiting_id, "--by", "Ada", "--note", "checked", cwd=root).returncode == 0


def test_a_decision_over_mcp_whose_note_holds_a_credential_is_refused(waiting: tuple[Path, str]) -> None:
    root, waiting_id = waiting
    before, status = tree_snapshot(root), git(root, "status", "--porcelain").stdout

    async def session() -> None:
        async with server(cwd=root) as client:
            message = await mcp_refused(client, "binder_ratify", id=waiting_id, note=f"token {GH}")
            assert "holds a credential (GitHub Token)" in message and GH not in message

    run(session)
    assert tree_snapshot(root) == before and git(root, "status", "--porcelain").stdout == status


# ---- a filed document comes from inside the repository, is a regular file, small, and clean ----------

def environ_dump() -> bytes:
    """What /proc/<pid>/environ of a process holding cloud credentials looks like: NUL-separated."""
    return ("HOME=/root\0AWS_ACCESS_KEY_ID=" + AWS_ID + "\0AWS_SECRET_ACCESS_KEY=" + AWS_SK + "\0LANG=C\n").encode()


def attacks(root: Path, outside: Path) -> dict[str, tuple[str, str]]:
    """name -> (the PATH argument, what the refusal must say); the files are made here."""
    (outside / "secret.md").write_text("an outside document\n")
    (root / "docs").mkdir(exist_ok=True)
    (root / "docs" / "link.md").symlink_to(outside / "secret.md")
    (root / "docs" / "inner.md").write_text("inside\n")
    (root / "docs" / "link-inside.md").symlink_to(root / "docs" / "inner.md")
    (root / "docs" / "linked").symlink_to(outside, target_is_directory=True)
    os.mkfifo(root / "docs" / "pipe.md")
    with socket.socket(socket.AF_UNIX) as listening:  # the socket file stays when it is closed
        listening.bind(str(root / "docs" / "sock.md"))
    (root / "docs" / "environ.txt").write_bytes(environ_dump())
    return {
        "proc environ": ("/proc/self/environ", "is in /proc"),
        "etc passwd": ("/etc/passwd", "outside the repository"),
        "dot-dot": ("../../../../../../../../etc/hostname", "outside the repository"),
        "dev zero": ("/dev/zero", "is in /dev"),
        "symlink to outside": ("docs/link.md", "outside the repository"),
        "symlink inside": ("docs/link-inside.md", "is a symbolic link"),
        "folder symlinked outside": ("docs/linked/secret.md", "outside the repository"),
        "fifo": ("docs/pipe.md", "is a FIFO, not a regular file"),
        "socket": ("docs/sock.md", "is a socket, not a regular file"),
        "git config": (".git/config", "inside .git"),
        "nul-separated credentials": ("docs/environ.txt", "holds a credential (AWS Access Key"),
    }


def test_binder_file_refuses_what_is_not_a_document_of_the_repository(repo: Path, tmp_path: Path) -> None:  # noqa: F811
    outside = tmp_path / "outside"
    outside.mkdir()
    for name, (path, says) in attacks(repo, outside).items():
        line = refused_cli(repo, "binder", "file", path, "--by", "Ada")
        assert line.startswith("memstack: bad PATH") and says in line, (name, line)
        assert AWS_ID not in line and AWS_SK not in line
    assert not (repo / "kb" / "files").exists() or not any((repo / "kb" / "files").iterdir())


def test_outside_repo_is_a_person_s_choice_and_never_reaches_proc_fifos_or_credentials(repo: Path,  # noqa: F811
                                                                                       tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    os.mkfifo(outside / "pipe.md")
    (outside / "environ.txt").write_bytes(environ_dump())
    (outside / "link.md").symlink_to(outside / "environ.txt")
    for path, says in (("/proc/self/environ", "is in /proc"), ("/proc/1/cmdline", "is in /proc"),
                       ("/sys/kernel/hostname", "is in /sys"), (str(outside / "pipe.md"), "is a FIFO"),
                       (str(outside / "link.md"), "is a symbolic link"),
                       (str(outside / "environ.txt"), "holds a credential (AWS Access Key")):
        line = refused_cli(repo, "binder", "file", "--outside-repo", path, "--by", "Ada")
        assert says in line, (path, line)
    (outside / "adr.md").write_text("# ADR\nconfirmed elsewhere\n")
    filed = memstack("binder", "file", "--outside-repo", str(outside / "adr.md"), "--by", "Ada", "--json", cwd=repo)
    assert filed.returncode == 0, filed.stderr
    assert (repo / json.loads(filed.stdout)["path"]).read_text() == "# ADR\nconfirmed elsewhere\n"


def test_the_size_limit_is_configurable_and_refused_before_anything_is_written(repo: Path) -> None:  # noqa: F811
    (repo / "docs").mkdir()
    (repo / "docs" / "big.md").write_bytes(b"x" * (10 * 2**20) + b"\n")
    assert "more than the 10,485,760 bytes" in refused_cli(repo, "binder", "file", "docs/big.md")
    config = (repo / "memstack.yaml").read_text()
    (repo / "memstack.yaml").write_text(config + "\nlimits:\n  file_bytes: 1024\n")
    (repo / "docs" / "small.md").write_bytes(b"y" * 1024 + b"\n")
    line = refused_cli(repo, "binder", "file", "docs/small.md")
    assert "more than the 1,024 bytes" in line and "limits.file_bytes" in line
    (repo / "docs" / "small.md").write_bytes(b"y" * 1023 + b"\n")
    assert memstack("binder", "file", "docs/small.md", cwd=repo).returncode == 0


def test_the_mcp_tool_files_only_from_inside_the_repository(repo: Path, tmp_path: Path) -> None:  # noqa: F811
    outside = tmp_path / "outside"
    outside.mkdir()
    cases = attacks(repo, outside)
    (outside / "adr.md").write_text("# ADR\n")
    before, status = tree_snapshot(repo), git(repo, "status", "--porcelain").stdout

    async def session() -> None:
        async with server(cwd=repo) as client:
            for name, (path, says) in cases.items():
                message = await mcp_refused(client, "binder_file", path=path)
                assert says in message, (name, message)
            message = await mcp_refused(client, "binder_file", path=str(outside / "adr.md"))
            assert "outside the repository" in message
            result = await client.call_tool("binder_file", {"path": str(outside / "adr.md"), "outside_repo": True})
            assert result.is_error

    run(session)
    assert tree_snapshot(repo) == before and git(repo, "status", "--porcelain").stdout == status


DUMPS = {  # NUL-separated variables, each credential one a whole `.env` line would show
    "aws secret key": ("HOME=/root\0AWS_SECRET_ACCESS_KEY=" + AWS_SK + "\0LANG=C\n", "AWS Access Key", AWS_SK),
    "database password": ("HOME=/root\0DB_PASSWORD=" + PW + "\0LANG=C\n", "Secret Keyword", PW),
}


@pytest.mark.parametrize("name", sorted(DUMPS))
def test_a_hand_committed_nul_separated_document_with_credentials_is_refused_by_the_hook(repo: Path,  # noqa: F811
                                                                                         name: str) -> None:
    text, kind, secret = DUMPS[name]
    data = text.encode()
    append(repo, f"kb/files/{hashlib.sha256(data).hexdigest()}.txt", data)
    output = refused(repo, f"I8 {kind} in text")
    assert secret not in output
