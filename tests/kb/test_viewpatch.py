"""Promotion that follows what is pending: views patched from the last checked ones (viewpatch.py)
(what it finds pending: tests/workflows/test_promote_pending.py).

Each step of a seeded random history changes the store as agents and humans do (intake routed to
knowledge or the binder, a direct fact, a capture that contradicts, a ratify, a reject), then:
the patched views equal a rebuild from every file, and are not a rebuild in disguise (the patch
answers); the promotion commits through the hooks, whose I4 check patches too; `rebuild --check`
and `check --all` agree.
"""

import json
import random
from pathlib import Path

import pytest

from helpers import git, items, memstack
from memstack.base import files, spill
from memstack.intake import log as intake
from memstack.kb import viewpatch, views
from memstack.repo import objects
from memstack.repo.diffs import WORKTREE
from memstack.repo.sources import WorktreeSource

NOW = "2026-06-01T00:00:00Z"


def write(store: Path, n: int, **fields: object) -> dict:
    rec = intake.make_record(agent=fields.pop("agent", "alice"), content=f"record {n}",  # type: ignore[arg-type]
                             created_at=f"2026-02-{n % 27 + 1:02d}T{n % 24:02d}:00:00Z", **fields)
    intake.write(store, rec)
    return rec


def patched(store: Path) -> dict[str, bytes] | None:
    source = WorktreeSource(store)
    with objects.CatFile(store) as blobs:
        found = viewpatch.since(store, "", blobs, WORKTREE, source)
        made = None if found is None else viewpatch.patch(found, source)
        return None if made is None else {path: files.whole(view) for path, view in made.items()}


def built(store: Path) -> dict[str, bytes]:
    """The views a build from every fact file makes, as bytes."""
    return {path: files.whole(view) for path, view in views.build(WorktreeSource(store)).items()}


def promote_cli(store: Path) -> dict:
    result = memstack("promote", "--now-ts", NOW, "--json", cwd=store)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


def step(store: Path, rng: random.Random, n: int) -> None:
    """One change an agent or a human makes."""
    subject = f"svc{rng.randrange(4)}"
    kind = rng.choice(["knowledge", "knowledge", "binder", "fact", "contradict", "decide"])
    if kind == "knowledge":
        write(store, n, tier="verified", confidence=0.9, subject=subject, predicate="decided", object=f"v{n}")
    elif kind == "binder":
        write(store, n, title=f"maybe {n}", agent=rng.choice(["alice", "bob"]))
    elif kind == "fact":
        result = memstack("fact", "add", "--agent", "bob", "--subject", subject, "--predicate", "owns",
                          "--object", f"team {n}", "--valid-from", f"2026-03-{n % 27 + 1:02d}T00:00:00Z",
                          "--recorded-at", f"2026-03-{n % 27 + 1:02d}T01:00:00Z", cwd=store)
        assert result.returncode == 0, result.stderr
    elif kind == "contradict":
        result = memstack("capture", "--agent", "alice", "--subject", subject, "--predicate", "prefers",
                          "--object", f"choice {n}", "--contradicts", "--valid-from",
                          f"2026-04-{n % 27 + 1:02d}T{n % 24:02d}:00:00Z", "--recorded-at",
                          f"2026-04-{n % 27 + 1:02d}T{n % 24:02d}:30:00Z", cwd=store)
        assert result.returncode == 0 or "must begin after it" in result.stderr, result.stderr
    else:
        waiting = items(json.loads(memstack("binder", "list", "--json", cwd=store).stdout))
        records = [w for w in waiting if "id" in w and w.get("kind") != "dispute"]
        if records:
            verb = rng.choice(["ratify", "reject"])
            result = memstack("binder", verb, rng.choice(records)["id"], "--by", "ada", cwd=store)
            assert result.returncode == 0, result.stderr


@pytest.mark.parametrize("seed", [1, 2])
def test_a_patched_promotion_equals_a_rebuild_at_every_step(store: Path, seed: int) -> None:
    rng = random.Random(seed)
    for n in range(6):
        write(store, n, tier="verified", confidence=0.9, subject=f"svc{n % 4}", predicate="decided", object=f"v{n}")
        write(store, 100 + n, title=f"maybe {n}")
    promote_cli(store)  # the first views: the base every later patch starts from
    n = 200
    for _ in range(6):
        for _ in range(rng.randrange(1, 4)):
            step(store, rng, n)
            n += 1
        expected = built(store)
        assert patched(store) == expected  # the patch answers (None would mean "rebuild"), and is exact
        promote_cli(store)  # its commit passes the hooks, whose I4 check patches the views too
        assert memstack("rebuild", "--check", cwd=store).returncode == 0
        assert git(store, "status", "--porcelain", "--", "kb", "intake").stdout == ""
    audit = memstack("check", "--all", cwd=store)
    assert audit.returncode == 0, audit.stdout + audit.stderr
    assert "stale" not in audit.stdout


def test_a_hand_edited_view_is_still_refused_by_the_patching_hook(store: Path) -> None:
    for n in range(3):
        write(store, n, tier="verified", confidence=0.9, subject=f"s{n}", predicate="decided", object="x")
    promote_cli(store)
    write(store, 9, tier="verified", confidence=0.9, subject="s9", predicate="decided", object="y")
    assert memstack("promote", "--now-ts", NOW, "--no-commit", cwd=store).returncode == 0
    view = store / "kb/knowledge.json"
    view.write_bytes(view.read_bytes().replace(b'"object":"y"', b'"object":"z"'))
    git(store, "add", "-A")
    refused = git(store, "commit", "-q", "-m", "edited view", check=False)
    assert refused.returncode != 0 and "I4" in refused.stdout + refused.stderr
    assert "kb/knowledge.json" in refused.stdout + refused.stderr


def test_a_log_that_does_not_continue_the_base_is_rebuilt_not_patched(store: Path) -> None:
    for n in (0, 27, 54):  # one day: the lines of one ledger shard
        write(store, n, tier="verified", confidence=0.9, subject=f"s{n}", predicate="decided", object="x")
    promote_cli(store)
    ledger = next((store / "kb/promotions").glob("*/*.jsonl"))
    lines = ledger.read_bytes().splitlines(keepends=True)
    ledger.write_bytes(b"".join(reversed(lines)))  # the same lines, another order: not an append
    assert patched(store) is None
    assert memstack("rebuild", "--check", cwd=store).returncode == 0  # the order changes no view


@pytest.mark.parametrize("held", [True, False])
def test_the_line_splice_keeps_order_for_any_removals_and_insertions(held: bool, tmp_path: Path,
                                                                     monkeypatch) -> None:
    """viewpatch's binary search over a view's bytes and its splice, on random sorted lists (lines of
    several lengths; insertions before, between and after every line; any lines removed): over bytes
    held, and over a file read by position in windows and pieces of a few bytes (a search that
    crosses windows, a line cut between pieces)."""
    import os

    from memstack.kb import viewtext
    from memstack.kb.viewtext import Lines, Spliced, Text, apply, find

    monkeypatch.setattr(viewtext, "WINDOW", 3)
    monkeypatch.setattr(viewtext, "PIECE", 7)

    def over(data: bytes) -> Text:
        if held:
            return Text(data)
        path = tmp_path / "view"
        path.write_bytes(data)
        return Text(fd=os.open(path, os.O_RDONLY))

    rng = random.Random(7)
    text = {x: b"%d" % x * (x % 5 + 1) for x in range(100)}  # sorts as x does: same leading digits
    key = {v: k for k, v in text.items()}.__getitem__
    for _ in range(3000 if held else 600):
        base = sorted(rng.sample(range(10, 100, 2), rng.randrange(0, 9)))
        body = b",\n".join(text[x] for x in base)
        data = b"H\n" + body + (b"\n" if base else b"") + b"]}\n"
        whole = over(data)
        assert [whole.rfind(b"\n", 0, end) for end in range(len(data) + 1)] == \
            [data.rfind(b"\n", 0, end) for end in range(len(data) + 1)]
        lines = Lines(whole, 2, 2 + len(body), len(base))
        assert [line for _, line in lines] == [text[x] for x in base]
        for x in range(10, 100):
            found = find(lines, x, key)
            assert (found is not None) == (x in base) and (found is None or lines.line(found) == text[x])
        starts = [pos for pos, _ in lines]
        gone = set(rng.sample(range(len(base)), rng.randrange(0, len(base) + 1)))
        new = rng.sample(range(11, 100, 2), rng.randrange(0, 4))
        parts, count = apply(lines, {starts[i] for i in gone}, [(x, text[x]) for x in new], key)
        out = files.whole(Spliced(lines.text, b"", parts, b""))
        want = sorted([x for i, x in enumerate(base) if i not in gone] + new)
        assert (out, count) == (b",\n".join(text[x] for x in want), len(want))


def test_views_sorted_in_spilled_runs_equal_views_sorted_in_memory(store: Path, monkeypatch) -> None:
    """The views' lines (open facts and the Binder queue) are sorted in runs spilled to a file and
    merged (spill.sorted_runs): with runs of 3 lines the bytes are those of one run in memory, and
    the queue is in (created_at, id) order though its records were written out of that order."""
    for n in (7, 3, 11, 0, 5, 9, 1):
        write(store, n, tier="verified", confidence=0.9, subject=f"svc{n}", predicate="decided", object=f"v{n}")
        write(store, 100 + n, title=f"maybe {n}", agent=("alice", "bob")[n % 2])
    promote_cli(store)
    whole = built(store)
    monkeypatch.setattr(spill, "RUN", 3)
    assert built(store) == whole
    # `memstack rebuild` writes the views from bodies spilled to files: the same bytes, written only where
    # they differ
    assert files.write_changed(store, views.build(WorktreeSource(store))) == []
    (store / views.QUEUE).write_bytes(b"{}\n")
    (store / "kb/knowledge.json").unlink()
    assert files.write_changed(store, views.build(WorktreeSource(store))) == ["kb/knowledge.json", views.QUEUE]
    assert {path: (store / path).read_bytes() for path in whole} == whole
    queue = json.loads(whole[views.QUEUE])["records"]
    assert len(queue) == 7
    assert [(r["created_at"], r["id"]) for r in queue] == sorted((r["created_at"], r["id"]) for r in queue)
    assert [r["title"] for r in queue] != [f"maybe {n}" for n in (7, 3, 11, 0, 5, 9, 1)]  # not file order
    assert len(json.loads(whole["kb/knowledge.json"])["facts"]) == 7


def test_binder_list_pages_a_queue_sorted_in_spilled_runs(store: Path, monkeypatch) -> None:
    """`binder list` streams the queue (views.waiting, sorted in spilled runs): pages walked with the
    cursor, runs of 2 records, give the whole list `binder list --json` prints, in (created_at, id) order."""
    from memstack.api import binder as binder_api
    from memstack.repo.store import open_store

    for n in (7, 3, 11, 0, 5, 9, 1):
        write(store, 100 + n, title=f"maybe {n}", agent=("alice", "bob")[n % 2])
    promote_cli(store)
    whole = items(json.loads(memstack("binder", "list", "--json", cwd=store).stdout))
    assert len(whole) == 7
    assert [(r["created_at"], r["id"]) for r in whole] == sorted((r["created_at"], r["id"]) for r in whole)
    monkeypatch.setattr(spill, "RUN", 2)
    walked, cursor = [], None
    while True:
        page = binder_api.list_document(open_store(str(store)), limit=3, cursor=cursor)
        walked += page["items"]
        cursor = page["next_cursor"]
        if cursor is None:
            break
    assert walked == whole


def test_a_bulk_promotion_builds_the_views_instead_of_holding_its_ledger_lines(
        store: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Lines appended to the ledger beyond objects.HELD (a bulk import) are not held to patch the views:
    `since` gives way to a build, which streams the logs; a small promotion still patches."""
    for n in range(3):
        write(store, n, tier="verified", confidence=0.9, subject=f"s{n}", predicate="decided", object="x")
    promote_cli(store)
    for n in range(10, 30):
        write(store, n, tier="verified", confidence=0.9, subject=f"s{n}", predicate="decided", object="y")
    assert memstack("promote", "--now-ts", NOW, "--no-commit", cwd=store).returncode == 0  # 20 ledger lines
    assert patched(store) == built(store)  # held: under HELD
    monkeypatch.setattr(objects, "HELD", 1000)  # a ledger line is about 200 bytes
    assert patched(store) is None
    with objects.CatFile(store) as blobs:
        found = viewpatch.views_of(store, "", blobs, WORKTREE, WorktreeSource(store))
        assert {path: files.whole(view) for path, view in found.items()} == built(store)
