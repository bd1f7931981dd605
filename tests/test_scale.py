"""Issue 15: whole-store work in bounded memory, and progress shown on a terminal only.

The memory test runs real `memstack` processes under an address-space limit
(`resource.setrlimit(RLIMIT_AS)`, set in the child before it starts) smaller than
the store's memory files: a command that loaded a whole layer would die of a
MemoryError. The progress tests give the command's stderr a pseudo-terminal (`pty`),
as a user's terminal is, then a pipe, as a CI log is.
"""

import fcntl
import os
import pty
import resource
import struct
import subprocess
import sys
import tempfile
import termios
from pathlib import Path

import orjson
import pytest

from helpers import MEMSTACK, git, memstack
from memstack.base import jsonio

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "bench"))
import generate  # noqa: E402  (bench/generate.py: stores written straight in the store's format)

LIMIT_MIB = 64  # the address space a command gets; the most any command here needs on a tiny store is ~44 MiB
FACTS, INTAKE = 8_000, 18_000  # big_store: with ~3.8 KB of padding an intake record, ~70 MiB of intake
PAD = " ".join(["the build log of this module says what each step took and why"] * 30)  # ~1.9 KB of plain words


def padded(files: dict[str, list[bytes]], field: str, text: str) -> dict[str, list[bytes]]:
    out = {}
    for relpath, lines in files.items():
        records = [orjson.loads(line) for line in lines]
        for record in records:
            record[field] += text
        out[relpath] = [jsonio.dumps_line(r) for r in records]
    return out


@pytest.fixture(scope="module")
def big_store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A store whose memory files (~77 MiB; ~70 MiB of intake) are larger than LIMIT_MIB: FACTS facts, INTAKE
    intake records."""
    from memstack.workflows import install

    root = tmp_path_factory.mktemp("big") / "store"
    install.init(root, generate.AGENTS)
    generate.write_files(root, padded(generate.facts(FACTS), "object", " " + PAD[:300]))
    generate.write_files(root, padded(generate.intake(INTAKE), "content", " " + PAD + " " + PAD))
    git(root, "add", "-A")
    git(root, "commit", "-q", "--no-verify", "-m", "a store larger than the memory limit")  # hooks: not the point
    return root


def memory_files(root: Path) -> int:
    return sum(p.stat().st_size for top in ("intake", "kb") for p in (root / top).rglob("*.jsonl"))


def limited(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    def limit() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (LIMIT_MIB << 20, LIMIT_MIB << 20))

    return subprocess.run([MEMSTACK, *args], cwd=root, capture_output=True, text=True, preexec_fn=limit)


def test_a_store_larger_than_the_memory_limit_rebuilds_and_checks(big_store: Path) -> None:
    assert memory_files(big_store) > LIMIT_MIB << 20
    ran = limited(big_store, "rebuild")
    assert ran.returncode == 0, ran.stderr
    assert "rebuilt kb/knowledge/" in ran.stdout
    shards = sorted((big_store / "kb/knowledge").glob("*/*.json"))
    assert sum(len(orjson.loads(p.read_bytes())) for p in shards) == FACTS // 4  # every fourth fact is open
    for path in shards:
        view = orjson.loads(path.read_bytes())
        assert [f["subject"] for f in view] == sorted(f["subject"] for f in view)
    git(big_store, "add", "-A")
    git(big_store, "commit", "-q", "--no-verify", "-m", "views")
    ran = limited(big_store, "rebuild", "--check")
    assert (ran.returncode, ran.stdout.strip()) == (0, "derived files are fresh"), ran.stderr
    ran = limited(big_store, "check", "--all")  # the views committed: the audit rebuilds them to compare
    assert (ran.returncode, ran.stdout.strip()) == (0, "memstack check: ok — every file at HEAD"), ran.stderr
    ran = limited(big_store, "check", "--range", "HEAD~2..HEAD")
    assert ran.returncode == 0 and "ok" in ran.stdout, ran.stderr


def test_the_limit_is_real(big_store: Path) -> None:
    """The same limit kills a process that holds the store's intake in memory (so the test above means something)."""
    def limit() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (LIMIT_MIB << 20, LIMIT_MIB << 20))

    hog = ("import sys, pathlib; data = [p.read_bytes() for p in pathlib.Path('intake').rglob('*.jsonl')];"
           " print(len(data))")
    ran = subprocess.run([sys.executable, "-c", hog], cwd=big_store, capture_output=True, text=True, preexec_fn=limit)
    assert ran.returncode != 0 and "MemoryError" in ran.stderr


# ---- progress -----------------------------------------------------------------------------------

def on_terminal(root: Path, *args: str) -> tuple[int, str, str]:
    """Run memstack with stderr on a pseudo-terminal of 100 columns; (exit code, stdout, what the terminal got)."""
    main, child = pty.openpty()
    fcntl.ioctl(child, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 100, 0, 0))  # a terminal has a size
    with tempfile.TemporaryFile() as stdout:  # a file, not a pipe: a long answer never blocks the writer
        proc = subprocess.Popen([MEMSTACK, *args], cwd=root, stdout=stdout, stderr=child)
        os.close(child)
        shown = b""
        while True:
            try:
                data = os.read(main, 4096)
            except OSError:  # the terminal's other end closed: the process is done writing
                break
            if not data:
                break
            shown += data
        os.close(main)
        proc.wait()
        stdout.seek(0)
        out = stdout.read()
    return proc.wait(), out.decode(), shown.decode(errors="replace")


@pytest.fixture
def small_store(store: Path) -> Path:
    for n in range(3):
        memstack("fact", "add", "--subject", f"s{n}", "--predicate", "decided", "--object", "o", "--valid-from", "0",
                 "--recorded-at", "1767225600000", cwd=store)
        git(store, "add", "-A")
        git(store, "commit", "-q", "--no-verify", "-m", f"fact {n}")
    return store


def test_check_all_and_range_show_progress_on_a_terminal_only(small_store: Path) -> None:
    code, out, shown = on_terminal(small_store, "check", "--all")
    assert code == 0 and out.splitlines()[-1].startswith("memstack check: ok")  # after any stale view shard
    assert "checking" in shown and "files" in shown and "\r" in shown
    code, out, shown = on_terminal(small_store, "check", "--range", "HEAD~2..HEAD")
    assert code == 0 and "checking 2 commits" in shown
    code, out, shown = on_terminal(small_store, "check", "--all", "--json")
    assert code == 0 and orjson.loads(out)["ok"] and shown == ""
    piped = memstack("check", "--all", cwd=small_store)
    assert piped.returncode == 0 and piped.stderr == ""


def test_an_index_build_shows_progress_on_a_terminal_only(store: Path) -> None:
    from memstack.kb.index import catchup

    generate.write_files(store, generate.facts(5_000))  # ~1.7 MB of fact files: a build worth a bar
    assert sum(p.stat().st_size for p in (store / "kb/facts").rglob("*.jsonl")) >= catchup.SHOW_PROGRESS
    end = str(generate.START + 5_000 * generate.STEP)
    code, out, shown = on_terminal(store, "fact", "get-valid-at", "--ts", end)
    assert code == 0 and len(out.splitlines()) == 1_250
    assert "indexing facts" in shown
    code, out, shown = on_terminal(store, "fact", "get-valid-at", "--ts", end)
    assert code == 0 and "indexing facts" not in shown  # built: nothing to catch up
    for suffix in ("", "-wal", "-shm"):
        (store / f".memstack/facts.sqlite3{suffix}").unlink(missing_ok=True)
    piped = memstack("fact", "get-valid-at", "--ts", end, cwd=store)
    assert piped.returncode == 0 and piped.stderr == "" and len(piped.stdout.splitlines()) == 1_250


def test_list_verbs_stream_a_store_larger_than_the_memory_limit(big_store: Path) -> None:
    ran = limited(big_store, "intake", "list")
    assert ran.returncode == 0, ran.stderr
    lines = ran.stdout.splitlines()
    assert len(lines) == INTAKE and lines == sorted(lines)  # oldest first: each line starts with created_at
    end = generate.START + FACTS * generate.STEP
    ran = limited(big_store, "fact", "get-valid-at", "--ts", str(end))  # builds the index first, then lists
    assert ran.returncode == 0, ran.stderr
    assert len(ran.stdout.splitlines()) == FACTS // 4
    ran = limited(big_store, "fact", "get-valid-at", "--ts", str(end), "--json")
    assert ran.returncode == 0 and len(orjson.loads(ran.stdout)["items"]) == FACTS // 4, ran.stderr


def test_review_of_a_range_larger_than_the_memory_limit_lists_every_record(big_store: Path) -> None:
    """`review` of the commit that wrote the whole store: every record in the JSON report, in its order,
    and the Markdown's counts, while the process cannot hold the range."""
    wrote = git(big_store, "log", "--format=%H", "-1", "--grep", "a store larger than the memory limit").stdout.strip()
    spec = f"{wrote}~1..{wrote}"
    ran = limited(big_store, "review", spec, "--format", "json", "--full")
    assert ran.returncode == 0, ran.stderr
    assert len(ran.stdout) > LIMIT_MIB << 20  # the report alone would not fit
    report = orjson.loads(ran.stdout)
    assert [r["id"] for r in report["intake_records"]] == [generate.intake_id(n) for n in range(INTAKE)]
    assert all(r["content"].endswith(PAD) for r in report["intake_records"])
    facts = report["facts_added"]
    assert sorted(f["id"] for f in facts) == sorted(generate.fact_id(n) for n in range(FACTS))
    assert [(f["subject"], f["id"]) for f in facts] == sorted((f["subject"], f["id"]) for f in facts)
    tiers = generate.TIERS  # generate.intake: agent n % 10, tier n % 4
    expected: dict[str, dict[str, int]] = {}
    for n in range(INTAKE):
        counts = expected.setdefault(generate.AGENTS[n % 10], {})
        counts[tiers[n % 4]] = counts.get(tiers[n % 4], 0) + 1
    assert report["intake"] == {agent: dict(sorted(c.items())) for agent, c in sorted(expected.items())}
    assert (report["commits"], report["violations"]) == (1, [])
    superseded = FACTS // 4 * 3  # generate.facts: 4 versions of each subject, the first 3 added already closed
    assert len(report["facts_superseded"]) == report["counts"]["facts_superseded"] == superseded
    assert all(item["before"] is None for item in report["facts_superseded"])
    ran = limited(big_store, "review", spec)
    assert ran.returncode == 0, ran.stderr
    assert f"{INTAKE} intake records, {FACTS} facts added, {superseded} superseded," in ran.stdout
    assert f"… and {FACTS - 50} more facts (`memstack review {spec} --full` lists all)" in ran.stdout
    assert f"- `{generate.intake_id(0)}` observed 0.0, 2024-01-01T00:00:00.000Z: **observation 0**:" in ran.stdout
    assert ran.stdout.count("#### agent") == 10 \
        and ran.stdout.count(f"- … and {INTAKE // 10 - 50} more records from agent") == 10


def test_review_shows_progress_on_a_terminal_only(small_store: Path) -> None:
    code, out, shown = on_terminal(small_store, "review", "HEAD~2..HEAD")
    assert code == 0 and out.startswith("## memstack review of `HEAD~2..HEAD` (2 commits)")
    assert "reading the range" in shown and "checking 2 commits" in shown
    code, out, shown = on_terminal(small_store, "review", "HEAD~2..HEAD", "--format", "json")
    assert code == 0 and orjson.loads(out)["commits"] == 2 and shown == ""
    piped = memstack("review", "HEAD~2..HEAD", cwd=small_store)
    assert piped.returncode == 0 and piped.stderr == ""
