"""A reader that stops early (`memstack intake list | head -1`): memstack stops quietly, exit 141 (what a shell
reports for a command whose pipe was closed), never a traceback, whichever verb was writing."""

import os
import subprocess
from pathlib import Path

import pytest

from helpers import MEMSTACK, memstack
from memstack.intake import log as intake

# Python's own buffering, as a user's shell has it (a test runner may set PYTHONUNBUFFERED).
ENV = {k: v for k, v in os.environ.items() if k != "PYTHONUNBUFFERED"}


@pytest.fixture(scope="module")
def big_store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A store whose listings run to megabytes, far past what a pipe holds (64 KiB)."""
    root = tmp_path_factory.mktemp("pipe") / "store"
    assert memstack("init", str(root), "--agent", "alice").returncode == 0
    for n in range(40):
        intake.write(root, intake.make_record(agent="alice", content=f"note {n} " + "word " * 6_000,
                                              created_at=f"2026-01-01T00:00:{n:02}Z"))
    return root


def _closed_after(store: Path, args: tuple[str, ...], lines: int, unbuffered: bool = False
                  ) -> tuple[int, str]:
    """Run `memstack args`, read `lines` lines of its stdout, close the pipe; its exit code and stderr."""
    env = {**ENV, "PYTHONUNBUFFERED": "1"} if unbuffered else ENV
    with subprocess.Popen([MEMSTACK, *args], cwd=store, env=env, stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, bufsize=0) as proc:
        assert proc.stdout is not None and proc.stderr is not None
        for _ in range(lines):
            assert proc.stdout.readline()
        proc.stdout.close()
        err = proc.stderr.read().decode()
        return proc.wait(), err


@pytest.mark.parametrize("args", [("intake", "list", "--json"), ("intake", "list", "--limit", "40", "--json")])
def test_a_pipe_closed_after_the_first_line_ends_the_verb_quietly(big_store: Path, args: tuple[str, ...]) -> None:
    code, err = _closed_after(big_store, args, lines=1)
    assert (code, err) == (141, "")


VERBS = [("status",), ("intake", "list"), ("search", "word"), ("promote", "--dry-run"), ("recall", "--subject", "x")]


@pytest.mark.parametrize("args", [*VERBS, ("--help",), ("intake", "--help")])
def test_a_pipe_closed_before_anything_was_written_ends_the_verb_quietly(big_store: Path,
                                                                           args: tuple[str, ...]) -> None:
    code, err = _closed_after(big_store, args, lines=0)
    assert (code, err) == (141, "")


@pytest.mark.parametrize("args", VERBS)
def test_unbuffered_output_to_a_closed_pipe_ends_the_verb_quietly(big_store: Path, args: tuple[str, ...]) -> None:
    code, err = _closed_after(big_store, args, lines=0, unbuffered=True)
    assert (code, err) == (141, "")


def test_a_reader_that_reads_everything_sees_exit_0(big_store: Path) -> None:
    with subprocess.Popen([MEMSTACK, "intake", "list", "--json"], cwd=big_store, env=ENV,
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE) as proc:
        out, err = proc.communicate()
    assert (proc.returncode, err) == (0, b"") and out.startswith(b"{")
