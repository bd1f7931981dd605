"""L2 intake: writes, lists, bad input, concurrent appends, torn lines, nest."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

from helpers import MEMSTACK, items, memstack, tree_snapshot
from memstack.base import layout
from memstack.base.errors import MemstackError
from memstack.intake import log as intake


def test_write_appends_one_valid_record_to_the_agents_day_file(store: Path) -> None:
    result = memstack("intake", "write", "--content", "tests run with pytest", "--title", "tests",
                      "--source", "https://docs.pytest.org", "--tier", "fetched", "--confidence", "0.7",
                      "--keyword", "pytest", "--tag", "tooling", "--tag", "ci", "--subject", "project",
                      "--predicate", "uses", "--object", "pytest", "--relevance-score", "0.6",
                      "--created-at", "2026-03-04T05:06:07Z", "--json", cwd=store)
    assert result.returncode == 0, result.stderr
    written = json.loads(result.stdout)
    assert written["path"] == "intake/alice/2026-03-04.jsonl"
    lines = (store / written["path"]).read_text().splitlines()
    assert len(lines) == 1
    record = json.loads(lines[0])
    assert record == written["record"]
    assert record["created_at"] == "2026-03-04T05:06:07.000Z"
    assert (record["tier"], record["confidence"], record["tags"]) == ("fetched", 0.7, ["tooling", "ci"])
    assert (record["subject"], record["predicate"], record["object"]) == ("project", "uses", "pytest")


def test_list_is_oldest_first_and_filters_by_agent(store: Path) -> None:
    for agent, when in (("bob", "2026-01-02T00:00:00Z"), ("alice", "2026-01-01T00:00:00Z"),
                        ("alice", "2026-01-03T00:00:00Z")):
        assert memstack("intake", "write", "--agent", agent, "--content", f"{agent} {when}",
                        "--created-at", when, cwd=store).returncode == 0
    everything = items(json.loads(memstack("intake", "list", "--json", cwd=store).stdout))
    assert [r["content"] for r in everything] == ["alice 2026-01-01T00:00:00Z", "bob 2026-01-02T00:00:00Z",
                                                 "alice 2026-01-03T00:00:00Z"]
    bobs = items(json.loads(memstack("intake", "list", "--agent", "bob", "--json", cwd=store).stdout))
    assert [r["agent"] for r in bobs] == ["bob"]


def test_pending_leaves_out_records_in_the_promotion_ledger(store: Path) -> None:
    first = intake.make_record(agent="alice", content="one", created_at=1_700_000_000_000)
    second = intake.make_record(agent="alice", content="two", created_at=1_700_000_000_001)
    intake.write(store, first)
    intake.write(store, second)
    shard = store / layout.ledger_shard(intake.relpath_for(first))  # kb/promotions/alice/2023-11-14.jsonl
    shard.parent.mkdir(parents=True, exist_ok=True)
    with shard.open("a") as ledger:
        ledger.write(json.dumps({"intake_id": first["id"], "agent": "alice", "sub_tier": "binder",
                                 "fact_id": None, "promoted_at": 1_700_000_000_500}) + "\n")
    assert [r["id"] for r in intake.records(store, pending=True)] == [second["id"]]
    assert len(intake.records(store)) == 2


BAD_WRITES = [
    (["--agent", "../../etc"], "agent"),
    (["--agent", "Alice"], "agent"),
    (["--agent", "al ice"], "agent"),
    (["--agent", "a/b"], "agent"),
    (["--agent", "alicе"], "agent"),  # a Cyrillic 'е'
    (["--confidence", "1.5"], "confidence"),
    (["--confidence", "-0.1"], "confidence"),
    (["--confidence", "nan"], "confidence"),
    (["--confidence", "inf"], "confidence"),
    (["--confidence", "lots"], "confidence"),
    (["--tier", "gospel"], "tier"),
    (["--created-at", "yesterday"], "created-at"),
    (["--created-at", "2026-13-45"], "created-at"),
    (["--subject", "s"], "subject"),
    (["--relevance-score", "2"], "relevance-score"),
]


@pytest.mark.parametrize(("extra", "field"), BAD_WRITES)
def test_bad_input_is_exit_2_one_line_and_writes_nothing(store: Path, extra: list[str], field: str) -> None:
    before = tree_snapshot(store)
    result = memstack("intake", "write", "--content", "x", *extra, cwd=store)
    assert result.returncode == 2
    assert field in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1 and "Traceback" not in result.stderr
    assert tree_snapshot(store) == before


@pytest.mark.parametrize("content", ["", "   \n"])
def test_empty_content_is_refused(store: Path, content: str) -> None:
    before = tree_snapshot(store)
    result = memstack("intake", "write", "--content", content, cwd=store)
    assert result.returncode == 2 and "content" in result.stderr
    assert tree_snapshot(store) == before


def test_a_nul_in_a_name_is_refused() -> None:
    with pytest.raises(MemstackError, match="agent"):
        intake.make_record(agent="ali\x00ce", content="x", created_at=0)


_APPENDER = """
import sys
from pathlib import Path
from memstack.intake import log as intake
store, worker = Path(sys.argv[1]), sys.argv[2]
for n in range(int(sys.argv[3])):
    record = intake.make_record(agent="alice", content=f"{worker}:{n}:" + "x" * 5000,
                                created_at="2026-05-05T12:00:00Z")
    intake.write(store, record)
"""


def test_concurrent_appends_lose_nothing_and_interleave_no_bytes(store: Path) -> None:
    workers, each = 6, 40
    procs = [subprocess.Popen([sys.executable, "-c", _APPENDER, str(store), f"w{w}", str(each)])
             for w in range(workers)]
    assert all(p.wait() == 0 for p in procs)
    lines = (store / "intake/alice/2026-05-05.jsonl").read_bytes().split(b"\n")
    assert lines[-1] == b""
    records = [json.loads(line) for line in lines[:-1]]
    seen = {r["content"].split(":")[0] + ":" + r["content"].split(":")[1] for r in records}
    assert len(records) == workers * each and len(seen) == workers * each


def test_concurrent_cli_writers_lose_nothing(store: Path) -> None:
    procs = [subprocess.Popen([MEMSTACK, "intake", "write", "--content", f"cli {n}",
                               "--created-at", "2026-05-06T00:00:00Z"], cwd=store) for n in range(8)]
    assert all(p.wait() == 0 for p in procs)
    records = intake.records(store)
    assert sorted(r["content"] for r in records) == sorted(f"cli {n}" for n in range(8))


def test_a_torn_last_line_is_reported_and_never_appended_to(store: Path) -> None:
    path = store / "intake/alice/2026-05-07.jsonl"
    path.parent.mkdir(parents=True)
    path.write_bytes(b'{"id": "half-writ')
    result = memstack("intake", "write", "--content", "more", "--created-at", "2026-05-07T01:00:00Z", cwd=store)
    assert result.returncode == 2
    assert "intake/alice/2026-05-07.jsonl" in result.stderr and "torn" in result.stderr
    assert "truncate" in result.stderr  # it says how to fix it
    assert path.read_bytes() == b'{"id": "half-writ'
    listing = memstack("intake", "list", cwd=store)
    assert listing.returncode == 2 and "torn" in listing.stderr


def test_nest_files_a_document_as_verified_with_full_confidence(store: Path, tmp_path: Path) -> None:
    doc = tmp_path / "runbook.md"
    doc.write_text("# Deploy runbook\n\nRun `make deploy` from main only.\n")
    result = memstack("nest", str(doc), "--agent", "bob", "--json", cwd=store)
    assert result.returncode == 0, result.stderr
    record = json.loads(result.stdout)["record"]
    assert (record["tier"], record["confidence"], record["agent"]) == ("verified", 1.0, "bob")
    assert record["title"] == "Deploy runbook" and record["content"] == doc.read_text()
    assert intake.records(store, "bob")[0]["id"] == record["id"]


def test_nest_of_a_missing_or_binary_file_is_refused(store: Path, tmp_path: Path) -> None:
    before = tree_snapshot(store)
    assert memstack("nest", str(tmp_path / "nope.md"), cwd=store).returncode == 2
    binary = tmp_path / "blob.bin"
    binary.write_bytes(b"\xff\xfe\x00\x01")
    result = memstack("nest", str(binary), cwd=store)
    assert result.returncode == 2 and "UTF-8" in result.stderr
    assert tree_snapshot(store) == before


@pytest.mark.parametrize("paged", [[], ["--limit", "5"], ["--json"]])
def test_listing_an_agent_the_store_does_not_have_is_refused(store: Path, paged: list[str]) -> None:
    """A typo in the agent narrowing a read says so, naming the agents, rather than "no intake records"; an agent
    memstack.yaml no longer lists whose records are here is still listed."""
    assert memstack("intake", "write", "--agent", "bob", "--content", "x", cwd=store).returncode == 0
    refused = memstack("intake", "list", "--agent", "bbo", *paged, cwd=store)
    assert refused.returncode == 2 and refused.stdout == ""
    assert refused.stderr.strip() == "memstack: bad --agent 'bbo': no agent of that name in this store (its agents:" \
        " alice, bob)"
    config = store / "memstack.yaml"
    config.write_text(config.read_text().replace("- bob\n", ""))
    listed = memstack("intake", "list", "--agent", "bob", *paged, cwd=store)
    assert listed.returncode == 0 and "bob" in listed.stdout, listed.stderr
