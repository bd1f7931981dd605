"""Promotions while another process writes: nothing another writer wrote is lost, whatever becomes of a
promotion (a refused one puts back only its own work)."""

import json
import subprocess
from pathlib import Path

from helpers import MEMSTACK, git, memstack

CAPTURES = 30


def test_captures_made_while_promotions_run_are_never_lost(store: Path) -> None:
    """The writer and the promotions race on one fact file (alice's 2026-01): each capture lands before a
    promotion, or waits for it to end; none is cut away by a promotion that was refused."""
    loop = (f"for i in $(seq {CAPTURES}); do {MEMSTACK} capture --agent alice --subject c$i --predicate chose"
            " --object v$i --valid-from 2026-01-05T00:00:00Z --recorded-at 2026-01-05T00:00:00Z || exit 1; done")
    writer = subprocess.Popen(["bash", "-c", loop], cwd=store, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                              text=True)
    refused = []
    for n in range(6):
        assert memstack("intake", "write", "--agent", "alice", "--content", f"note {n}", "--subject", f"p{n}",
                        "--predicate", "decided", "--object", f"o{n}", "--tier", "verified", "--confidence", "0.9",
                        "--created-at", f"2026-01-0{n + 1}T12:00:00Z", cwd=store).returncode == 0
        promoted = memstack("promote", cwd=store)
        if promoted.returncode != 0:
            refused.append(promoted.stderr)
    _, said = writer.communicate(timeout=300)
    assert writer.returncode == 0, said
    facts = [json.loads(line) for line in (store / "kb/facts/alice/2026-01.jsonl").read_text().splitlines()]
    assert len({f["subject"] for f in facts if f["predicate"] == "chose"}) == CAPTURES, refused
    assert refused == []  # a promotion waits for a write under way, and a write for a promotion
    assert memstack("promote", cwd=store).returncode == 0
    git(store, "add", "-A")
    committed = subprocess.run(["git", "commit", "-q", "-m", "the captures"], cwd=store, capture_output=True,
                               text=True)
    assert committed.returncode == 0 or "nothing to commit" in committed.stdout, committed.stdout + committed.stderr
