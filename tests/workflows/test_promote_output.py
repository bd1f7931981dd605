"""What `promote` prints: the trailers only when asked (`--verbose`), a dry run's summary first and its
listing bounded (`--limit`), however much is pending."""

import json
from pathlib import Path

from helpers import git, memstack, tree_snapshot
from memstack.intake import log as intake

NOW = "2026-03-01T00:00:00Z"


def _write(store: Path, count: int) -> list[str]:
    """`count` pending records (routed to the Binder: tier observed), oldest first; their ids."""
    ids = []
    for n in range(count):
        when = f"2026-01-01T00:{n // 60:02}:{n % 60:02}Z"
        rec = intake.make_record(agent="alice", content=f"note {n}", created_at=when)
        intake.write(store, rec)
        ids.append(rec["id"])
    return ids


def test_promote_prints_its_trailers_only_with_verbose_and_the_commit_carries_them(store: Path) -> None:
    _write(store, 2)
    plain = memstack("promote", "--now-ts", NOW, cwd=store)
    assert plain.returncode == 0, plain.stderr
    assert "Memstack-" not in plain.stdout
    assert plain.stdout.splitlines()[0] == "memstack promote: 2 records routed"
    assert "binder: 2" in plain.stdout and "committed " in plain.stdout
    message = git(store, "log", "-1", "--format=%B").stdout
    assert "Memstack-Routed: 2\n" in message and "Memstack-Binder: 2\n" in message
    _write(store, 1)
    verbose = memstack("promote", "--now-ts", NOW, "--verbose", cwd=store)
    assert verbose.returncode == 0, verbose.stderr
    assert "\nMemstack-Routed: 1\nMemstack-Knowledge: 0\n" in verbose.stdout
    document = json.loads(memstack("promote", "--now-ts", NOW, "--json", cwd=store).stdout)
    assert document["message"] == "nothing to promote"


def test_a_dry_run_says_its_summary_first_and_lists_a_bounded_page(store: Path) -> None:
    ids = _write(store, 130)
    dry = memstack("promote", "--dry-run", cwd=store)
    assert dry.returncode == 0, dry.stderr
    lines = dry.stdout.splitlines()
    assert lines[0] == "130 records would be routed: binder 130 (dry run: nothing written)"
    assert [line.split()[0] for line in lines[1:-1]] == ids[:50]
    assert lines[-1] == "… 80 more (--limit N lists more)"
    assert len(lines) == 52

    few = memstack("promote", "--dry-run", "--limit", "3", cwd=store).stdout.splitlines()
    assert [line.split()[0] for line in few[1:-1]] == ids[:3] and few[-1] == "… 127 more (--limit N lists more)"
    whole = memstack("promote", "--dry-run", "--limit", "500", cwd=store).stdout.splitlines()
    assert len(whole) == 131 and not whole[-1].startswith("…")

    document = json.loads(memstack("promote", "--dry-run", "--limit", "7", "--json", cwd=store).stdout)
    assert [r["intake_id"] for r in document["records"]] == ids[:7]
    assert (document["remaining"], document["routed"]) == (123, {"binder": 130})
    assert git(store, "status", "--porcelain").stdout.count("intake/") >= 1  # still pending: nothing promoted


def test_a_dry_run_refuses_a_bad_limit(store: Path) -> None:
    _write(store, 1)
    refused = memstack("promote", "--dry-run", "--limit", "0", cwd=store)
    assert refused.returncode == 2
    assert refused.stderr.strip() == "memstack: bad limit '0': expected a whole number from 1 to 10000"


def test_a_limit_without_a_dry_run_is_refused_and_nothing_is_promoted(store: Path) -> None:
    """A limit only bounds what a dry run lists: a promotion given one would route every record all the same."""
    _write(store, 3)
    before = tree_snapshot(store)
    refused = memstack("promote", "--limit", "2", cwd=store)
    assert refused.returncode == 2
    assert refused.stderr.strip() == ("memstack: bad --limit 2: a limit only bounds what --dry-run lists; a"
                                      " promotion routes every pending record")
    assert tree_snapshot(store) == before
