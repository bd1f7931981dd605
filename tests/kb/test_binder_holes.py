"""Attacks on what a human confirms in the Binder: control characters in edge names, a credential in a
decision's note, and a filed document taken from anywhere on the host.

Each attack goes through the public surface (the installed `memstack` command, the MCP server over the
SDK client, real `git commit`s through the installed hook) and must be refused naming the problem, with
nothing written."""

import json
from pathlib import Path

import pytest

from check_support import append, refused, repo, store_template  # noqa: F401
from helpers import git, memstack, tree_snapshot
from mcp_support import refused as mcp_refused
from mcp_support import run, server
from secret_corpus import GH, SECRETS

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

@pytest.fixture
def waiting(store: Path) -> tuple[Path, str]:
    """A store with one intake record waiting in the Binder queue (committed)."""
    assert memstack("intake", "write", "--content", "maybe", "--created-at", "2026-01-02T00:00:00Z",
                    cwd=store).returncode == 0
    git(store, "add", "-A")
    git(store, "commit", "-q", "-m", "memory")
    assert memstack("promote", "--now-ts", "2026-03-01T00:00:00Z", cwd=store).returncode == 0
    git(store, "add", "-A")
    git(store, "commit", "-q", "-m", "promoted", check=False)  # promote commits its own work
    queue = json.loads(memstack("binder", "list", "--json", cwd=store).stdout)["items"]
    return store, queue[0]["id"]


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
            message = await mcp_refused(client, "binder_ratify", id=waiting_id, by="Ada", note=f"token {GH}")
            assert "holds a credential (GitHub Token)" in message and GH not in message

    run(session)
    assert tree_snapshot(root) == before and git(root, "status", "--porcelain").stdout == status
