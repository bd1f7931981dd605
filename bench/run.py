"""The memstack benchmark: the figures of docs/reference.md, measured on generated stores, as one table.

    python bench/run.py [--sizes 1000,100000,1000000] [--repeat 5] [--quick] [--out PATH] [--keep]

For each size it generates, once, a store of that many facts and as many intake
records (bench/generate.py: the files written straight in the store's format,
committed once) in a temporary folder, then measures every figure of FIGURES
as the median of --repeat runs of a real subprocess: the `memstack` command
(or, for the library, a fresh `python` that imports it). Peak memory is the
largest resident set of that process or of any child it waited for (os.wait4
of that one process). It prints one Markdown table, and writes it as JSON to
--out (default bench/results.json; with --quick, only when --out is given).

A figure is one small function in FIGURES; one whose command does not exist
yet (`memstack <verb> --help` exits 2) gets a "not available" row instead.
Not a test: the numbers depend on the machine. tests/test_bench.py runs
--quick only to prove that every figure still has its row.
"""

import argparse
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))
import anchored  # noqa: E402  (bench/anchored.py: a code repository with anchored memory)
import generate  # noqa: E402  (bench/generate.py, beside this file)

from memstack.base.ids import agent_tag  # noqa: E402

GIB = 2**30
SIZES = (1_000, 100_000, 1_000_000)
QUICK_SIZES = (200, 600)
PROMOTE_SIZE = 100_000  # the figure: promote of 100,000 pending intake records
PROMOTE_LARGE = 200_000  # docs/reference.md, figures: promote of 200,000 pending, through the hook, < 15 s
COMMIT = {"intake": 100, "facts": 100, "closed": 10}  # the pre-commit check's change
# Text that passes both stages of the I8 prefilter yet holds no credential (a URL, "AWS", a password
# assigned a template the detector's own filter recognises): detect-secrets reads every such line.
I8_TEXT = ' (https://example.com/runbook; AWS eu-west-1; password = "${DB_PASSWORD}")'
RANGE = {"commits": 100, "intake": 10, "facts": 10, "closed": 1}  # each commit of the range check
MERGE_LINES = 100_000  # each side of the merge driver's files
ANCHORS = 10_000  # the `anchors` figures: open facts with one code anchor each (--quick: QUICK_ANCHORS) into
QUICK_ANCHORS = 1_000  # ANCHORS // 5 files of 60 lines, ANCHORS // 20 of them changed by one commit
ANCHORED_STORE = 10  # the anchored facts are a tenth of the store's open facts (100,000 for 10,000 anchors)
WARM_QUERIES = 20  # warm queries per API probe process
LINE = orjson.OPT_SORT_KEYS | orjson.OPT_APPEND_NEWLINE
# Variables that point git at one repository (set inside hooks); the bench's git calls must not inherit them.
GIT_LOCATION = ("GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_PREFIX", "GIT_OBJECT_DIRECTORY",
                "GIT_ALTERNATE_OBJECT_DIRECTORIES", "GIT_COMMON_DIR")


# ---- running one measured process -----------------------------------------------------------------

@dataclass
class Ran:
    seconds: float
    peak_kib: int  # ru_maxrss of the process (and of the children it waited for), KiB on Linux
    code: int
    out: bytes
    err: bytes
    cpu: float = 0.0  # processor seconds, user + system, of the process and the children it waited for


# Measured processes are started by this small, long-lived launcher rather than by the bench itself:
# a child's ru_maxrss starts at the resident size of the process that forked it (Linux records the
# parent's high-water mark at exec), so a bench that has grown would be counted in every figure.
LAUNCHER = r"""
import json, os, subprocess, sys, time
for request in sys.stdin:
    job = json.loads(request)
    with open(job["out"], "wb") as out, open(job["err"], "wb") as err:
        start = time.perf_counter()
        try:
            proc = subprocess.Popen(job["argv"], cwd=job["cwd"], env=job["env"], stdin=subprocess.DEVNULL,
                                    stdout=out, stderr=err)
        except OSError as exc:
            err.write(str(exc).encode())
            print(json.dumps({"seconds": 0.0, "peak_kib": 0, "code": 127}), flush=True)
            continue
        _, status, usage = os.wait4(proc.pid, 0)  # this one child (and what it waited for), nothing else
        seconds = time.perf_counter() - start
        proc.returncode = os.waitstatus_to_exitcode(status)  # reaped here: Popen must not wait again
    print(json.dumps({"seconds": seconds, "peak_kib": usage.ru_maxrss, "code": proc.returncode,
                      "cpu": usage.ru_utime + usage.ru_stime}), flush=True)
"""


class Launcher:
    """Runs a command to its end and reports its wall time, exit code and peak memory (os.wait4)."""

    def __init__(self, work: Path) -> None:
        self.io = work / ".io"
        self.io.mkdir()
        self.proc = subprocess.Popen([sys.executable, "-c", LAUNCHER], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, text=True)

    def run(self, argv: list[str], cwd: Path, env: dict[str, str]) -> Ran:
        assert self.proc.stdin and self.proc.stdout
        out, err = self.io / "out", self.io / "err"
        job = {"argv": argv, "cwd": str(cwd), "env": env, "out": str(out), "err": str(err)}
        self.proc.stdin.write(json.dumps(job) + "\n")
        self.proc.stdin.flush()
        answer = self.proc.stdout.readline()
        if not answer:
            raise RuntimeError("the bench's launcher process died")
        done = json.loads(answer)
        return Ran(done["seconds"], done["peak_kib"], done["code"], out.read_bytes(), err.read_bytes(),
                   done.get("cpu", 0.0))

    def close(self) -> None:
        if self.proc.stdin:
            self.proc.stdin.close()
        self.proc.wait()
        if self.proc.stdout:
            self.proc.stdout.close()


class Failed(Exception):
    """A measured command did not do what the figure needs (the row says so)."""


def expect(ran: Ran, argv: list[str], code: int = 0) -> Ran:
    if ran.code != code:
        said = (ran.err or ran.out).decode(errors="replace").strip().splitlines()[-3:]
        raise Failed(f"`{' '.join(argv[:3])}` exited {ran.code}: {' / '.join(said)}")
    return ran


@dataclass
class Outcome:
    samples: list[float] = field(default_factory=list)  # seconds, one per run
    peak_kib: int = 0
    note: str = ""
    unavailable: str = ""  # why the figure cannot be measured (its command is missing)
    size_mib: float | None = None  # for a figure of size on disk (Figure.mib_limit)

    def add(self, ran: Ran | float, peak_kib: int = 0) -> None:
        if isinstance(ran, Ran):
            self.samples.append(ran.seconds)
            self.peak_kib = max(self.peak_kib, ran.peak_kib)
        else:
            self.samples.append(ran)
            self.peak_kib = max(self.peak_kib, peak_kib)


# ---- the stores -----------------------------------------------------------------------------------

@dataclass
class Store:
    root: Path
    size: int
    base: str  # the generated commit: every figure leaves the store there
    end_ts: int  # just after the last generated record: each subject's last version is valid then

    def subjects(self, count: int) -> list[str]:
        """`count` subjects spread over the store, each with a valid `decided` fact at end_ts (what
        recall returns): generate.py gives slot n the predicate PREDICATES[n % 6], 4 versions."""
        slots = max(1, self.size // 4 - 1)  # the last slot may lack versions
        return [f"subject-{(slots * i // count) // 6 * 6}" for i in range(count)]


def session_change(root: Path, agent: str, seq: int, n_intake: int, n_facts: int, n_closed: int,
                   words: str = "") -> list[str]:
    """What an agent's session commits, written into the work tree: `n_intake` records appended to
    its latest intake day, `n_facts` facts appended to its latest fact month, closing the last
    `n_closed` open facts there (each superseded by a new fact of the same subject and predicate)."""
    from memstack.base.times import iso, parse_ts

    touched = []
    if n_facts:
        path = max((root / "kb" / "facts" / agent).glob("*.jsonl"))
        lines = path.read_bytes().splitlines()
        last = orjson.loads(lines[-1])["recorded_at"]
        closing = [i for i in range(len(lines) - 1, -1, -1) if b'"valid_to":null' in lines[i]][:n_closed]
        new = []
        for k in range(n_facts):
            ts = last + k + 1  # same month as the file's last fact (generated times are whole minutes)
            fact = {"id": f"{ts:012x}b{seq:03x}{k:08x}{agent_tag(agent)}", "subject": f"bench-{seq}-{k}",
                    "predicate": "decided", "object": f"session {seq} decision {k}{words}", "valid_from": ts,
                    "valid_to": None, "confidence": 0.9, "recorded_at": ts, "table": "knowledge", "expired_at": None,
                    "superseded_by": None, "source": "bench", "agent": agent, "intake_id": None}
            if k < len(closing):
                old = orjson.loads(lines[closing[k]])
                fact.update(subject=old["subject"], predicate=old["predicate"])
                old.update(valid_to=ts, expired_at=ts, superseded_by=fact["id"])
                lines[closing[k]] = orjson.dumps(old, option=orjson.OPT_SORT_KEYS)
            new.append(orjson.dumps(fact, option=LINE))
        path.write_bytes(b"\n".join(lines) + b"\n" + b"".join(new))
        touched.append(str(path.relative_to(root)))
    if n_intake:
        path = max((root / "intake" / agent).glob("*.jsonl"))
        last = parse_ts(orjson.loads(path.read_bytes().splitlines()[-1])["created_at"], "created_at")
        records = []
        for k in range(n_intake):
            ts = last + k + 1
            records.append(orjson.dumps({
                "id": f"{ts:012x}b{seq:03x}{k:08x}{agent_tag(agent)}",
                "content": f"session {seq}: observation {k}{words}",
                "title": f"observation {k}", "source": "bench", "agent": agent, "tier": "observed",
                "confidence": 0.5, "keywords": ["bench"], "tags": ["bench"], "created_at": iso(ts)}, option=LINE))
        with path.open("ab") as handle:
            handle.write(b"".join(records))
        touched.append(str(path.relative_to(root)))
    return touched


# ---- the bench: options, environment, generated stores ------------------------------------------

GENERATE = f"""
import sys
sys.path.insert(0, {str(HERE)!r})
from pathlib import Path
import generate
generate.make_store(Path(sys.argv[1]), int(sys.argv[2]), int(sys.argv[2]))
"""


class Bench:
    def __init__(self, args: argparse.Namespace) -> None:
        self.args = args
        self.quick: bool = args.quick
        self.sizes: list[int] = args.sizes
        self.repeat: int = args.repeat
        self.work = Path(tempfile.mkdtemp(prefix="memstack-bench-"))
        self.launcher = Launcher(self.work)
        bindir = str(Path(sys.executable).parent)
        # As a user runs it: PYTHONDONTWRITEBYTECODE (set on some CI machines) would compile every module
        # on every run and add a fixed ~0.3 s to each command.
        self.env = {k: v for k, v in os.environ.items()
                    if k not in GIT_LOCATION and k not in ("MEMSTACK_HOME", "WILLOW_HOME", "MEMSTACK_AGENT",
                                                             "PYTHONDONTWRITEBYTECODE")}
        self.env["PATH"] = bindir + os.pathsep + self.env.get("PATH", "")  # the hook finds this memstack too
        found = shutil.which("memstack", path=bindir)
        self.memstack = [found] if found else [sys.executable, "-m", "memstack"]
        if not found:
            self.env["PYTHONPATH"] = str(ROOT) + os.pathsep + self.env.get("PYTHONPATH", "")
        self.stores: dict[int, Store] = {}
        self.cache: dict[Any, Any] = {}
        self.range_commits = 5 if self.quick else RANGE["commits"]
        self.blame_commits = 200 if self.quick else BLAME["commits"]
        self.merge_lines = 2_000 if self.quick else MERGE_LINES

    def log(self, message: str) -> None:
        print(f"[{time.strftime('%H:%M:%S')}] {message}", file=sys.stderr, flush=True)

    def run(self, argv: list[str], cwd: Path | None = None, code: int = 0) -> Ran:
        return expect(self.launcher.run(argv, cwd or self.work, self.env), argv, code)

    def ms(self, *args: str, cwd: Path | None = None, code: int = 0) -> Ran:
        return self.run([*self.memstack, *args], cwd, code)

    def git(self, cwd: Path, *args: str) -> str:
        return self.run(["git", *args], cwd).out.decode().strip()

    def has(self, verb: str) -> bool:
        """Whether `memstack VERB` exists (argparse exits 2 on an unknown verb)."""
        if verb not in self.cache:
            self.cache[verb] = self.launcher.run([*self.memstack, verb, "--help"], self.work, self.env).code == 0
        return bool(self.cache[verb])

    def store(self, size: int) -> Store:
        """The store of `size` facts and `size` intake records, generated once per run."""
        if size not in self.stores:
            root = self.work / f"store-{size}"
            self.log(f"generating a store of {size:,} facts and {size:,} intake records")
            # In a process of its own: the generator holds every line in memory (~1 GiB for 1,000,000).
            made = self.run([sys.executable, "-c", GENERATE, str(root), str(size)])
            self.log(f"  generated and committed in {made.seconds:.1f} s, {made.peak_kib / 1024:.0f} MiB")
            self.stores[size] = Store(root, size, self.git(root, "rev-parse", "HEAD"),
                                      generate.START + size * generate.STEP)
        return self.stores[size]

    def reset(self, store: Store) -> None:
        """Back to the generated commit, work tree and index (the git-ignored index in .memstack/ stays)."""
        self.git(store.root, "reset", "-q", "--hard", store.base)
        self.git(store.root, "clean", "-fdq")

    def ensure_index(self, root: Path) -> None:
        """The fact index current (untimed), so a figure measures queries, not a catch-up."""
        from memstack.kb.index import build

        while True:
            while build.building(root):
                time.sleep(0.1)
            self.run([sys.executable, "-m", "memstack.kb.index", str(root)])
            if not build.building(root):
                return

    def clone(self, store: Store, name: str) -> Path:
        target = self.work / name
        shutil.rmtree(target, ignore_errors=True)
        self.git(self.work, "clone", "-q", "--local", str(store.root), str(target))
        return target

    def remove(self, path: Path) -> None:
        from memstack.kb.index import build

        if (path / ".memstack").exists():
            while build.building(path):  # a detached build still at work must not litter a deleted folder
                time.sleep(0.1)
        shutil.rmtree(path, ignore_errors=True)

    def close(self) -> None:
        self.launcher.close()
        if hasattr(self.cache.get("pg"), "remove"):
            self.cache["pg"].remove()
        if self.args.keep:
            self.log(f"kept the stores in {self.work}")
        else:
            shutil.rmtree(self.work, ignore_errors=True)


# ---- the figures: one small function each ---------------------------------------------------------

def fig_help(b: Bench, size: int | None) -> Outcome:
    out = Outcome()
    for _ in range(b.repeat):
        out.add(b.ms("--help"))
    return out


def fig_check_noop(b: Bench, size: int) -> Outcome:
    store, out = b.store(size), Outcome()
    b.reset(store)
    for _ in range(b.repeat):
        out.add(b.ms("check", "--staged", cwd=store.root))
    return out


def fig_index_build(b: Bench, size: int) -> Outcome:
    store, out = b.store(size), Outcome()
    for path in (store.root / ".memstack").glob("facts.sqlite3*"):
        path.unlink()
    out.add(b.run([sys.executable, "-m", "memstack.kb.index", str(store.root)]))
    db = store.root / ".memstack" / "facts.sqlite3"
    out.note = f"the index takes {db.stat().st_size / 2**20:.1f} MiB on disk"
    return out


def fig_fresh_clone_query(b: Bench, size: int) -> Outcome:
    from memstack.kb.index import build

    store, out = b.store(size), Outcome()
    clone = b.clone(store, f"fresh-clone-{size}")
    try:
        ran = b.ms("recall", "--store", str(clone), "--subject", store.subjects(1)[0], "--now-ts", str(store.end_ts),
                   "--json", cwd=clone)
        if not orjson.loads(ran.out)["items"]:
            raise Failed("the first recall on a fresh clone found nothing")
        out.add(ran)
        start = time.perf_counter()
        background = not build.freshness(clone)["fresh"]  # the files answered; a detached build catches up
        deadline = time.monotonic() + 600
        while background and not build.freshness(clone)["fresh"] and time.monotonic() < deadline:
            time.sleep(0.1)  # (the build may not have taken its lock yet: wait for what it writes)
        while build.building(clone):
            time.sleep(0.1)
        b.run([sys.executable, "-m", "memstack.kb.index", str(clone)])  # whatever is left (nothing, normally)
        caught_up = time.perf_counter() - start
        out.note = (f"a background index build, started by that query, caught up {caught_up:.1f} s later"
                    if background else "the query indexed the files itself (less than the 32 MiB budget)")
    finally:
        b.remove(clone)
    return out


API_PROBE = r"""
import json, sys, time
start = time.perf_counter()
from pathlib import Path
from memstack.kb import factstore
root, verb, ts, subjects = Path(sys.argv[1]), sys.argv[2], int(sys.argv[3]), sys.argv[4:]
if verb == "recall":
    ask = lambda subject: factstore.recall(root, subject, ts, 50)
else:
    ask = lambda subject: factstore.get_valid_at(root, ts, subject)
found = [len(ask(subjects[0]))]
cold = time.perf_counter() - start
warm = []
for subject in subjects[1:]:
    t = time.perf_counter()
    found.append(len(ask(subject)))
    warm.append(time.perf_counter() - t)
print(json.dumps({"cold": cold, "warm": warm, "found": found}))
"""


def api_probes(b: Bench, size: int, verb: str) -> list[tuple[dict[str, Any], Ran]]:
    """--repeat new processes, each timing its first query (import included) then WARM_QUERIES more."""
    key = ("api", size, verb)
    if key not in b.cache:
        store = b.store(size)
        b.ensure_index(store.root)
        subjects = store.subjects(b.repeat * (WARM_QUERIES + 1))
        probes = []
        for n in range(b.repeat):
            mine = subjects[n::b.repeat]
            ran = b.run([sys.executable, "-c", API_PROBE, str(store.root), verb, str(store.end_ts), *mine])
            answer = json.loads(ran.out)
            if not all(answer["found"]):
                raise Failed(f"{verb} found nothing for a subject the store holds")
            probes.append((answer, ran))
        b.cache[key] = probes
    result: list[tuple[dict[str, Any], Ran]] = b.cache[key]
    return result


def fig_api_cold(verb: str) -> Callable[[Bench, int], Outcome]:
    def measure(b: Bench, size: int) -> Outcome:
        out = Outcome()
        for answer, ran in api_probes(b, size, verb):
            out.add(answer["cold"], ran.peak_kib)
        return out
    return measure


def fig_api_warm(verb: str) -> Callable[[Bench, int], Outcome]:
    def measure(b: Bench, size: int) -> Outcome:
        out = Outcome()
        for answer, ran in api_probes(b, size, verb):
            for seconds in answer["warm"]:
                out.add(seconds, ran.peak_kib)
        return out
    return measure


def fig_cli_query(verb: str) -> Callable[[Bench, int], Outcome]:
    def measure(b: Bench, size: int) -> Outcome:
        store, out = b.store(size), Outcome()
        b.ensure_index(store.root)
        for subject in store.subjects(b.repeat):
            args = (["recall", "--now-ts"] if verb == "recall" else ["fact", "get-valid-at", "--ts"])
            ran = b.ms(*args, str(store.end_ts), "--subject", subject, "--store", str(store.root), "--json",
                       cwd=store.root)
            if not orjson.loads(ran.out)["items"]:
                raise Failed(f"{verb} found nothing for {subject}")
            out.add(ran)
        return out
    return measure


def fig_check_staged(b: Bench, size: int) -> Outcome:
    store, out = b.store(size), Outcome()
    try:
        paths = session_change(store.root, generate.AGENTS[0], 0, COMMIT["intake"], COMMIT["facts"], COMMIT["closed"])
        b.git(store.root, "add", "--", *paths)
        for _ in range(b.repeat):
            out.add(b.ms("check", "--staged", cwd=store.root))
    finally:
        b.reset(store)
    return out


def fig_check_staged_i8(b: Bench, size: int) -> Outcome:
    store, out = b.store(size), Outcome()
    try:
        paths = session_change(store.root, generate.AGENTS[0], 2, COMMIT["intake"], COMMIT["facts"], COMMIT["closed"],
                               words=I8_TEXT)
        b.git(store.root, "add", "--", *paths)
        for _ in range(b.repeat):
            out.add(b.ms("check", "--staged", cwd=store.root))
    finally:
        b.reset(store)
    return out


def fig_commit_hook(b: Bench, size: int) -> Outcome:
    store, out = b.store(size), Outcome()
    try:
        paths = session_change(store.root, generate.AGENTS[1], 1, COMMIT["intake"], COMMIT["facts"], COMMIT["closed"])
        b.git(store.root, "add", "--", *paths)
        out.add(b.run(["git", "commit", "-q", "-m", "bench: one session"], store.root))
    finally:
        b.reset(store)
    return out


def fig_check_range(b: Bench, size: int) -> Outcome:
    store, out = b.store(size), Outcome()
    try:
        for k in range(b.range_commits):
            paths = session_change(store.root, generate.AGENTS[k % len(generate.AGENTS)], 100 + k,
                                   RANGE["intake"], RANGE["facts"], RANGE["closed"])
            b.git(store.root, "add", "--", *paths)
            b.git(store.root, "commit", "-q", "--no-verify", "-m", f"bench: session {k}")
        for _ in range(b.repeat):
            out.add(b.ms("check", "--range", f"{store.base}..HEAD", cwd=store.root))
    finally:
        b.reset(store)
    return out


BLAME = {"commits": 10_000, "fact_every": 50}  # the history `blame` reads through


def blame_history(store: Store, commits: int, fact_every: int) -> str:
    """`commits` commits on top of the generated one (one `git fast-import`): each rewrites a small SOIL
    record; every `fact_every`-th also appends a fact to the file of the store's first fact, so that
    file has a long history of its own. Returns the first fact's id (the oldest: the deepest search)."""
    relpath = f"kb/facts/{generate.AGENTS[0]}/{generate.month(generate.START)}.jsonl"
    data = (store.root / relpath).read_bytes()
    stream, at = [], 1_800_000_000
    for k in range(commits):
        parts = [f"commit refs/heads/main\ncommitter Bench <bench@example.com> {at + k} +0000\n"
                 f"data {len(f'bench: commit {k}')}\nbench: commit {k}\n".encode()]
        if k == 0:
            parts.append(f"from {store.base}\n".encode())
        soil = orjson.dumps({"key": "counter", "collection": "bench", "value": k}) + b"\n"
        parts.append(f"M 100644 inline store/bench/counter.json\ndata {len(soil)}\n".encode() + soil)
        if k % fact_every == 0:
            ts = generate.START + k
            data += orjson.dumps({"id": f"{ts:012x}{k:012x}{agent_tag(generate.AGENTS[0])}", "subject": f"extra-{k}",
                                  "predicate": "uses", "object": "x", "valid_from": ts, "valid_to": None,
                                  "confidence": 0.5, "recorded_at": ts, "table": "knowledge", "expired_at": None,
                                  "superseded_by": None, "source": "bench", "agent": generate.AGENTS[0],
                                  "intake_id": None}, option=generate.OPTS)
            parts.append(f"M 100644 inline {relpath}\ndata {len(data)}\n".encode() + data + b"\n")
        stream.append(b"".join(parts))
    subprocess.run(["git", "fast-import", "--quiet", "--force"], cwd=store.root, input=b"".join(stream), check=True)
    subprocess.run(["git", "reset", "-q", "--hard", "main"], cwd=store.root, check=True)
    return generate.fact_id(0)


def fig_blame(b: Bench, size: int) -> Outcome:
    if not b.has("blame"):
        return Outcome(unavailable="no `memstack blame`")
    store, out = b.store(size), Outcome()
    commits = b.blame_commits
    try:
        fact = blame_history(store, commits, BLAME["fact_every"])
        cpu = []
        for _ in range(b.repeat):
            ran = b.ms("blame", fact, "--json", cwd=store.root)
            out.add(ran)
            cpu.append(ran.cpu)
        found = json.loads(ran.out)
        assert found["fact"]["added"]["commit"] == store.base and found["closed_by"], found
        out.note = (f"{commits:,} commits, {commits // BLAME['fact_every']:,} of them to the fact's file;"
                    f" {statistics.median(cpu):.2f} s of processor time (git included)")
    finally:
        b.reset(store)
    return out


def fig_promote(b: Bench, size: int) -> Outcome:
    if not b.has("promote"):
        return Outcome(unavailable="`memstack promote` does not exist yet (`memstack promote --help` exits 2)")
    store, out = b.store(size), Outcome()
    for _ in range(b.repeat):
        clone = b.clone(store, f"promote-{size}")
        try:
            b.ensure_index(clone)
            # the commit's hook
            subprocess.run([*b.memstack, "install"], cwd=clone, env=b.env, check=True, capture_output=True)
            out.add(b.ms("promote", "--now-ts", str(store.end_ts + 86_400_000), cwd=clone))
            promoted = sum(p.read_bytes().count(b"\n") for p in (clone / "kb" / "promotions").glob("*/*.jsonl"))
            out.note = f"{promoted:,} records routed (lines of the ledger shards kb/promotions/)"
        finally:
            b.remove(clone)
    return out


def promoted_clone(b: Bench, size: int) -> tuple[Path, str]:
    """A clone of the store whose every record is promoted (made once per size, untimed), and that
    promotion's commit: a store as it is after use, its Binder queue view holding the records
    routed there (at 1,000,000 records, 189 MB)."""
    store = b.store(size)
    key = ("promoted", size)
    if key not in b.cache:
        clone = b.clone(store, f"promoted-{size}")
        b.ensure_index(clone)
        subprocess.run([*b.memstack, "install"], cwd=clone, env=b.env, check=True, capture_output=True)
        # git's automatic gc after this promotion's commit (tens of thousands of new objects) packs them in the
        # foreground, untimed, and the promotion's facts are in the index after: no detached gc or index
        # catch-up competes with a figure measured next.
        b.git(clone, "config", "gc.autoDetach", "false")
        b.ms("promote", "--now-ts", str(store.end_ts + 86_400_000), cwd=clone)
        b.git(clone, "config", "--unset", "gc.autoDetach")
        b.ensure_index(clone)
        b.cache[key] = (clone, b.git(clone, "rev-parse", "HEAD"))
    return b.cache[key]  # type: ignore[no-any-return]


def fig_promote_one_to(sub_tier: str) -> Callable[[Bench, int], Outcome]:
    """`memstack promote` with one record pending in the promoted clone, through the hook: its cost
    must follow what is pending. The record goes to `knowledge` (verified, 0.9) or to the `binder`
    (observed, 0.5: the Binder queue view changes). The runs follow one another as a user's promotions
    do (each one record more), the clone reset only after the last: a reset between them would make
    each run re-read the fact file it took back (the fact index follows files), which a user pays only
    after a reset, a checkout or a pull that rewrote that file."""

    def measure(b: Bench, size: int) -> Outcome:
        store, out = b.store(size), Outcome()
        clone, base = promoted_clone(b, size)
        fields = (["--tier", "verified", "--confidence", "0.9"] if sub_tier == "knowledge"
                  else ["--tier", "observed", "--confidence", "0.5"])
        written = []
        try:
            for n in range(b.repeat):
                b.ms("intake", "write", "--agent", generate.AGENTS[0], "--content", f"one more {n}", *fields,
                     "--subject", f"subject-{n}", "--predicate", "decided", "--object", f"one more {n}",
                     "--created-at", str(store.end_ts), cwd=clone)
                before = _objects_kib(b, clone)
                out.add(b.ms("promote", "--now-ts", str(store.end_ts + 86_400_000), cwd=clone))
                written.append(_objects_kib(b, clone) - before)
        finally:
            b.git(clone, "reset", "-q", "--hard", base)
        out.note = (f"1 record pending, routed to {sub_tier}; every other record promoted before (untimed), runs"
                    f" one after another;"
                    f" new git objects {max(written)} KiB (`git count-objects -v`, loose)")
        return out

    return measure


def _objects_kib(b: Bench, clone: Path) -> int:
    """The loose objects' size in the clone's repository, KiB (`git count-objects -v`: size)."""
    counts = dict(line.split(": ") for line in b.git(clone, "count-objects", "-v").splitlines())
    return int(counts["size"])


def fig_kb_largest(b: Bench, size: int) -> Outcome:
    """The largest file under kb/ outside kb/facts/ in the promoted clone: no derived file or ledger grows
    with the whole store (store format 2)."""
    clone, _ = promoted_clone(b, size)
    ran = b.run(["find", "kb", "-path", "kb/facts", "-prune", "-o", "-type", "f", "-printf", "%s %p\n"], clone)
    sizes = [(int(size), path) for size, path in (line.split(" ", 1) for line in ran.out.decode().splitlines())]
    largest, path = max(sizes)
    out = Outcome(size_mib=largest / 2**20, note=f"kb/{path.removeprefix('kb/')}: {largest / 1024:,.0f} KiB,"
                  f" of {len(sizes):,} files (the time: `find` listing them)")
    out.add(ran)
    return out


def fig_in_promoted(*args: str) -> Callable[[Bench, int], Outcome]:
    """A `memstack` verb run --repeat times in the promoted clone (nothing it does is written: `rebuild`
    builds every view from every fact file and the logs, the Binder queue among them, and finds them
    fresh); `{promotion}` in an argument is the promotion's commit."""
    def measure(b: Bench, size: int) -> Outcome:
        out = Outcome()
        clone, promotion = promoted_clone(b, size)
        argv = [a.format(promotion=promotion) for a in args]
        for _ in range(b.repeat):
            ran = b.ms(*argv, cwd=clone)
            out.add(ran)
        lines = ran.out.count(b"\n")
        out.note = f"a store whose every record was promoted; {lines:,} lines of output"
        return out
    return measure


def fig_migrate(b: Bench, size: int) -> Outcome:
    """`memstack migrate` of the promoted store made format 1 (untimed: its ledger in kb/promotions.jsonl, the
    `format:` line gone, committed without the hooks), through the hooks that verify it."""
    if not b.has("migrate"):
        return Outcome(unavailable="`memstack migrate` does not exist yet (`memstack migrate --help` exits 2)")
    out = Outcome()
    clone, promotion = promoted_clone(b, size)
    try:
        for _ in range(b.repeat):
            shards = sorted((clone / "kb" / "promotions").glob("*/*.jsonl"))
            if shards:  # a memstack that writes the ledger in shards: one file again, as format 1 kept it
                with (clone / "kb" / "promotions.jsonl").open("ab") as ledger:
                    for shard in shards:
                        ledger.write(shard.read_bytes())
                shutil.rmtree(clone / "kb" / "promotions")
            config = clone / "memstack.yaml"
            config.write_text("".join(line for line in config.read_text().splitlines(keepends=True)
                                      if not line.startswith("format:")))
            b.git(clone, "add", "-A")
            b.git(clone, "commit", "-q", "--no-verify", "-m", "format 1 (bench)")
            ran = b.ms("migrate", "--json", cwd=clone)
            out.add(ran)
            b.git(clone, "reset", "-q", "--hard", promotion)
    finally:
        b.git(clone, "reset", "-q", "--hard", promotion)
    moved = json.loads(ran.out)["moved"] if out.samples else 0
    out.note = f"a store whose every record was promoted; {moved:,} ledger lines moved to their shards"
    return out


def fig_rebuild(b: Bench, size: int) -> Outcome:
    if not b.has("rebuild"):
        return Outcome(unavailable="`memstack rebuild` does not exist yet (`memstack rebuild --help` exits 2)")
    store, out = b.store(size), Outcome()
    b.ensure_index(store.root)
    try:
        for _ in range(b.repeat):
            out.add(b.ms("rebuild", cwd=store.root))
            b.reset(store)
    finally:
        b.reset(store)
    return out


# ---- issue 15: the index on disk, and peak memory of the verbs that read a whole layer ---------------

MEMORY_BOUNDED = 256 * 2**20  # docs/reference.md, figures: peak memory of these verbs at any store size


def fig_index_size(b: Bench, size: int) -> Outcome:
    """The fact index built from nothing, its size on disk (the -wal folded in) as the figure."""
    store, out = b.store(size), Outcome()
    for path in (store.root / ".memstack").glob("facts.sqlite3*"):
        path.unlink()
    ran = b.run([sys.executable, "-m", "memstack.kb.index", str(store.root)])
    out.add(ran)
    out.size_mib = sum(p.stat().st_size for p in (store.root / ".memstack").glob("facts.sqlite3*")) / 2**20
    out.note = f"built in {fmt_seconds(ran.seconds)}"
    return out


def fig_verb(*args: str, views: bool = False) -> Callable[[Bench, int], Outcome]:
    """A `memstack` verb run --repeat times on the store (`views`: with the KB views committed, as a
    store that has been promoted holds them; the audit then rebuilds them to compare)."""
    def measure(b: Bench, size: int) -> Outcome:
        store, out = b.store(size), Outcome()
        b.ensure_index(store.root)
        argv = [a.format(subject=store.subjects(1)[0], ts=store.end_ts, base=store.base) for a in args]
        try:
            if views:
                b.ms("rebuild", cwd=store.root)
                b.git(store.root, "add", "-A")
                b.git(store.root, "commit", "-q", "--no-verify", "-m", "bench: views")
            for _ in range(b.repeat):
                ran = b.ms(*argv, cwd=store.root)
                out.add(ran)
            lines = ran.out.count(b"\n")
            out.note = f"{lines:,} lines of output"
        finally:
            b.reset(store)
        return out
    return measure


def fig_forget(b: Bench, size: int) -> Outcome:
    """`memstack forget ID --reason R` of an intake record (a different one each run, spread over the store)
    in the promoted clone (a store as it is after use, its views committed): a tombstone appended, the fact
    promoted from it closed with a tombstone of its own, the derived files it changes rebuilt."""
    if not b.has("forget"):
        return Outcome(unavailable="`memstack forget` does not exist yet (`memstack forget --help` exits 2)")
    out = Outcome()
    clone, base = promoted_clone(b, size)
    b.ensure_index(clone)
    try:
        for n in range(b.repeat):
            record = generate.intake_id((size - 1) * n // max(1, b.repeat - 1))
            out.add(b.ms("forget", record, "--reason", "bench: an erasure request", cwd=clone))
            b.git(clone, "reset", "-q", "--hard", base)
            b.git(clone, "clean", "-fdq")
    finally:
        b.git(clone, "reset", "-q", "--hard", base)
        b.git(clone, "clean", "-fdq")
    out.note = "one intake record a run, in the promoted store: the facts promoted from it are closed too"
    return out


EXCISE = {"commits": 10_000, "records": 10, "size": 100_000}  # the excise figure (--quick: QUICK_EXCISE commits)
QUICK_EXCISE = 200


def excise_history(root: Path, size: int, commits: int) -> list[str]:
    """`commits` commits on top of the store's (one `git fast-import`, no hooks, a few seconds for 10,000): each
    appends the next intake record (generate.py's numbering, after the store's `size`) to its agent's intake
    day, as sessions do, so a day file has up to 144 versions. Returns the EXCISE["records"] ids to forget:
    half written by the store's commit, half by these commits (each in every later version of its file)."""
    tip = subprocess.run(["git", "rev-parse", "HEAD"], cwd=root, capture_output=True, text=True, check=True)
    held: dict[str, bytes] = {}
    importer = subprocess.Popen(["git", "fast-import", "--quiet", "--force"], cwd=root, stdin=subprocess.PIPE)
    assert importer.stdin is not None
    for k in range(commits):
        [(relpath, [line])] = generate.intake(1, offset=size + k).items()
        if relpath not in held:
            held[relpath] = (root / relpath).read_bytes() if (root / relpath).is_file() else b""
        held[relpath] += line
        message = f"bench: session {k}"
        importer.stdin.write(f"commit refs/heads/main\ncommitter Bench <bench@example.com> {1_800_000_000 + k} +0000\n"
                             f"data {len(message)}\n{message}\n".encode()
                             + (f"from {tip.stdout.strip()}\n".encode() if k == 0 else b"")
                             + f"M 100644 inline {relpath}\ndata {len(held[relpath])}\n".encode() + held[relpath]
                             + b"\n")
    importer.stdin.close()
    if importer.wait() != 0:
        raise Failed("git fast-import of the excise history failed")
    subprocess.run(["git", "reset", "-q", "--hard", "main"], cwd=root, check=True)
    half = EXCISE["records"] // 2
    return ([generate.intake_id(size * i // half) for i in range(half)]
            + [generate.intake_id(size + commits * i // half) for i in range(half)])


def excise_sizes(sizes: list[int]) -> list[int | None]:
    """The store of EXCISE["size"] records (with --quick, the smallest store)."""
    return [EXCISE["size"] if max(sizes) >= EXCISE["size"] else min(sizes)]


def fig_excise(b: Bench, size: int) -> Outcome:
    """`memstack excise` of EXCISE["records"] intake records forgotten (one commit, through the hooks) in a clone
    of the store with the history of excise_history on top (untimed): one run (it rewrites the clone)."""
    if not b.has("excise"):
        return Outcome(unavailable="`memstack excise` does not exist yet (`memstack excise --help` exits 2)")
    store, out = b.store(size), Outcome()
    commits = QUICK_EXCISE if b.quick else EXCISE["commits"]
    clone = b.clone(store, f"excise-{size}")
    try:
        subprocess.run([*b.memstack, "install"], cwd=clone, env=b.env, check=True, capture_output=True)
        started = time.monotonic()
        records = excise_history(clone, size, commits)
        made = time.monotonic() - started
        # The history made here is pushed nowhere (a user pushes first: excise refuses a branch its remote
        # does not hold, docs/forgetting.md): the excise is measured alone.
        b.git(clone, "branch", "-q", "--unset-upstream")
        b.ms("forget", *records, "--reason", "bench: an erasure request", cwd=clone)
        b.git(clone, "add", "-A")
        b.git(clone, "commit", "-q", "-m", "bench: forget")
        ran = b.ms("excise", "--reason", "bench: an erasure request", "--by", "bench", "--json", cwd=clone)
        out.add(ran)
        done = json.loads(ran.out)
        assert len(done["records"]) == len(records), done["records"]
        out.note = (f"{len(records)} intake records, {commits:,} commits after the store's (made with git fast-import"
                    f" in {made:.0f} s, untimed), {done['commits']:,} commits and {done['blobs']:,} blobs rewritten;"
                    f" one run; {ran.cpu:.1f} s of processor time (git included)")
    finally:
        b.remove(clone)
    return out


# ---- the PostgreSQL replica (`memstack pg`): a throwaway cluster started by the bench ----------------

PG_PROBE = r"""
import json, sys, time
from memstack.replica.reads import ReplicaReader
dsn, verb, ts, subjects = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4:]
reader = ReplicaReader(dsn)
ask = (lambda s: reader.recall(s, ts, 50)) if verb == "recall" else (lambda s: reader.valid_at(ts, s))
found, warm = [len(ask(subjects[0]))], []
for subject in subjects[1:]:
    t = time.perf_counter()
    found.append(len(ask(subject)))
    warm.append(time.perf_counter() - t)
reader.close()
print(json.dumps({"warm": warm, "found": found}))
"""


def pg_cluster(b: Bench) -> Any:
    """The bench's PostgreSQL cluster (started once), or an Outcome saying why there is none."""
    if "pg" not in b.cache:
        import pgserver

        try:
            import psycopg  # noqa: F401
        except ImportError:
            b.cache["pg"] = Outcome(unavailable="psycopg is not installed (pip install 'memstack[pg]')")
            return b.cache["pg"]
        try:
            b.cache["pg"] = pgserver.Cluster(fsync=True)  # durable, as a real server
        except pgserver.Missing as exc:
            b.cache["pg"] = Outcome(unavailable=str(exc))
        except Exception as exc:  # once, not once a row
            b.cache["pg"] = Outcome(note=f"failed: PostgreSQL did not start: {exc}")
    return b.cache["pg"]


def pg_synced(b: Bench, size: int) -> tuple[Store, str] | Outcome:
    """The store of `size` and a database holding its replica at the generated commit (made once)."""
    cluster = pg_cluster(b)
    if isinstance(cluster, Outcome):
        return cluster
    store = b.store(size)
    key = ("pg-db", size)
    if key not in b.cache:
        b.cache[key] = cluster.new_database()
        b.ms("pg", "sync", b.cache[key], cwd=store.root)
    return store, b.cache[key]


def fig_pg_sync_full(b: Bench, size: int) -> Outcome:
    cluster = pg_cluster(b)
    if isinstance(cluster, Outcome):
        return cluster
    store, out = b.store(size), Outcome()
    b.reset(store)
    for _ in range(b.repeat):
        dsn = cluster.new_database()
        ran = b.ms("pg", "sync", dsn, "--json", cwd=store.root)
        report = orjson.loads(ran.out)
        if report["mode"] != "full" or report["inserted"].get("facts", 0) < size:
            raise Failed(f"the full sync copied {report['inserted']}")
        out.add(ran)
        cluster.sql(f"DROP DATABASE {dsn.rsplit('=', 1)[1]}")
    return out


def fig_pg_sync_commit(b: Bench, size: int) -> Outcome:
    synced = pg_synced(b, size)
    if isinstance(synced, Outcome):
        return synced
    (store, dsn), out = synced, Outcome()
    try:
        for n in range(b.repeat):
            b.reset(store)
            b.ms("pg", "sync", dsn, cwd=store.root)  # back to the generated commit (untimed)
            paths = session_change(store.root, generate.AGENTS[2], 200 + n, COMMIT["intake"], COMMIT["facts"],
                                   COMMIT["closed"])
            b.git(store.root, "add", "--", *paths)
            b.git(store.root, "commit", "-q", "--no-verify", "-m", "bench: one session")
            ran = b.ms("pg", "sync", dsn, "--json", cwd=store.root)
            report = orjson.loads(ran.out)
            # The new facts and those closed (a small store may have fewer than 10 open in that file).
            if report["mode"] != "incremental" or not COMMIT["facts"] <= report["inserted"].get("facts", 0) \
                    <= COMMIT["facts"] + COMMIT["closed"] or report["inserted"].get("intake") != COMMIT["intake"]:
                raise Failed(f"the incremental sync copied {report['inserted']}")
            out.add(ran)
    finally:
        b.reset(store)
        b.ms("pg", "sync", dsn, cwd=store.root)
    return out


def fig_pg_query_cli(b: Bench, size: int) -> Outcome:
    synced = pg_synced(b, size)
    if isinstance(synced, Outcome):
        return synced
    (store, dsn), out = synced, Outcome()
    for subject in store.subjects(b.repeat):
        ran = b.ms("recall", "--now-ts", str(store.end_ts), "--subject", subject, "--pg", dsn, "--json", cwd=b.work)
        if not orjson.loads(ran.out)["items"]:
            raise Failed(f"recall --pg found nothing for {subject}")
        out.add(ran)
    return out


def fig_pg_query_warm(verb: str) -> Callable[[Bench, int], Outcome]:
    def measure(b: Bench, size: int) -> Outcome:
        synced = pg_synced(b, size)
        if isinstance(synced, Outcome):
            return synced
        (store, dsn), out = synced, Outcome()
        subjects = store.subjects(b.repeat * (WARM_QUERIES + 1))
        for n in range(b.repeat):
            ran = b.run([sys.executable, "-c", PG_PROBE, dsn, verb, str(store.end_ts), *subjects[n::b.repeat]])
            answer = json.loads(ran.out)
            if not all(answer["found"]):
                raise Failed(f"{verb} from the replica found nothing for a subject the store holds")
            for seconds in answer["warm"]:
                out.add(seconds, ran.peak_kib)
        return out
    return measure


def merge_files(b: Bench, kind: str) -> tuple[Path, Path, Path, str, int]:
    """Base, ours and theirs of `kind` (log or facts): each side MERGE_LINES lines, the last 1%
    its own; fact files also close 100 open facts on each side (different ones). Returns the
    three paths, the path in the repository and the line count a correct merge has."""
    lines, extra = b.merge_lines, b.merge_lines // 100
    folder = b.work / f"merge-{kind}"
    if folder.exists():
        return b.cache[("merge", kind)]  # type: ignore[no-any-return]
    folder.mkdir()
    if kind == "log":
        records = [r for chunk in generate.intake(lines + extra).values() for r in chunk]
        records.sort()  # by id: any order will do, a stable one
        base, ours, theirs = records[:lines - extra], records[lines - extra:lines], records[lines:]
        relpath = "intake/agent0/2024-01-01.jsonl"
        sides = (base, base + ours, base + theirs)
    else:
        records = [r for chunk in generate.facts(lines + extra).values() for r in chunk]
        base, ours, theirs = records[:lines - extra], records[lines - extra:lines], records[lines:]
        open_at = [i for i, line in enumerate(base) if b'"valid_to":null' in line]
        step = max(1, len(open_at) // 200)
        chosen = open_at[::step][:200]

        def closed(line: bytes, ts: int) -> bytes:
            fact = orjson.loads(line)
            fact.update(valid_to=fact["valid_from"] + ts, expired_at=fact["recorded_at"] + ts, superseded_by=None)
            return orjson.dumps(fact, option=LINE)

        mine, yours = list(base), list(base)
        for i in chosen[0::2]:
            mine[i] = closed(base[i], 1000)
        for i in chosen[1::2]:
            yours[i] = closed(base[i], 2000)
        relpath = "kb/facts/agent0/2024-01.jsonl"
        sides = (base, mine + ours, yours + theirs)
    paths = tuple(folder / name for name in ("base", "ours", "theirs"))
    for path, content in zip(paths, sides, strict=True):
        path.write_bytes(b"".join(content))
    found = (*paths, relpath, len(base) + len(ours) + len(theirs))
    b.cache[("merge", kind)] = found
    return found  # type: ignore[return-value]


def fig_merge(kind: str) -> Callable[[Bench, int | None], Outcome]:
    def measure(b: Bench, size: int | None) -> Outcome:
        base, ours, theirs, relpath, expected = merge_files(b, kind)
        out = Outcome()
        for _ in range(b.repeat):
            result = ours.with_name("result")
            shutil.copyfile(ours, result)
            out.add(b.ms("merge-driver", str(base), str(result), str(theirs), relpath))
            got = result.read_bytes().count(b"\n")
            if got != expected:
                raise Failed(f"the merged file has {got} lines, {expected} expected")
        return out
    return measure


# ---- search (issue 14) ------------------------------------------------------------------------------

SEARCH_PROBE = r"""
import json, sys, time
start = time.perf_counter()
from pathlib import Path
from memstack.search.query import search
root, queries = Path(sys.argv[1]), sys.argv[2:]
found = [len(search(root, queries[0], limit=20)["hits"])]
cold = time.perf_counter() - start
warm = []
for query in queries[1:]:
    t = time.perf_counter()
    found.append(len(search(root, query, limit=20)["hits"]))
    warm.append(time.perf_counter() - t)
common = []
for query in COMMON:
    t = time.perf_counter()
    found.append(len(search(root, query, limit=20)["hits"]))
    common.append(time.perf_counter() - t)
print(json.dumps({"cold": cold, "warm": warm, "common": common, "found": found}))
"""
COMMON_QUERIES = ("observation", "build takes", "value subject")  # words every intake record, or fact, holds
SEARCH_PROBE = SEARCH_PROBE.replace("COMMON", repr(COMMON_QUERIES))
SEARCH_BUILD = ("import sys; from pathlib import Path; from memstack.search import index;"
                " index.opened(Path(sys.argv[1])).__enter__()")


def search_queries(store: Store, count: int) -> list[str]:
    """Queries an agent might type, each naming a record the store holds: an intake observation by its
    number (two words, all must match) and a fact by its subject (one hyphenated word: a phrase)."""
    queries = []
    for i in range(count):
        n = 100 + (store.size - 200) * i // max(1, count)
        queries.append(f"observation {n}" if i % 2 == 0 else f"subject-{n // 4}")
    return queries


def ensure_search_index(b: Bench, root: Path) -> None:
    """The search index current (untimed): figures measure queries, not a build."""
    b.run([sys.executable, "-c", SEARCH_BUILD, str(root)])


def fig_search_build(b: Bench, size: int) -> Outcome:
    store, out = b.store(size), Outcome()
    for path in (store.root / ".memstack").glob("search.sqlite3*"):
        path.unlink()
    out.add(b.run([sys.executable, "-c", SEARCH_BUILD, str(store.root)]))
    db = store.root / ".memstack" / "search.sqlite3"
    out.note = f"the search index takes {db.stat().st_size / 2**20:.1f} MiB on disk"
    return out


def search_probes(b: Bench, size: int) -> list[tuple[dict[str, Any], Ran]]:
    """--repeat new processes, each timing its first search (import included) then WARM_QUERIES more."""
    key = ("search", size)
    if key not in b.cache:
        store = b.store(size)
        ensure_search_index(b, store.root)
        queries = search_queries(store, b.repeat * (WARM_QUERIES + 1))
        probes = []
        for n in range(b.repeat):
            ran = b.run([sys.executable, "-c", SEARCH_PROBE, str(store.root), *queries[n::b.repeat]])
            answer = json.loads(ran.out)
            if not all(answer["found"]):
                raise Failed("a search found nothing for a record the store holds")
            probes.append((answer, ran))
        b.cache[key] = probes
    result: list[tuple[dict[str, Any], Ran]] = b.cache[key]
    return result


def fig_search(kind: str) -> Callable[[Bench, int], Outcome]:
    def measure(b: Bench, size: int) -> Outcome:
        out = Outcome()
        for answer, ran in search_probes(b, size):
            for seconds in ([answer["cold"]] if kind == "cold" else answer[kind]):
                out.add(seconds, ran.peak_kib)
        return out
    return measure


def fig_search_cli(b: Bench, size: int) -> Outcome:
    store, out = b.store(size), Outcome()
    ensure_search_index(b, store.root)
    for query in search_queries(store, b.repeat):
        ran = b.ms("search", query, "--store", str(store.root), "--json", cwd=store.root)
        if not orjson.loads(ran.out)["hits"]:
            raise Failed(f"search found nothing for {query!r}")
        out.add(ran)
    return out


def fig_search_fresh_clone(b: Bench, size: int) -> Outcome:
    from memstack.search import build

    store, out = b.store(size), Outcome()
    clone = b.clone(store, f"search-clone-{size}")
    try:
        ran = b.ms("search", "observation 150", "--store", str(clone), "--json", cwd=clone)
        out.add(ran)
        start, behind = time.perf_counter(), orjson.loads(ran.out).get("index")
        out.note = "the search indexed the files itself (less than the 16 MiB budget)"
        if behind is not None:
            deadline = time.monotonic() + 1200
            while behind is not None and time.monotonic() < deadline:
                time.sleep(0.5)
                if not build.building(clone):
                    behind = orjson.loads(b.ms("search", "observation 150", "--store", str(clone), "--json",
                                               cwd=clone).out).get("index")
            out.note = (f"it answered from an empty index, at once; the background build it started caught up"
                        f" {time.perf_counter() - start:.1f} s later")
    finally:
        b.remove(clone)
    return out


# ---- the table of figures -------------------------------------------------------------------------

def fig_anchors(kind: str) -> Callable[[Bench, int], Outcome]:
    """`memstack anchors --json` on a code repository with `size` anchored facts (bench/anchored.py): with
    nothing changed since they were taken, or (kind "changed") just after one commit that changed a twentieth
    of the files, each run with the cache in .memstack/ cleared (the first run after the change)."""
    def measure(b: Bench, size: int) -> Outcome:
        root = b.cache.get(("anchored", size))
        if root is None:
            root = anchored.make(b.work / f"anchored-{size}", size // 5, size, b.memstack, b.env,
                                 plain=size * (ANCHORED_STORE - 1))
            b.cache[("anchored", size)] = root
        if kind == "changed" and not b.cache.get(("anchored-changed", size)):
            anchored.change(root, size // 20)
            b.cache[("anchored-changed", size)] = True
        out = Outcome()
        for _ in range(b.repeat):
            if kind == "changed":
                shutil.rmtree(root / ".memory" / ".memstack" / "anchors", ignore_errors=True)
            ran = b.ms("anchors", "--json", cwd=root)
            out.add(ran)
        document = orjson.loads(ran.out)
        statuses = sorted({item["status"] for item in document["items"]})
        store = f"{len(document['items']):,} anchored records of {size * ANCHORED_STORE:,} facts, {', '.join(statuses)}"
        out.note = f"{store}; {size // 20:,} files changed" if kind == "changed" else store
        return out
    return measure


def anchor_sizes(sizes: list[int]) -> list[int | None]:
    """ANCHORS anchors (with --quick, QUICK_ANCHORS)."""
    return [QUICK_ANCHORS if max(sizes) < ANCHORS else ANCHORS]


def each_store(sizes: list[int]) -> list[int | None]:
    return list(sizes)


def no_store(sizes: list[int]) -> list[int | None]:
    return [None]


def promote_large(sizes: list[int]) -> list[int | None]:
    """the 200,000 pending records (with --quick, the smallest store)."""
    return [min(sizes)] if max(sizes) < PROMOTE_LARGE else [PROMOTE_LARGE]


def promote_stores(sizes: list[int]) -> list[int | None]:
    """The stores of at most 100,000 pending records (the target's figure), else the smallest."""
    return list([s for s in sizes if s <= PROMOTE_SIZE] or [min(sizes)])


@dataclass(frozen=True)
class Figure:
    key: str
    label: str
    target: str  # as shown; "info" for figures with no target
    limit: float | None  # seconds
    measure: Callable[[Bench, Any], Outcome]
    sizes: Callable[[list[int]], list[int | None]] = each_store
    unit: str = "store"  # what the size column counts: store (facts + intake), pending, lines, anchors
    mib_limit: float | None = None  # a figure of size on disk (Outcome.size_mib), not of time

    @property
    def ratio(self) -> bool:
        """Whether the target also bounds each store's median by twice the smallest store's."""
        return RATIO in self.target


RATIO = "≤ 2x smallest store"


FIGURES: tuple[Figure, ...] = (
    Figure("help", "`memstack --help` (start-up)", "< 300 ms", 0.3, fig_help, no_store),
    Figure("check-noop", "`memstack check --staged`, nothing staged (start-up)", "< 300 ms", 0.3, fig_check_noop),
    Figure("check-staged", "pre-commit check `memstack check --staged`: +100 intake, +100 facts, 10 closed",
           "< 1 s, ≤ 2x smallest store", 1.0, fig_check_staged),
    Figure("check-staged-i8", "the same check, every new record's text waking the I8 (secrets) detector",
           "< 1 s, ≤ 2x smallest store", 1.0, fig_check_staged_i8),
    Figure("commit-hook", "the same change through `git commit` and the pre-commit hook", "info", None,
           fig_commit_hook),
    Figure("check-range", "`memstack check --range` over {commits} commits (each +10 intake, +10 facts, 1 closed)",
           "info", None, fig_check_range),
    Figure("blame", "`memstack blame` of the oldest fact, {blame_commits} commits after it", "< 1 s", 1.0, fig_blame),
    Figure("index-build", "fact index built from nothing (`python -m memstack.kb.index`)", "info", None,
           fig_index_build),
    Figure("fresh-clone-query", "first `memstack recall` on a fresh clone (no index yet)", "info", None,
           fig_fresh_clone_query),
    Figure("recall-cli", "`memstack recall --json` (new process, index on disk)", "< 2 s", 2.0,
           fig_cli_query("recall")),
    Figure("recall-api-cold", "`factstore.recall`, cold (new process: import + first query)", "< 2 s", 2.0,
           fig_api_cold("recall")),
    Figure("recall-api-warm", "`factstore.recall`, warm (same process)", "< 50 ms", 0.05, fig_api_warm("recall")),
    Figure("get-valid-at-cli", "`memstack fact get-valid-at --subject --json` (new process, index on disk)", "< 2 s",
           2.0, fig_cli_query("get-valid-at")),
    Figure("get-valid-at-api-cold", "`factstore.get_valid_at`, cold (new process: import + first query)", "< 2 s",
           2.0, fig_api_cold("get-valid-at")),
    Figure("get-valid-at-api-warm", "`factstore.get_valid_at`, warm (same process)", "< 50 ms", 0.05,
           fig_api_warm("get-valid-at")),
    Figure("promote", "`memstack promote` of every pending intake record (one commit, through the hook)", "< 20 s",
           20.0, fig_promote,
           promote_stores, unit="pending"),
    Figure("promote-200k", "`memstack promote` of every pending record (one commit, through the hook)",
           "< 15 s, < 256 MiB", 15.0, fig_promote, promote_large, unit="pending"),
    Figure("promote-one", "`memstack promote` with one record pending (through the hook)",
           "< 0.5 s, ≤ 2x smallest store, < 256 MiB", 0.5, fig_promote_one_to("knowledge")),
    Figure("promote-one-binder", "`memstack promote` with one record pending, routed to the Binder",
           "< 0.5 s, ≤ 2x smallest store, < 256 MiB", 0.5, fig_promote_one_to("binder")),
    Figure("kb-largest", "the largest file under kb/ outside kb/facts/, every record promoted", "< 16 MiB",
           None, fig_kb_largest, mib_limit=16.0),
    Figure("rebuild", "`memstack rebuild` of all views", "< 15 s", 15.0, fig_rebuild),
    Figure("rebuild-promoted", "`memstack rebuild` of a store whose every record was promoted", "< 15 s, < 256 MiB",
           15.0, fig_in_promoted("rebuild")),
    Figure("migrate-promoted", "`memstack migrate` of a promoted store of format 1 (one commit, through the hooks)",
           "< 120 s, < 256 MiB", 120.0, fig_migrate),
    Figure("binder-list-50-promoted", "`memstack binder list --limit 50` of a store whose every record was promoted",
           "< 0.5 s", 0.5, fig_in_promoted("binder", "list", "--limit", "50")),
    Figure("binder-list-promoted", "`memstack binder list` of a store whose every record was promoted",
           "< 256 MiB peak", None, fig_in_promoted("binder", "list")),
    Figure("check-all-promoted", "`memstack check --all` of a store whose every record was promoted",
           "< 256 MiB peak", None, fig_in_promoted("check", "--all")),
    Figure("check-range-promoted", "`memstack check --range` of the commit that promoted every record",
           "< 256 MiB peak", None, fig_in_promoted("check", "--range", "{promotion}~1..{promotion}")),
    Figure("review-promoted", "`memstack review` of the commit that promoted every record", "< 256 MiB peak",
           None, fig_in_promoted("review", "{promotion}~1..{promotion}")),
    Figure("index-size", "fact index on disk, built from nothing", "< 200 MiB", None, fig_index_size, mib_limit=200),
    Figure("check-all", "`memstack check --all` (every file at HEAD, the KB views committed)", "< 256 MiB peak",
           None, fig_verb("check", "--all", views=True)),
    Figure("check-range-store", "`memstack check --range` of the commit that wrote the whole store", "< 256 MiB peak",
           None, fig_verb("check", "--range", "{base}~1..{base}")),
    Figure("review-store", "`memstack review` of the commit that wrote the whole store", "< 256 MiB peak", None,
           fig_verb("review", "{base}~1..{base}")),
    Figure("intake-list", "`memstack intake list` (every record)", "< 256 MiB peak", None, fig_verb("intake", "list")),
    Figure("binder-list", "`memstack binder list` (views committed)", "< 256 MiB peak", None,
           fig_verb("binder", "list", views=True)),
    Figure("get-valid-at-all", "`memstack fact get-valid-at --ts` (every subject)", "< 256 MiB peak", None,
           fig_verb("fact", "get-valid-at", "--ts", "{ts}")),
    Figure("history", "`memstack fact history --subject`", "< 256 MiB peak", None,
           fig_verb("fact", "history", "--subject", "{subject}")),
    Figure("soil-list", "`memstack soil list` of a collection", "< 256 MiB peak", None,
           fig_verb("soil", "list", "bench")),
    Figure("pg-sync-full", "`memstack pg sync` of the whole store into an empty database", "< 60 s", 60.0,
           fig_pg_sync_full),
    Figure("pg-sync-commit", "`memstack pg sync` of a commit: +100 intake, +100 facts, 10 closed", "< 1 s", 1.0,
           fig_pg_sync_commit),
    Figure("recall-pg-cli", "`memstack recall --pg --json` (new process, local server)", "info", None,
           fig_pg_query_cli),
    Figure("recall-pg-warm", "`ReplicaReader.recall`, warm (one connection, local server)", "< 20 ms", 0.02,
           fig_pg_query_warm("recall")),
    Figure("get-valid-at-pg-warm", "`ReplicaReader.valid_at --subject`, warm (one connection, local server)",
           "< 20 ms", 0.02, fig_pg_query_warm("get-valid-at")),
    Figure("merge-log", "merge driver: two intake logs, +1% on each side", "< 2 s", 2.0, fig_merge("log"), no_store,
           unit="lines"),
    Figure("merge-facts", "merge driver: two fact files, +1% and 100 closed on each side", "< 2 s", 2.0,
           fig_merge("facts"), no_store, unit="lines"),
    Figure("search-index-build", "search index built from nothing (FTS5 over facts, intake, handoffs, SOIL)", "info",
           None, fig_search_build),
    Figure("search-cli", "`memstack search QUERY --json` (new process, index on disk)", "info", None,
           fig_search_cli),
    Figure("search-cold", "`search`, cold (new process: import + first query, index on disk)", "< 1 s", 1.0,
           fig_search("cold")),
    Figure("search-warm", "`search`, warm (same process)", "< 50 ms", 0.05, fig_search("warm")),
    Figure("search-common", "`search` of words most records hold (\"observation\"), warm", "< 1 s", 1.0,
           fig_search("common")),
    Figure("search-fresh-clone", "first `memstack search` on a fresh clone (no index yet)", "< 1 s", 1.0,
           fig_search_fresh_clone),
    Figure("forget", "`memstack forget ID --reason R` of one intake record", "< 0.5 s", 0.5, fig_forget),
    Figure("excise", "`memstack excise` of 10 forgotten records, {excise_commits} commits of history", "info", None,
           fig_excise, excise_sizes),
    Figure("anchors-unchanged", "`memstack anchors --json`, no anchored file changed", "< 0.5 s", 0.5,
           fig_anchors("unchanged"), anchor_sizes, unit="anchors"),
    Figure("anchors-changed", "`memstack anchors --json` after a commit changing a twentieth of the files", "< 2 s",
           2.0, fig_anchors("changed"), anchor_sizes, unit="anchors"),
)


# ---- rows, table, JSON ----------------------------------------------------------------------------

def size_label(figure: Figure, size: int | None, b: Bench) -> str:
    if figure.unit == "lines":
        return f"{b.merge_lines:,} lines"
    if size is None:
        return "—"
    if figure.unit == "anchors":
        return f"{size:,} anchors"
    return f"{size:,} pending" if figure.unit == "pending" else f"{size:,}"


def judge(figure: Figure, outcome: Outcome, smallest: float | None) -> str:
    if outcome.unavailable:
        return "not available"
    if figure.mib_limit is not None:
        return "yes" if outcome.size_mib is not None and outcome.size_mib < figure.mib_limit else "no"
    bounded = figure.target.endswith("MiB peak")  # a figure of memory only (issue 15)
    if figure.limit is None and not bounded:
        return "info"
    median = statistics.median(outcome.samples)
    memory = MEMORY_BOUNDED if figure.key.startswith("pg-sync") or bounded else GIB  # docs/reference.md, figures
    if figure.key in ("promote-200k", "promote-one", "promote-one-binder", "rebuild-promoted"):
        memory = MEMORY_BOUNDED  # promote, any number pending; rebuild
    ok = (figure.limit is None or median < figure.limit) and outcome.peak_kib * 1024 < memory
    if figure.ratio and smallest is not None:
        ok = ok and median <= 2 * smallest
    return "yes" if ok else "no"


def fmt_seconds(seconds: float) -> str:
    if seconds >= 1:
        return f"{seconds:.1f} s"
    if seconds >= 0.01:
        return f"{seconds * 1000:.0f} ms"
    return f"{seconds * 1000:.2f} ms"


def measure_all(b: Bench, only: Iterable[str] | None = None) -> list[dict[str, Any]]:
    rows = []
    wanted = set(only) if only else None
    for figure in FIGURES:
        if wanted is not None and figure.key not in wanted:
            continue
        outcomes: list[tuple[int | None, Outcome]] = []
        for size in figure.sizes(b.sizes):
            b.log(f"{figure.key} {'' if size is None else f'{size:,}'}")
            try:
                outcome = figure.measure(b, size)
            except Exception as exc:  # the row says what failed; the other figures still run
                outcome = Outcome(note=f"failed: {exc}")
            outcomes.append((size, outcome))
        measured = [o for _, o in outcomes if o.samples]
        smallest = statistics.median(measured[0].samples) if figure.ratio and measured else None
        for size, outcome in outcomes:
            median = statistics.median(outcome.samples) if outcome.samples else None
            within = judge(figure, outcome, smallest) if median is not None or outcome.unavailable else "failed"
            rows.append({
                "figure": figure.key,
                "label": figure.label.format(commits=b.range_commits, blame_commits=f"{b.blame_commits:,}",
                                             excise_commits=f"{QUICK_EXCISE if b.quick else EXCISE['commits']:,}"),
                "size": size,
                "size_label": size_label(figure, size, b),
                "median_s": median, "samples_s": outcome.samples, "runs": len(outcome.samples),
                "target": figure.target, "within": within,
                "peak_mib": round(outcome.peak_kib / 1024, 1) if outcome.samples else None,
                **({"size_mib": round(outcome.size_mib, 1)} if outcome.size_mib is not None else {}),
                "note": f"not available: {outcome.unavailable}" if outcome.unavailable else outcome.note,
            })
    return rows


def table(rows: list[dict[str, Any]]) -> str:
    head = ["figure", "size", "median", "runs", "target", "within target", "peak memory"]
    body = []
    for row in rows:
        if row["within"] in ("not available", "failed"):
            median = row["note"]
        elif row.get("size_mib") is not None:
            median = f"{row['size_mib']:.1f} MiB"
        else:
            median = fmt_seconds(row["median_s"])
        peak = "—" if row["peak_mib"] is None else f"{row['peak_mib']:.0f} MiB"
        body.append([row["label"], row["size_label"], median, str(row["runs"]), row["target"], row["within"], peak])
    lines = ["| " + " | ".join(head) + " |", "|" + "|".join("---" for _ in head) + "|"]
    lines += ["| " + " | ".join(cells) + " |" for cells in body]
    notes = [f"- {row['label']} ({row['size_label']}): {row['note']}" for row in rows
             if row["note"] and row["within"] not in ("not available", "failed")]
    return "\n".join(lines) + ("\n\n" + "\n".join(notes) if notes else "") + "\n"


def machine(b: Bench) -> dict[str, Any]:
    import memstack

    cpu = ""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        cpu = platform.processor()
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True)
    dirty = subprocess.run(["git", "status", "--porcelain", "--", "memstack"], cwd=ROOT, capture_output=True, text=True)
    return {
        "nproc": os.cpu_count(), "cpu": cpu or "unknown", "os": platform.platform(),
        "python": platform.python_version(), "git": b.git(b.work, "--version").removeprefix("git version "),
        "memstack": f"{memstack.__version__} ({commit.stdout.strip() or 'no commit'}"
                    f"{', memstack/ modified' if dirty.stdout.strip() else ''})",
        "load_average": [round(x, 2) for x in os.getloadavg()],
        "memory_gib": round(os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / GIB, 1),
    }


def describe(info: dict[str, Any]) -> str:
    return (f"{info['nproc']} CPUs ({info['cpu']}), {info['memory_gib']} GiB, {info['os']}; Python {info['python']},"
            f" git {info['git']}, memstack {info['memstack']}; load average at start"
            f" {', '.join(map(str, info['load_average']))}")


def parse_sizes(text: str) -> list[int]:
    try:
        sizes = sorted({int(part.replace("_", "")) for part in text.split(",") if part.strip()})
    except ValueError:
        raise argparse.ArgumentTypeError(f"bad sizes {text!r}: expected numbers like 1000,100000") from None
    if not sizes or sizes[0] < 1:
        raise argparse.ArgumentTypeError(f"bad sizes {text!r}: expected positive numbers")
    return sizes


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", type=parse_sizes, help="store sizes, facts (= intake records) each"
                                                          " (default 1000,100000,1000000)")
    parser.add_argument("--repeat", type=int, help="runs per figure, the median is shown (default 5)")
    parser.add_argument("--quick", action="store_true", help=f"sizes {','.join(map(str, QUICK_SIZES))}, 1 run,"
                                                             " 5 commits, 2,000-line merges: the smoke test")
    parser.add_argument("--out", type=Path, help="write the JSON here (default bench/results.json; --quick: none)")
    parser.add_argument("--keep", action="store_true", help="keep the temporary stores (their folder is printed)")
    parser.add_argument("--only", action="append", metavar="FIGURE",
                        help=f"measure only this figure (repeatable): {', '.join(f.key for f in FIGURES)}")
    args = parser.parse_args(argv)
    args.sizes = args.sizes or list(QUICK_SIZES if args.quick else SIZES)
    args.repeat = args.repeat or (1 if args.quick else 5)
    if args.repeat < 1:
        parser.error("--repeat must be 1 or more")
    unknown = set(args.only or ()) - {f.key for f in FIGURES}
    if unknown:
        parser.error(f"unknown figure {', '.join(sorted(unknown))}")
    out = args.out if args.out is not None else (None if args.quick else HERE / "results.json")

    bench = Bench(args)
    started = time.time()
    try:
        info = machine(bench)
        rows = measure_all(bench, args.only)
    finally:
        bench.close()
    text = table(rows)
    header = (f"memstack benchmark, {time.strftime('%Y-%m-%d', time.gmtime(started))}: medians of {args.repeat}"
              f" run{'s' * (args.repeat != 1)} unless the runs column says otherwise\nmachine: {describe(info)}\n")
    print(header)
    print(text)
    if out is not None:
        document = {"date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(started)),
                    "seconds": round(time.time() - started, 1), "machine": info,
                    "options": {"sizes": args.sizes, "repeat": args.repeat, "quick": args.quick},
                    "figures": rows, "table": text}
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_bytes(orjson.dumps(document, option=orjson.OPT_INDENT_2 | orjson.OPT_APPEND_NEWLINE))
        print(f"wrote {out}", file=sys.stderr)
    return 1 if any(row["within"] == "failed" for row in rows) else 0


if __name__ == "__main__":
    raise SystemExit(main())
