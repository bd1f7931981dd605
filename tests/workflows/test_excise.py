"""`memstack excise`: the content of forgotten records removed from every commit of every branch, a receipt
committed, the clone cleaned; every rewritten commit still passes the store's checks."""

import json
from pathlib import Path

import pytest
from excise_support import SECRETS, every_object, every_object_any, forgotten_store, ok

from helpers import git, memstack


def test_excise_removes_every_byte_of_the_forgotten_content_and_every_commit_still_passes_the_checks(
        store: Path) -> None:
    names = forgotten_store(store)
    assert all(text.encode() in every_object(store) for text in SECRETS)
    before = git(store, "log", "--format=%an%x00%ae%x00%at%x00%cn%x00%ct%x00%s", "main").stdout.splitlines()
    dry = ok(store, "excise", "--dry-run")
    assert set(dry["records"]) == set(names.values()) and dry["commits"] >= 2 and dry["blobs"] >= 6
    assert git(store, "rev-parse", "main").stdout.strip() == dry["heads_before"]["refs/heads/main"]  # unchanged

    done = ok(store, "excise", "--by", "Grace Hopper", "--reason", "an erasure request")
    receipt = done["receipt"]
    assert set(receipt["records"]) == set(names.values()) and receipt["by"] == "Grace Hopper"
    [(ref, heads)] = receipt["heads"].items()
    assert ref == "refs/heads/main" and heads["old"] == dry["heads_before"]["refs/heads/main"]
    assert git(store, "rev-parse", "main~1").stdout.strip() == heads["new"]  # the receipt's commit on top
    lines = (store / "kb/erasures.jsonl").read_text().splitlines()
    assert [json.loads(line) for line in lines] == [receipt]
    after = git(store, "log", "--format=%an%x00%ae%x00%at%x00%cn%x00%ct%x00%s", "main~1").stdout.splitlines()
    assert after == before  # every commit kept, with its authors, dates and message

    everything = every_object(store) + every_object_any(store)
    assert not [text for text in SECRETS if text.encode() in everything]
    assert b"an unrelated note that stays" in everything and b"visible" in everything
    assert git(store, "status", "--porcelain").stdout == ""
    root = git(store, "rev-list", "--max-parents=0", "HEAD").stdout.strip()
    checked = memstack("check", "--range", f"{root}..HEAD", cwd=store)
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert memstack("rebuild", "--check", cwd=store).returncode == 0
    record = json.loads((store / "intake/alice/2026-03-02.jsonl").read_text().splitlines()[0])
    assert record["id"] == names["intake"] and record["created_at"].startswith("2026-03-02")
    assert record["content"].startswith("[excised sha256:") and record["keywords"] == []
    salt = (store / ".memstack/excise" / f"{receipt['id']}.salt").read_text().strip()
    assert salt == done["salt"] and salt.encode() not in everything  # the salt is never committed

    again = ok(store, "excise")
    assert again["records"] == [] and git(store, "rev-parse", "HEAD").stdout.strip() == \
        git(store, "rev-parse", "main").stdout.strip()


def test_nothing_forgotten_is_nothing_to_excise(store: Path) -> None:
    head = git(store, "rev-parse", "HEAD").stdout.strip()
    said = memstack("excise", cwd=store)
    assert said.returncode == 0 and "nothing to excise" in said.stdout
    assert git(store, "rev-parse", "HEAD").stdout.strip() == head


def test_excise_refuses_a_dirty_work_tree_in_one_line(store: Path) -> None:
    forgotten_store(store)
    (store / "notes.txt").write_text("not committed\n")
    head = git(store, "rev-parse", "HEAD").stdout.strip()
    said = memstack("excise", cwd=store)
    assert said.returncode == 2 and "uncommitted changes" in said.stderr and len(said.stderr.splitlines()) == 1
    assert git(store, "rev-parse", "HEAD").stdout.strip() == head


@pytest.mark.parametrize("stage", ["planned", "rewritten", "receipts", "moved", "scratch"])
def test_excise_killed_anywhere_leaves_before_or_after_and_a_rerun_finishes(store: Path, stage: str) -> None:
    forgotten_store(store)
    old = git(store, "rev-parse", "main").stdout.strip()
    killed = memstack("excise", cwd=store, env={"MEMSTACK_EXCISE_KILL_AT": stage})
    assert killed.returncode == -9
    now = git(store, "rev-parse", "main").stdout.strip()
    if now == old:  # as before
        assert stage in ("planned", "rewritten", "receipts")
    else:  # as after: the receipt on top
        assert stage in ("moved", "scratch") and (store / "kb/erasures.jsonl").exists() \
            or git(store, "cat-file", "-e", "main:kb/erasures.jsonl", check=False).returncode == 0
    done = ok(store, "excise")
    assert done.get("resumed") is True
    assert not [text for text in SECRETS if text.encode() in every_object(store) + every_object_any(store)]
    assert git(store, "status", "--porcelain").stdout == ""
    assert len((store / "kb/erasures.jsonl").read_text().splitlines()) == 1
