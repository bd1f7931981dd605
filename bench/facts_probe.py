"""Probe the fact store at scale: write N facts straight into kb/facts files, then time queries.

    python bench/facts_probe.py [--facts 1000000] [--out bench/out/facts-probe]

Measures (docs/reference.md, figures: recall / get-valid-at on 1,000,000 facts, < 50 ms warm, < 2 s cold):
- the first query on a fresh clone (no index: it reads the files, and starts a background build),
- that build of the SQLite index from nothing, in the background and in the foreground,
- a cold query: a new process, the index on disk (the OS page cache may still be warm),
- warm queries: the same process asking again (median of many),
- the command line end to end (`memstack recall`),
- the query after 100 facts appended through memstack and after 100 appended behind its back.
Not a test: the numbers depend on the machine. Prints one table.
"""

import argparse
import os
import random
import resource
import shutil
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import orjson

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
from memstack.base.ids import agent_tag  # noqa: E402
from memstack.base.times import month as month_of  # noqa: E402

T = TypeVar("T")
JAN_2025 = 1_735_689_600_000
DAY = 86_400_000
AGENTS = [f"agent{n}" for n in range(10)]
MONTHS = 10  # 10 agents x 10 months = 100 files
PREDICATES = ("decided", "chose", "pattern", "prefers", "likes", "status")


def write_store(out: Path, count: int, subjects: int) -> None:
    """`count` facts over 100 files; a fifth of them closed, as a store that has lived a while."""
    if out.exists():
        shutil.rmtree(out)
    (out / "kb" / "facts").mkdir(parents=True)
    shutil.copyfile(ROOT / "store-template" / "memstack.yaml", out / "memstack.yaml")
    rng = random.Random(7)
    per_file = count // (len(AGENTS) * MONTHS)
    number = 0
    for agent in AGENTS:
        folder = out / "kb" / "facts" / agent
        folder.mkdir()
        for month in range(MONTHS):
            lines = []
            for _ in range(per_file):
                recorded = JAN_2025 + month * 31 * DAY + rng.randrange(28 * DAY)
                valid_from = recorded - rng.randrange(400 * DAY)
                closed = rng.random() < 0.2
                fact = {
                    "id": f"{recorded:012x}{number:012x}{agent_tag(agent)}",
                    "subject": f"subject-{rng.randrange(subjects)}",
                    "predicate": rng.choice(PREDICATES), "object": f"object text number {number} of the probe",
                    "valid_from": valid_from, "valid_to": valid_from + rng.randrange(1, 90 * DAY) if closed else None,
                    "confidence": round(rng.random(), 3), "recorded_at": recorded, "table": "knowledge",
                    "expired_at": recorded + DAY if closed else None, "superseded_by": None, "source": None,
                    "agent": agent, "intake_id": None,
                }
                lines.append(orjson.dumps(fact, option=orjson.OPT_SORT_KEYS | orjson.OPT_APPEND_NEWLINE))
                number += 1
            (folder / f"{month_of(JAN_2025 + month * 31 * DAY)}.jsonl").write_bytes(b"".join(lines))


def timed(fn: Callable[..., T], *args: Any) -> tuple[float, T]:
    start = time.perf_counter()
    result = fn(*args)
    return time.perf_counter() - start, result


def index_current(out: Path) -> bool:
    from memstack.kb.index import catchup, schema

    db = schema.DB.connect(out)
    try:
        return catchup.sync(db, out, budget=0)
    finally:
        db.close()


def in_new_process(out: Path, code: str) -> float:
    """Seconds a fresh Python process takes for `code` (after importing memstack.factstore)."""
    probe = (f"import time, sys; from pathlib import Path; from memstack.kb import factstore; "
             f"root = Path({str(out)!r}); t = time.perf_counter(); {code}; print(time.perf_counter() - t)")
    proc = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    return float(proc.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--facts", type=int, default=1_000_000)
    parser.add_argument("--subjects", type=int, default=20_000)
    parser.add_argument("--out", type=Path, default=ROOT / "bench" / "out" / "facts-probe")
    args = parser.parse_args()
    from memstack.kb import factfiles, facts, factstore
    from memstack.kb.index import build, schema

    out = args.out.resolve()
    rows: list[tuple[str, str]] = []
    seconds, _ = timed(write_store, out, args.facts, args.subjects)
    rows.append((f"write {args.facts:,} facts into 100 files", f"{seconds:.1f} s"))
    size = sum(p.stat().st_size for p in (out / "kb" / "facts").rglob("*.jsonl"))
    rows.append(("fact files", f"{size / 2**20:.0f} MiB"))

    now = JAN_2025 + 200 * DAY
    subject = "subject-42"
    started = time.perf_counter()
    fresh = in_new_process(out, f"factstore.get_valid_at(root, {now}, {subject!r})")
    rows.append(("first query on a fresh clone, no index (answered from the files)", f"{fresh * 1000:.0f} ms"))
    fresh_recall = in_new_process(out, f"factstore.recall(root, {subject!r}, {now}, 50)")
    rows.append(("  recall, same (while the index builds)", f"{fresh_recall * 1000:.0f} ms"))
    while build.building(out) or not index_current(out):
        time.sleep(0.1)
    rows.append(("  the background build of the index done after", f"{time.perf_counter() - started:.1f} s"))
    schema.DB.drop(out)
    foreground = in_new_process(out, "from memstack.kb.index import build; build.main([str(root)])")
    rows.append(("  the same build in the foreground (python -m memstack.kb.index)", f"{foreground:.1f} s"))
    rows.append(("index size", f"{(out / schema.DB_NAME).stat().st_size / 2**20:.0f} MiB"))
    cold = in_new_process(out, f"factstore.get_valid_at(root, {now}, {subject!r})")
    rows.append(("get-valid-at --subject, cold (new process, index on disk)", f"{cold * 1000:.1f} ms"))
    cold_recall = in_new_process(out, f"factstore.recall(root, {subject!r}, {now}, 50)")
    rows.append(("recall, cold (new process)", f"{cold_recall * 1000:.1f} ms"))

    queries: list[tuple[str, Callable[[str], list[dict[str, Any]]]]] = [
        ("get-valid-at --subject", lambda s: factstore.get_valid_at(out, now, s)),
        ("get-valid-at --subject --as-of", lambda s: factstore.get_valid_at(out, now, s, now - 30 * DAY)),
        ("recall", lambda s: factstore.recall(out, s, now, 50)),
        ("history", lambda s: factstore.history(out, s)),
    ]
    for label, call in queries:
        call(subject)
        samples = [timed(call, f"subject-{n}")[0] for n in range(50)]
        rows.append((f"{label}, warm (median of 50 subjects)", f"{statistics.median(samples) * 1000:.2f} ms"))
    answer = factstore.get_valid_at(out, now, subject)
    about = [f for _, f in factfiles.scan_for(out, [subject]) if f["subject"] == subject]
    assert answer == facts.valid_at(about, now, subject)  # the index agrees with the files
    rows.append((f"facts valid at the probe instant for {subject}", str(len(answer))))

    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"}
    cli = []
    for _ in range(5):
        start = time.perf_counter()
        subprocess.run(["memstack", "recall", "--store", str(out), "--subject", subject, "--now-ts", str(now),
                        "--json"], capture_output=True, check=True, env=env)
        cli.append(time.perf_counter() - start)
    rows.append(("`memstack recall --json` end to end (median of 5)", f"{statistics.median(cli) * 1000:.0f} ms"))

    batch = [facts.make(subject=subject, predicate="decided", object=f"new {n}", valid_from=now, recorded_at=now,
                        agent="agent0") for n in range(100)]
    seconds, _ = timed(factstore.append_many, out, batch, False)
    rows.append(("append 100 facts through memstack", f"{seconds * 1000:.0f} ms"))
    seconds, _ = timed(factstore.get_valid_at, out, now, subject)
    rows.append(("  then get-valid-at (index already current)", f"{seconds * 1000:.1f} ms"))
    target = out / "kb" / "facts" / "agent1" / f"{month_of(JAN_2025)}.jsonl"
    extra = [facts.make(subject=subject, predicate="chose", object=f"pulled {n}", valid_from=now, recorded_at=now,
                        agent="agent1") for n in range(100)]
    with open(target, "ab") as handle:
        handle.write(b"".join(orjson.dumps(f, option=orjson.OPT_SORT_KEYS | orjson.OPT_APPEND_NEWLINE) for f in extra))
    seconds, _ = timed(factstore.get_valid_at, out, now, subject)
    rows.append(("  100 appended behind its back (git pull), then get-valid-at", f"{seconds * 1000:.1f} ms"))
    closing = [factstore.Closing(f["id"], now + DAY, now + DAY, None) for f in batch[:10]]
    seconds, _ = timed(factstore.close_many, out, closing)
    rows.append(("close 10 facts (one rewrite of a 10,000-line file)", f"{seconds * 1000:.0f} ms"))
    seconds, _ = timed(factstore.get_valid_at, out, now, subject)
    rows.append(("  then get-valid-at", f"{seconds * 1000:.1f} ms"))
    rows.append(("peak memory of this process", f"{resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MiB"))
    rows.append(("peak memory of a child (the index build)",
                 f"{resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024:.0f} MiB"))

    width = max(len(label) for label, _ in rows)
    print(f"| {'measure'.ljust(width)} | value |\n|{'-' * (width + 2)}|-------|")
    for label, value in rows:
        print(f"| {label.ljust(width)} | {value} |")


if __name__ == "__main__":
    main()
