"""Search quality on LoCoMo, the public long-conversation memory benchmark, as one table.

    python bench/locomo.py [--data ../shared/eval/locomo] [--ranking NAME[,NAME]] [--keep PATH] [--misses N]

Loads each conversation (one JSON file) into a new store of its own through memstack's
Python api, as a user's import would: one intake record per dialogue turn (title = the
speaker, content = the text and the image's caption if any, created_at = the session's
date). Then every question of categories 1-4 that names its evidence turns goes through
the function `memstack search --json --limit 50` calls, all in this one process. A
question is found at k when one of its evidence turns is among the first k hits
("turn-any@k"); MRR is over the first 50 hits. It prints @1, @5, @10, @50 and MRR,
overall and per category, and the median time per query.

A ranking is a function (store, question) -> the ids of the hits, best first: RANKINGS
names them (`--ranking`: `memstack`, the default install's search, and `semantic`, the same
search with `--semantic`, when the `semantic` extra is installed; both by default); another
ranking is added with `add_ranking`. Not a test: the figures depend on the ranking, not the machine
(the times do).
"""

import argparse
import json
import re
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from memstack.api.intake import write_document  # noqa: E402
from memstack.api.search import search_document  # noqa: E402
from memstack.repo.store import Store  # noqa: E402
from memstack.search.semantic import available  # noqa: E402
from memstack.workflows import install  # noqa: E402

CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop"}
DEPTHS = (1, 5, 10, 50)
LIMIT = 50

Ranking = Callable[[Store, str], list[str]]


def memstack_ranking(store: Store, question: str) -> list[str]:
    """What `memstack search --json --limit 50 QUESTION` answers: the hits' ids."""
    return [hit["id"] for hit in search_document(store, query=question, limit=LIMIT)["hits"] if "id" in hit]


def semantic_ranking(store: Store, question: str) -> list[str]:
    """What `memstack search --semantic --json --limit 50 QUESTION` answers (the `semantic` extra)."""
    found = search_document(store, query=question, limit=LIMIT, semantic=True)["hits"]
    return [hit["id"] for hit in found if "id" in hit]


RANKINGS: dict[str, Ranking] = {"memstack": memstack_ranking}
if available():
    RANKINGS["semantic"] = semantic_ranking


def add_ranking(name: str, ranking: Ranking) -> None:
    """Make another ranking available to `--ranking` (e.g. a semantic one or a fusion)."""
    RANKINGS[name] = ranking


def session_ms(when: str) -> int:
    """A LoCoMo session's date ("1:56 pm on 8 May, 2023") as epoch ms."""
    moment = datetime.strptime(when.replace(" ", ""), "%I:%M%pon%d%B,%Y")
    return int(moment.replace(tzinfo=UTC).timestamp() * 1000)


def dia_ids(evidence: list[str]) -> list[str]:
    """The turn ids of a question's evidence, as the data writes them ("D8:6; D9:17", "D:11:26", "D30:05")."""
    found = []
    for text in evidence:
        for session, turn in re.findall(r"D:?(\d+):(\d+)", text):
            found.append(f"D{int(session)}:{int(turn)}")
    return found


def load(path: Path, store: Store) -> tuple[dict[str, str], list[dict[str, Any]]]:
    """Write every turn of one conversation as an intake record; (dia_id -> intake id, the questions)."""
    conversation = json.loads(path.read_text())
    turns: dict[str, str] = {}
    number = 1
    while f"session_{number}" in conversation:
        created = session_ms(conversation[f"session_{number}_date_time"])
        for turn in conversation[f"session_{number}"]:
            content = turn["text"] + (f" [image: {turn['blip_caption']}]" if turn.get("blip_caption") else "")
            record = write_document(store, agent=AGENT, content=content, title=turn["speaker"], source="locomo",
                                    created_at=created)["record"]
            turns[turn["dia_id"]] = record["id"]
        number += 1
    questions = []
    for qa in conversation["qa"]:
        evidence = sorted({turns[e] for e in dia_ids(qa.get("evidence", ())) if e in turns})
        if qa.get("category") in CATEGORIES and evidence:
            questions.append({"question": str(qa["question"]), "category": qa["category"], "evidence": evidence})
    return turns, questions


def measure(runs: list[tuple[Store, list[dict[str, Any]]]], ranking: Ranking) -> dict[str, Any]:
    """Each question's rank of its first evidence turn (None: not in the first 50), and the times."""
    times, ranks = [], []
    for store, qa in ((store, qa) for store, questions in runs for qa in questions):
        start = time.perf_counter()
        found = ranking(store, qa["question"])[:LIMIT]
        times.append(time.perf_counter() - start)
        ranks.append(next((n for n, ref in enumerate(found, 1) if ref in set(qa["evidence"])), None))
    return {"ranks": ranks, "median_ms": 1000 * statistics.median(times)}


def row(label: str, ranks: list[int | None]) -> str:
    cells = [f"{100 * sum(1 for r in ranks if r is not None and r <= k) / len(ranks):.1f}" for k in DEPTHS]
    mrr = sum(1 / r for r in ranks if r is not None) / len(ranks)
    return f"| {label} ({len(ranks)}) | " + " | ".join(cells) + f" | {mrr:.3f} |".replace("0.", ".", 1)


def table(name: str, questions: list[dict[str, Any]], result: dict[str, Any]) -> str:
    ranks = result["ranks"]
    lines = [f"ranking `{name}`: median {result['median_ms']:.1f} ms per query", "",
             "| questions | @1 | @5 | @10 | @50 | MRR |", "|---|---|---|---|---|---|", row("all", ranks)]
    for category, label in CATEGORIES.items():
        lines.append(row(f"{category} {label}", [r for r, q in zip(ranks, questions, strict=True)
                                                  if q["category"] == category]))
    return "\n".join(lines)


MAP = ".memstack/locomo.json"  # in a --keep store: its turns' ids and the questions (derived, never committed)
AGENT = "locomo"


def stores(data: Path, root: Path) -> list[tuple[Store, list[dict[str, Any]]]]:
    """A store per conversation under `root` (made and loaded, or kept from before) and its questions."""
    files = sorted(data.glob("*.json"))
    start = time.perf_counter()
    todo = [root / f"conv-{path.stem}" for path in files] or sorted(root.glob("conv-*"))
    if not todo:
        raise SystemExit(f"no LoCoMo conversation (*.json) in {data} and no store kept in {root}: pass --data")
    new = [(path, root / f"conv-{path.stem}") for path in files if not (root / f"conv-{path.stem}" / MAP).is_file()]
    if new:
        template = root / ".template"
        install.init(template, [AGENT])  # made once, copied: `memstack init` takes seconds
        for _, where in new:
            shutil.copytree(template, where, symlinks=True)
        shutil.rmtree(template)
        with ThreadPoolExecutor(len(new)) as pool:  # a write waits on fsync: the stores load side by side
            loaded = list(pool.map(lambda job: load(job[0], Store(job[1].resolve())), new))
        for (_, where), (turns, questions) in zip(new, loaded, strict=True):
            (where / MAP).write_text(json.dumps({"turns": turns, "questions": questions}))
        print(f"loaded {sum(len(t) for t, _ in loaded)} turns into {len(new)} stores"
              f" in {time.perf_counter() - start:.1f} s")
    return [(Store(where.resolve()), json.loads((where / MAP).read_text())["questions"]) for where in todo]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, default=ROOT.parent / "shared" / "eval" / "locomo",
                        help="the folder of LoCoMo conversations, one JSON file each (default ../shared/eval/locomo)")
    parser.add_argument("--ranking", default=",".join(RANKINGS),
                        help="which rankings, comma-separated: " + ", ".join(RANKINGS) + " (default: all)")
    parser.add_argument("--keep", type=Path, help="make the stores in this folder and keep them (default: a"
                                                 " temporary folder); stores it kept before are measured again")
    parser.add_argument("--misses", type=int, default=0, help="also print N questions whose evidence was not found")
    args = parser.parse_args(argv)
    chosen = args.ranking.split(",")
    if not chosen or any(name not in RANKINGS for name in chosen):
        parser.error(f"--ranking {args.ranking!r}: each must be one of {', '.join(RANKINGS)}")
    with tempfile.TemporaryDirectory() as tmp:
        runs = stores(args.data, args.keep or Path(tmp))
        questions = [qa for _, held in runs for qa in held]
        print(f"{len(questions)} questions of categories 1-4")
        for name in chosen:
            result = measure(runs, RANKINGS[name])
            print(table(name, questions, result))
            missed = [q for q, r in zip(questions, result["ranks"], strict=True) if r is None]
            for qa in missed[:args.misses]:
                print(f"missed ({qa['category']}): {qa['question']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
