"""Helpers for tests: the real `memstack` command and git, as subprocesses."""

import json
import os
import re
import shlex
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import pytest

# The command of the environment running the tests: beside its Python (`.venv/bin/pytest` run without
# activating the venv), else on PATH.
MEMSTACK = shutil.which("memstack", path=os.path.dirname(sys.executable)) or shutil.which("memstack") or ""


def memstack(*args: str, cwd: Path | None = None, input: str | None = None,
             env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """Run the installed `memstack` command as a user would."""
    assert MEMSTACK, "the memstack command is not on PATH: pip install the project first"
    return subprocess.run([MEMSTACK, *args], cwd=cwd, input=input, capture_output=True, text=True,
                          env={**os.environ, **(env or {})})


def ok(store: Path, *args: str) -> Any:
    """`memstack ARGS --json` in `store`, which must succeed: the document it prints ({} when it prints none)."""
    result = memstack(*args, "--json", cwd=store)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout) if result.stdout.strip() else {}


def git(cwd: Path, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, check=check)


FENCE = re.compile(r"^```(?:sh|bash|console)\n(.*?)^```", re.S | re.M)  # a shell block of a Markdown page


def as_script(commands: list[str]) -> str:
    """One shell, each line as pasted; the first line that fails stops it and says which."""
    return "\n".join(f"{{ {line}\n}} || {{ echo {shlex.quote('FAILED: ' + line)} >&2; exit 1; }}"
                     for line in commands) + "\n"


def tree_snapshot(root: Path) -> dict[str, bytes]:
    """Every file of a store outside .git and .memstack, to prove a refused command wrote nothing."""
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*"))
            if p.is_file() and ".git" not in p.relative_to(root).parts[:1]
            and ".memstack" not in p.relative_to(root).parts[:1]}


PAGE_KEYS = {"items", "next_cursor", "remaining"}


def items(document: object) -> list:
    """The items of a list verb's `--json` page (pages.py: `{"items", "next_cursor", "remaining"}`, and
    `note` for recall), checking the shape; the whole answer fits one page here."""
    assert isinstance(document, dict) and PAGE_KEYS <= set(document) <= PAGE_KEYS | {"note"}, document
    assert document["next_cursor"] is None and document["remaining"] == 0, document
    return document["items"]


# A complete handoff (front matter added by `handoff write`), for the handoff, boot and review tests.
HANDOFF = """# Session summary

Moved the parser forward.

## Open threads

- finish the lexer
- review PR 12

## Capability table

| capability | status |
|---|---|
| parse | done |
| lex | partial |
"""


def ledger_files(store: Path) -> dict[str, bytes]:
    """The promotion ledger's shards (kb/promotions/<agent>/YYYY-MM-DD.jsonl), path -> bytes."""
    shards = sorted((store / "kb/promotions").glob("*/*.jsonl"))
    return {p.relative_to(store).as_posix(): p.read_bytes() for p in shards}


def ledger_lines(store: Path) -> list[dict]:
    """Every line of the promotion ledger, shard after shard (agent by agent, day by day)."""
    return [json.loads(line) for data in ledger_files(store).values() for line in data.splitlines()]


def view_entries(store: Path, view: str) -> list[dict[str, Any]]:
    """Every entry of a derived view (`knowledge`, `jeles_atoms`, `opus_atoms`, `binder_queue`): its
    shards, kb/<view>/<agent>/<file>.json, read in path order."""
    return [entry for path in sorted((store / "kb" / view).glob("*/*.json")) for entry in json.loads(path.read_bytes())]


def view_files(store: Path) -> dict[str, bytes]:
    """The bytes of every view shard, by store-relative path."""
    return {path.relative_to(store).as_posix(): path.read_bytes() for path in sorted((store / "kb").glob("*/*/*.json"))}


T = TypeVar("T")


def made_from(template: Path, factory: pytest.TempPathFactory, name: str, make: Callable[[Path], T]) -> tuple[Path, T]:
    """A copy of the store `template` (in a new folder `name`) after `make(copy)`: the copy, and what `make`
    returned. A module or session fixture makes it once; `copied_to` hands each test a copy."""
    root = factory.mktemp(name) / "store"
    shutil.copytree(template, root, symlinks=True)
    return root, make(root)


def copied_to(made: Path, store: Path) -> Path:
    """`store` (whatever it holds) replaced by a copy of `made`."""
    shutil.rmtree(store, ignore_errors=True)
    shutil.copytree(made, store, symlinks=True)
    return store


def code_with_memory(top: Path, files: dict[str, str], agent: str = "alice") -> Path:
    """A new git repository at `top` holding `files` (path -> text), committed without hooks, with a store
    made by `memstack init .memory --agent AGENT`; returns `top` (its store is `top / ".memory"`)."""
    top.mkdir(parents=True)
    git(top, "init", "-q", "-b", "main")
    for path, text in files.items():
        (top / path).parent.mkdir(parents=True, exist_ok=True)
        (top / path).write_text(text)
    git(top, "add", "-A")
    git(top, "commit", "-q", "--no-verify", "-m", "code")
    made = memstack("init", ".memory", "--agent", agent, cwd=top)
    assert made.returncode == 0, made.stderr
    return top
