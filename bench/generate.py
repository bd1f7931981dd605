"""Generate a memstack store of a given size, fast: files written directly in the store's format.

Facts go to `kb/facts/<agent>/YYYY-MM.jsonl` (10 agents, months of recorded_at),
intake to `intake/<agent>/YYYY-MM-DD.jsonl`; every fourth fact of a subject and
predicate is superseded by the next, so the store has history as well as
current facts. Everything is committed once, without hooks.
"""

import subprocess
from collections import defaultdict
from pathlib import Path

import orjson

from memstack.base.ids import agent_tag
from memstack.base.jsonio import dumps_line  # a line that keeps only its bytes (orjson's keep ~8 KiB)
from memstack.base.times import day, iso, month
from memstack.workflows import install

AGENTS = [f"agent{n}" for n in range(10)]
PREDICATES = ["decided", "chose", "pattern", "prefers", "uses", "owns"]
START = 1_704_067_200_000  # 2024-01-01T00:00:00Z
STEP = 60_000  # one record a minute per store
OPTS = orjson.OPT_SORT_KEYS | orjson.OPT_APPEND_NEWLINE  # dumps_line's


def fact_id(n: int) -> str:
    """Bound to its record as memstack/base/ids.py makes them: time, a number for randomness, agent tag."""
    return f"{START + n * STEP:012x}{n:012x}{agent_tag(AGENTS[(n // 4) % len(AGENTS)])}"


def intake_id(n: int) -> str:
    """Never a fact's id (their middle parts differ: the top bit set), so no id names two records."""
    return f"{START + n * STEP:012x}{1 << 47 | n:012x}{agent_tag(AGENTS[n % len(AGENTS)])}"


CHUNK = 50_000  # records made and written at a time: the generator's memory does not grow with the store


def facts(count: int, start: int = 0, stop: int | None = None) -> dict[str, list[bytes]]:
    """Facts `start` to `stop` (default: all) of a store of `count`, by file; subjects have 4 versions each,
    the last one open."""
    files: dict[str, list[bytes]] = defaultdict(list)
    for n in range(start, count if stop is None else stop):
        version, slot = n % 4, n // 4
        ts = START + n * STEP
        agent = AGENTS[slot % len(AGENTS)]
        closes = version < 3 and n + 1 < count
        record = {
            "id": fact_id(n), "subject": f"subject-{slot}", "predicate": PREDICATES[slot % len(PREDICATES)],
            "object": f"value {version} of subject {slot}", "valid_from": ts,
            "valid_to": ts + STEP if closes else None, "confidence": 0.9, "recorded_at": ts,
            "table": "knowledge", "expired_at": ts + STEP if closes else None,
            "superseded_by": fact_id(n + 1) if closes else None, "source": "bench", "agent": agent,
            "intake_id": None,
        }
        files[f"kb/facts/{agent}/{month(ts)}.jsonl"].append(dumps_line(record))
    return files


# An intake record's tier by its number: n % 4. Never "ratified": only a person's Binder ratification
# makes that tier (the checks refuse an intake record claiming it); "verified" routes the same way.
TIERS = ("observed", "fetched", "verified", "verified")


def intake(count: int, offset: int = 0) -> dict[str, list[bytes]]:
    files: dict[str, list[bytes]] = defaultdict(list)
    for n in range(offset, offset + count):
        ts = START + n * STEP
        agent = AGENTS[n % len(AGENTS)]
        record = {
            "id": intake_id(n), "content": f"observation {n}: the build of module {n % 97} takes {n % 13} s",
            "title": f"observation {n}", "source": "https://example.org/doc" if n % 5 == 0 else "bench",
            "agent": agent, "tier": TIERS[n % 4],
            "confidence": round((n % 100) / 100, 2), "keywords": ["build"], "tags": ["bench"],
            "created_at": iso(ts), "subject": f"module-{n % 97}", "predicate": "takes",
            "object": f"{n % 13} s", "relevance_score": 0.6,
        }
        files[f"intake/{agent}/{day(ts)}.jsonl"].append(dumps_line(record))
    return files


def write_files(root: Path, files: dict[str, list[bytes]]) -> None:
    for relpath, lines in files.items():
        path = root / relpath
        path.parent.mkdir(parents=True, exist_ok=True)
        with path.open("ab") as handle:
            handle.write(b"".join(lines))


def make_store(root: Path, n_facts: int, n_intake: int) -> Path:
    install.init(root, AGENTS)
    for start in range(0, n_facts, CHUNK):
        write_files(root, facts(n_facts, start, min(start + CHUNK, n_facts)))
    for start in range(0, n_intake, CHUNK):
        write_files(root, intake(min(CHUNK, n_intake - start), start))
    subprocess.run(["git", "add", "-A"], cwd=root, check=True)
    subprocess.run(["git", "commit", "-q", "--no-verify", "-m", f"bench: {n_facts} facts, {n_intake} intake"],
                   cwd=root, check=True)
    return root


def main(argv: list[str] | None = None) -> int:
    """`python bench/generate.py DIR [--facts N] [--intake N]` with memstack importable (its venv's python)."""
    import argparse

    parser = argparse.ArgumentParser(description="Make a memstack store of a given size (10 agents, committed once,"
                                                 " without hooks) for trying memstack at scale.")
    parser.add_argument("dir", type=Path, help="the store to make (a new folder)")
    parser.add_argument("--facts", type=int, default=100_000, help="facts (default 100,000)")
    parser.add_argument("--intake", type=int, default=100_000, help="intake records (default 100,000)")
    args = parser.parse_args(argv)
    if args.facts < 0 or args.intake < 0:
        parser.error("--facts and --intake count records: 0 or more")
    if args.dir.exists() and any(args.dir.iterdir()):
        parser.error(f"{args.dir} is not empty: name a new folder")
    make_store(args.dir, args.facts, args.intake)
    print(f"made {args.dir}: {args.facts} facts, {args.intake} intake records, committed once")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
