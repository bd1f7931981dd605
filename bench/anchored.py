"""A code repository with memory about it, for the `anchors` figures: `files` Python files of 60 lines,
committed, a store in `.memory/` (made by `memstack init`) holding `anchors` open facts, each anchored to
two lines of one file, and `plain` facts with no anchor, in the months before (written straight in the fact
format, committed once without hooks), and the commit that changes `changed` of those files (a line added
at the top: every anchor into them shifts)."""

import subprocess
from pathlib import Path

import orjson

from memstack.anchors import lines
from memstack.base.ids import agent_tag
from memstack.base.times import month
from memstack.repo import objects

START = 1_796_000_000_000  # 2026-12
LINE = orjson.OPT_SORT_KEYS | orjson.OPT_APPEND_NEWLINE
FILE_LINES = 60


def _git(cwd: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, text=True).stdout


def source(n: int) -> str:
    return "".join(f"def f{n}_{k}(x):\n    return x + {k}  # file {n}\n\n" for k in range(FILE_LINES // 3))


def make(root: Path, files: int, anchors: int, memstack: list[str], env: dict[str, str], plain: int = 0) -> Path:
    """The repository at `root` (its store `root/.memory`); returns `root`."""
    (root / "src").mkdir(parents=True)
    texts = {f"src/mod{n:05d}.py": source(n) for n in range(files)}
    for path, text in texts.items():
        (root / path).write_text(text)
    _git(root, "init", "-q", "-b", "main")
    _git(root, "add", "-A")
    _git(root, "commit", "-q", "--no-verify", "-m", "code")
    subprocess.run([*memstack, "init", ".memory", "--agent", "bench"], cwd=root, env=env, check=True,
                   capture_output=True)
    head = _git(root, "rev-parse", "HEAD").strip()
    paths = sorted(texts)
    blobs = {path: objects.blob_id(texts[path].encode(), head) for path in paths}
    split = {path: texts[path].splitlines() for path in paths}
    out = []
    for n in range(anchors):
        path = paths[n % files]
        start = 3 * ((n // files) % (FILE_LINES // 3)) + 1
        anchor = {"path": path, "start": start, "end": start + 1, "commit": head, "blob": blobs[path],
                  "lines_sha256": lines.sha256(split[path][start - 1:start + 1])}
        ts = START + n
        out.append(orjson.dumps({
            "id": f"{ts:012x}{n:012x}{agent_tag('bench')}", "subject": f"module-{n}", "predicate": "pattern",
            "object": f"f{n % files} adds its number", "valid_from": ts, "valid_to": None, "confidence": 1.0,
            "recorded_at": ts, "table": "knowledge", "expired_at": None, "superseded_by": None, "source": None,
            "agent": "bench", "intake_id": None, "anchors": [anchor]}, option=LINE))
    facts = root / ".memory" / "kb" / "facts" / "bench"
    facts.mkdir(parents=True, exist_ok=True)
    (facts / "2026-12.jsonl").write_bytes(b"".join(out))
    months: dict[str, list[bytes]] = {}
    for n in range(plain):  # one a minute, back from the anchored ones: the rest of a store's memory
        ts = START - (plain - n) * 60_000
        months.setdefault(month(ts), []).append(orjson.dumps({
            "id": f"{ts:012x}{anchors + n:012x}{agent_tag('bench')}", "subject": f"topic-{n}",
            "predicate": "decided", "object": f"value {n}", "valid_from": ts, "valid_to": None, "confidence": 0.9,
            "recorded_at": ts, "table": "knowledge", "expired_at": None, "superseded_by": None, "source": None,
            "agent": "bench", "intake_id": None}, option=LINE))
    for name, lines_of in months.items():
        (facts / f"{name}.jsonl").write_bytes(b"".join(lines_of))
    _git(root, "add", "-A")
    _git(root, "commit", "-q", "--no-verify", "-m", "memory about the code")
    return root


def change(root: Path, changed: int) -> None:
    """One commit that adds a line at the top of the first `changed` files."""
    for path in sorted((root / "src").glob("*.py"))[:changed]:
        path.write_text("import os\n" + path.read_text())
    _git(root, "add", "-A")
    _git(root, "commit", "-q", "--no-verify", "-m", f"touch {changed} files")
