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
