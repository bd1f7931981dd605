"""Promotion at scale: streamed reads that fit a memory limit, views a rebuild agrees with, progress on a terminal."""

import fcntl
import json
import os
import pty
import resource
import shutil
import struct
import subprocess
import sys
import termios
from pathlib import Path

import pytest

from helpers import MEMSTACK, git, memstack, view_entries

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))
import generate  # noqa: E402  (bench/generate.py: a store written straight in the store's format)

NOW = "2026-03-01T00:00:00Z"


def generated(root: Path, facts: int, intake: int) -> Path:
    return generate.make_store(root, facts, intake)


def limited(limit_mib: int, *args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    """`memstack ARGS` with its address space (and that of git and the hook it starts) capped."""
    def cap() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (limit_mib * 2**20, limit_mib * 2**20))

    return subprocess.run([MEMSTACK, *args], cwd=cwd, capture_output=True, text=True, preexec_fn=cap)


@pytest.mark.slow
def test_a_store_larger_than_a_memory_limit_still_promotes_and_checks(tmp_path: Path) -> None:
    # 20,000 facts and 20,000 pending records: the code before streaming needed more than 150 MiB of
    # address space for this promotion alone (killed at that limit), and before the routing pass kept
    # its records as small tuples and fact lines (read back a batch at a time) more than 120 MiB; now
    # it, its commit's hook and check --all fit in 100 MiB.
    store = generated(tmp_path / "store", 20_000, 20_000)
    files = sum(p.stat().st_size for p in (store / "kb" / "facts").rglob("*.jsonl"))
    files += sum(p.stat().st_size for p in (store / "intake").rglob("*.jsonl"))
    assert files > 12 * 2**20
    done = limited(100, "promote", "--now-ts", NOW, "--json", cwd=store)
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert sum(result["routed"].values()) == 20_000 and result["commit"]
    assert git(store, "status", "--porcelain").stdout == ""
    checked = limited(100, "check", "--all", cwd=store)
    assert checked.returncode == 0, checked.stdout + checked.stderr


def test_after_promote_a_rebuild_changes_nothing(tmp_path: Path) -> None:
    store = generated(tmp_path / "store", 400, 400)
    first = json.loads(memstack("promote", "--now-ts", NOW, "--json", cwd=store).stdout)
    assert first["routed"]["binder"] > 0 and first["commit"]
    # the views lag the facts (a direct fact add), a human ratifies one waiting record, new intake arrives
    added = memstack("fact", "add", "--agent", "agent1", "--subject", "subject-3", "--predicate", "decided",
                     "--object", "something else", "--valid-from", "2025-01-01T00:00:00Z",
                     "--recorded-at", "2025-01-01T00:00:00Z", cwd=store)
    assert added.returncode == 0, added.stderr
    waiting = view_entries(store, "binder_queue")[0]["id"]
    decided = memstack("binder", "ratify", waiting, "--by", "a human", cwd=store)
    assert decided.returncode == 0, decided.stderr
    wrote = memstack("intake", "write", "--agent", "agent2", "--content", "tabs are fine", "--tier", "verified",
                     "--confidence", "0.9", "--subject", "subject-7", "--predicate", "prefers", "--object", "tabs",
                     "--created-at", "2025-06-01T00:00:00Z", cwd=store)
    assert wrote.returncode == 0, wrote.stderr
    second = json.loads(memstack("promote", "--now-ts", NOW, "--json", cwd=store).stdout)
    assert second["ratified"] == 1 and second["routed"] == {"knowledge": 1} and second["commit"]
    assert waiting not in {r["id"] for r in view_entries(store, "binder_queue")}
    for args in (("rebuild", "--check"), ("check", "--all")):
        ran = memstack(*args, cwd=store)
        assert ran.returncode == 0, ran.stdout + ran.stderr
    assert json.loads(memstack("rebuild", "--json", cwd=store).stdout)["changed"] == []
    third = json.loads(memstack("promote", "--now-ts", NOW, "--json", cwd=store).stdout)
    assert third["routed"] == {} and third["commit"] is None


def under_a_terminal(*args: str, cwd: Path) -> tuple[int, bytes, bytes]:
    """`memstack ARGS` with stderr on a pseudo-terminal: (exit code, stdout, what the terminal showed)."""
    main, secondary = pty.openpty()
    fcntl.ioctl(secondary, termios.TIOCSWINSZ, struct.pack("HHHH", 30, 100, 0, 0))  # 30 rows, 100 columns
    proc = subprocess.Popen([MEMSTACK, *args], cwd=cwd, stdout=subprocess.PIPE, stderr=secondary)
    os.close(secondary)
    shown = b""
    while True:
        try:
            chunk = os.read(main, 65536)
        except OSError:  # EIO: the terminal's last writer is gone
            break
        if not chunk:
            break
        shown += chunk
    os.close(main)
    assert proc.stdout is not None
    with proc.stdout:
        out = proc.stdout.read()
    return proc.wait(), out, shown


@pytest.mark.parametrize(("verb", "bar"), [(("promote", "--now-ts", NOW), b"promote: routing"),
                                           (("rebuild",), b"views: reading source files")])
def test_progress_shows_on_a_terminal_and_never_through_a_pipe(tmp_path: Path, verb: tuple[str, ...],
                                                                bar: bytes) -> None:
    store = generated(tmp_path / "store", 300, 300)
    if verb[0] == "rebuild":
        shutil.rmtree(store / "kb" / "knowledge", ignore_errors=True)  # something to rebuild
    piped = memstack(*verb, cwd=store)
    assert piped.returncode == 0, piped.stderr
    assert bar.decode() not in piped.stderr and "\r" not in piped.stderr
    git(store, "reset", "-q", "--hard")
    git(store, "clean", "-fdq")
    if verb[0] == "rebuild":
        shutil.rmtree(store / "kb" / "knowledge", ignore_errors=True)
    code, out, shown = under_a_terminal(*verb, cwd=store)
    assert code == 0, shown
    assert bar in shown and b"\r" in shown  # tqdm's bar, redrawn in place
    assert bar not in out  # never on stdout
    git(store, "reset", "-q", "--hard")
    git(store, "clean", "-fdq")
    if verb[0] == "rebuild":
        shutil.rmtree(store / "kb" / "knowledge", ignore_errors=True)
    code, out, shown = under_a_terminal(*verb, "--json", cwd=store)
    assert code == 0 and bar not in shown  # --json: one document, no bar beside it
    json.loads(out)


def _memory_files(store: Path) -> dict[str, bytes]:
    return {str(p.relative_to(store)): p.read_bytes() for p in sorted(store.rglob("*"))
            if p.is_file() and (p.parts[len(store.parts)] in ("kb", "intake") or p.name == "willow.md")}


@pytest.fixture(scope="module")
def _batches(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """9,000 pending records over 2,000 facts, made once for the module: a fresh clone of the store before its
    promotion (never run in: each test clones it again) and the store after one promotion never interrupted."""
    folder = tmp_path_factory.mktemp("batches")
    whole = generated(folder / "whole", 2_000, 9_000)
    pending = folder / "pending"
    git(folder, "clone", "-q", "--local", str(whole), str(pending))
    done = memstack("promote", "--now-ts", NOW, "--json", cwd=whole)
    assert done.returncode == 0, done.stderr
    assert sum(json.loads(done.stdout)["routed"].values()) == 9_000
    return pending, whole


@pytest.mark.parametrize("step", [7, 14])
def test_a_promotion_killed_between_its_batches_is_finished_by_the_next_run(
        _batches: tuple[Path, Path], tmp_path: Path, step: int) -> None:
    # 9,000 pending records: more than one batch (promote.gather.BATCH, 8,192) to read back and route, and
    # the ledger goes out in appends to the shards of the records' intake files. Killed (SIGKILL) at a write
    # step among the fact files' appends (7: four of ten written) or among the shards' (14: one written), the next
    # run writes what is missing and lands on the same bytes as a run never interrupted (`_batches`). (Steps 1-2:
    # the fresh clone keeps memstack.yaml's parse in .memstack/config.json; 3-12 the fact files; 13 on the ledger.)
    pending, whole = _batches
    killed = tmp_path / "killed"
    git(tmp_path, "clone", "-q", "--local", str(pending), str(killed))
    stopped = subprocess.run([MEMSTACK, "promote", "--now-ts", NOW], cwd=killed, capture_output=True, text=True,
                             env={**os.environ, "MEMSTACK_TEST_KILL_AT": str(step)})
    assert stopped.returncode == -9, stopped.stderr
    written = sum(p.read_bytes().count(b"\n") for p in (killed / "kb" / "promotions").glob("*/*.jsonl"))
    assert (0 < written < 9_000) if step == 14 else written == 0
    assert git(killed, "status", "--porcelain").stdout  # facts written, nothing committed
    again = memstack("promote", "--now-ts", NOW, "--json", cwd=killed)
    assert again.returncode == 0, again.stderr
    assert json.loads(again.stdout)["commit"]
    assert git(killed, "status", "--porcelain").stdout == ""
    assert _memory_files(killed) == _memory_files(whole)
    assert memstack("check", "--all", cwd=killed).returncode == 0
