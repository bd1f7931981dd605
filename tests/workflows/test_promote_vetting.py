"""The pending records vetted as they are read (workflows/promote/vetting.py): each a valid intake record, none
holding a credential; a large promotion's by a second process (base/farm.py). The promotion is the same
whichever process vets, and when that process dies at once."""

import json
import sys
from pathlib import Path
from typing import Any

import pytest

from helpers import git, ok
from memstack.base import farm
from memstack.base.errors import MemstackError
from memstack.base.times import parse_ts
from memstack.workflows.promote import vetting
from memstack.workflows.promote.run import promote
from secret_corpus import AWS_ID, GH

DAYS = ["2026-03-02", "2026-03-03", "2026-03-04"]
WAYS = ["here", "second process", "second process dies"]


def _vetted_by(way: str, monkeypatch: pytest.MonkeyPatch) -> list[farm.Farm]:
    """The second processes of the promotion, as they are closed (how many batches each answered)."""
    closed: list[farm.Farm] = []
    real = farm.Farm.close

    def close(self: farm.Farm) -> None:
        closed.append(self)
        real(self)

    monkeypatch.setattr(farm.Farm, "close", close)
    if way != "here":
        monkeypatch.setattr(vetting, "START", 0)  # every file handed over, a few lines a batch
        monkeypatch.setattr(farm, "BATCH", 2000)
    if way == "second process dies":
        monkeypatch.setattr(sys, "executable", "/bin/false")
    return closed


def _answered(closed: list[farm.Farm]) -> int:
    return sum(f.answered for f in closed)


def _written(store: Path, changed: dict[tuple[int, int], dict[str, Any]]) -> list[str]:
    """Thirty records a day over three days, committed past the hooks, `changed` (day, n) replacing fields of
    some: their ids."""
    ids = []
    for day_index, day in enumerate(DAYS):
        first = ok(store, "intake", "write", "--content", "the build takes 3 s", "--subject", "build",
                   "--predicate", "takes", "--object", "3 s", "--created-at", f"{day}T10:00:00Z")
        record, lines = first["record"], []
        ids.append(record["id"])
        for n in range(30):
            line = {**record, "id": record["id"][:12] + f"{n + 1:012x}" + record["id"][24:], "content": f"build {n}",
                    "source": "https://example.org/doc", **changed.get((day_index, n), {})}
            lines.append(json.dumps(line) + "\n")
            ids.append(line["id"])
        with open(store / first["path"], "a") as out:
            out.writelines(lines)
    git(store, "add", "-A")
    git(store, "commit", "-q", "--no-verify", "-m", "past the checks")
    return ids


@pytest.mark.parametrize("way", WAYS)
def test_records_holding_a_credential_are_skipped_whichever_process_screens_them(
        store: Path, way: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    ids = _written(store, {(0, 4): {"content": f"token {GH}"}, (1, 17): {"object": AWS_ID[2:], "predicate":
                                                                         "id " + AWS_ID[:2], "source": "bench"},
                           (2, 29): {"title": "the deploy key", "content": GH}})
    closed = _vetted_by(way, monkeypatch)
    done = promote(store, parse_ts("2026-03-05T00:00:00Z", "now"))
    assert (_answered(closed) > 0) == (way == "second process")
    held = {ids[1 + 4], ids[31 + 1 + 17], ids[62 + 1 + 29]}
    assert set(done["held"]) == held
    assert sum(done["routed"].values()) == len(ids) - len(held)
    warned = capsys.readouterr().err
    assert all(f"record {i} holds a credential" in warned for i in held) and GH not in warned
    assert {r["id"] for r in ok(store, "intake", "list", "--pending", "--limit", "100")["items"]} == held


@pytest.mark.parametrize("way", WAYS)
def test_the_first_invalid_record_read_stops_the_promotion_whichever_process_validates(
        store: Path, way: str, monkeypatch: pytest.MonkeyPatch) -> None:
    _written(store, {(1, 21): {"confidence": 7}, (2, 3): {"tier": "guessed"}, (1, 25): {"created_at": 5}})
    before = git(store, "status", "--porcelain").stdout
    closed = _vetted_by(way, monkeypatch)
    with pytest.raises(MemstackError) as refused:
        promote(store, parse_ts("2026-03-05T00:00:00Z", "now"))
    assert (_answered(closed) > 0) == (way == "second process")
    assert str(refused.value).startswith(f"intake/alice/{DAYS[1]}.jsonl:23: I5 invalid intake record: confidence")
    assert git(store, "status", "--porcelain").stdout == before  # nothing written
