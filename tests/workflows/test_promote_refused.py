"""A promotion that cannot land leaves the store as it found it.

A `--now-ts` beyond the clock skew (`clock.max_skew_seconds`) is refused before anything is written, on the
command line and over MCP. A promotion whose commit is refused (a hook of the repository says no) puts back
every file it wrote and the index as it was: `git status`, the files (the uncommitted intake included) and
what is staged are unchanged, `status` still counts the records as pending, and once the hook lets it
through a plain `promote` commits them.
"""

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from helpers import git, memstack, tree_snapshot
from mcp_support import refused, run, server

FUTURE = "2030-01-01T00:00:00Z"


def state(store: Path) -> dict[str, Any]:
    """Everything a refused promotion must leave as it was."""
    status = json.loads(memstack("status", "--json", cwd=store).stdout)
    return {"porcelain": git(store, "status", "--porcelain", "--untracked-files=all").stdout,
            "staged": git(store, "ls-files", "-s").stdout, "head": git(store, "rev-parse", "HEAD").stdout,
            "files": tree_snapshot(store), "pending": status["pending_total"]}


def write_intake(store: Path, *contents: str) -> None:
    for content in contents:
        result = memstack("intake", "write", "--content", content, "--tier", "verified", "--confidence", "0.9",
                          "--subject", "db", "--predicate", "decided", "--object", content, cwd=store)
        assert result.returncode == 0, result.stderr


def test_a_now_beyond_the_clock_skew_is_refused_before_anything_is_written(store: Path) -> None:
    write_intake(store, "postgres")
    git(store, "add", "-A")
    git(store, "commit", "-q", "-m", "intake")
    before = state(store)
    assert before["porcelain"] == "" and before["pending"] == 1
    result = memstack("promote", "--now-ts", FUTURE, cwd=store)
    assert result.returncode == 2, result
    [line] = result.stderr.splitlines()
    assert line.startswith("memstack: bad --now-ts 2030-01-01T00:00:00.000Z: lies in the future") \
        and "300 s clock skew" in line, line
    assert state(store) == before  # git status empty, nothing staged, the record still pending

    async def over_mcp() -> None:
        async with server(cwd=store) as client:
            message = await refused(client, "promote", now_ts=FUTURE)
            assert message.startswith("bad now_ts 2030-01-01T00:00:00.000Z: lies in the future") \
                and "clock skew" in message, message

    run(over_mcp)
    assert state(store) == before
    done = memstack("promote", cwd=store)  # a normal promotion still works
    assert done.returncode == 0, done.stderr
    assert git(store, "status", "--porcelain").stdout == "" and state(store)["pending"] == 0


@pytest.mark.parametrize("hook", ["commit-msg", "pre-commit"])
def test_a_promotion_whose_commit_is_refused_leaves_the_work_tree_and_index_as_it_found_them(
        store: Path, hook: str) -> None:
    write_intake(store, "postgres", "mysql")  # committed
    git(store, "add", "-A")
    git(store, "commit", "-q", "-m", "intake")
    write_intake(store, "sqlite")  # uncommitted, one of its files staged: the user's own state
    memstack("fact", "add", "--subject", "db", "--predicate", "uses", "--object", "wal", cwd=store)
    git(store, "add", "intake")
    hooks = store / git(store, "rev-parse", "--git-path", "hooks").stdout.strip()
    script = hooks / hook
    kept = script.read_bytes() if script.exists() else None
    script.write_text("#!/bin/sh\necho 'refused by this repository' >&2\nexit 1\n")
    script.chmod(0o755)
    before = state(store)
    assert before["pending"] == 3 and before["porcelain"]

    result = memstack("promote", cwd=store)
    assert result.returncode == 2, result
    assert state(store) == before
    assert result.stderr.startswith("memstack: the promotion commit was refused (nothing was written")
    assert "refused by this repository" in result.stderr and "Traceback" not in result.stderr
    again = memstack("promote", cwd=store)  # the same again: still nothing left behind
    assert again.returncode == 2 and state(store) == before

    if kept is None:
        script.unlink()
    else:
        script.write_bytes(kept)
    done = memstack("promote", cwd=store)
    assert done.returncode == 0, done.stderr
    assert git(store, "status", "--porcelain").stdout == ""
    assert state(store)["pending"] == 0
    log = subprocess.run(["git", "log", "-1", "--format=%B"], cwd=store, capture_output=True, text=True).stdout
    assert "Memstack-Routed: 3" in log
