"""`memstack blame ID` and the `blame` tool: the chain behind a belief, from a real store's files and commits."""

import json
from pathlib import Path
from typing import Any

from helpers import git, memstack
from mcp_support import cli_json, ok, refused, run, server
from team_support import clone, guarded_remote


def _json(root: Path, *args: str) -> Any:
    result = memstack(*args, "--json", cwd=root)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


def _write(root: Path, obj: str, confidence: str, agent: str = "alice") -> str:
    written = _json(root, "intake", "write", "--agent", agent, "--content", f"the parser is built with {obj}",
                    "--title", f"parser: {obj}", "--tier", "verified", "--confidence", confidence,
                    "--subject", "parser", "--predicate", "decided", "--object", obj)
    return str(written["record"]["id"])


def _commit(root: Path, message: str) -> str:
    git(root, "add", "-A")
    done = git(root, "commit", "-q", "-m", message, check=False)
    assert done.returncode == 0, done.stdout + done.stderr
    return git(root, "rev-parse", "HEAD").stdout.strip()


def _head(root: Path) -> str:
    return git(root, "rev-parse", "HEAD").stdout.strip()


def test_blame_follows_promotion_binder_and_supersession(store: Path) -> None:
    first = _write(store, "pest", "0.9")
    assert memstack("promote", cwd=store).returncode == 0
    promoted = _head(store)
    waiting = _write(store, "lalrpop", "0.3")  # low confidence: waits in the Binder
    assert memstack("promote", cwd=store).returncode == 0
    ratified = memstack("binder", "ratify", waiting, "--by", "Carol Reviewer", "--note", "benchmarks agree",
                        cwd=store)
    assert ratified.returncode == 0, ratified.stderr
    decided = _commit(store, "binder: ratify the lalrpop decision")
    assert memstack("promote", cwd=store).returncode == 0
    made = _head(store)

    old_id = _json(store, "blame", first)["fact"]["record"]["id"]
    new = _json(store, "blame", waiting)
    assert new["kind"] == "intake" and new["id"] == waiting
    assert new["intake"]["record"]["id"] == waiting and new["intake"]["path"].startswith("intake/alice/")
    fact = new["fact"]
    assert fact["record"]["intake_id"] == waiting and fact["record"]["object"] == "lalrpop"
    assert fact["added"]["commit"] == made and fact["added"]["message"].startswith("memstack promote")
    assert fact["merge"] is None
    assert [p["sub_tier"] for p in new["promotions"]] == ["binder", "knowledge"]
    [decision] = new["decisions"]
    assert (decision["record"]["decision"], decision["record"]["by"]) == ("ratify", "Carol Reviewer")
    assert decision["added"]["commit"] == decided and decision["added"]["author"] == "Test Agent"
    assert [c["record"]["id"] for c in new["closed"]] == [old_id]
    assert new["closed_by"] is None

    by_fact = _json(store, "blame", fact["record"]["id"])
    assert by_fact["kind"] == "fact" and by_fact["fact"] == fact and by_fact["decisions"] == new["decisions"]

    old = _json(store, "blame", old_id)
    assert old["fact"]["added"]["commit"] == promoted and old["intake"]["record"]["id"] == first
    assert old["closed_by"]["record"]["id"] == fact["record"]["id"]
    assert old["closed_by"]["added"]["commit"] == made
    assert old["decisions"] == [] and old["anchors"] == []

    text = memstack("blame", waiting, cwd=store)
    assert text.returncode == 0, text.stderr
    for words in (f"fact {fact['record']['id']}", "parser decided lalrpop", f"intake {waiting}",
                  "binder ratify of intake", "by Carol Reviewer", "note: benchmarks agree", decided[:12],
                  f"closed {old_id}", "promoted", "to binder", "to knowledge"):
        assert words in text.stdout, (words, text.stdout)
    assert "merged by" not in text.stdout


def test_a_written_record_not_yet_committed_has_no_commit(store: Path) -> None:
    record = _write(store, "nom", "0.9")
    blamed = _json(store, "blame", record)
    assert blamed["intake"]["added"] is None and blamed["fact"] is None and blamed["promotions"] == []
    assert "not committed on this branch yet" in memstack("blame", record, cwd=store).stdout
    [fact] = _json(store, "fact", "add", "--subject", "db", "--predicate", "uses", "--object", "sqlite")
    _json(store, "fact", "invalidate", "--subject", "db", "--predicate", "uses")
    closed = _json(store, "blame", fact["id"])
    assert closed["closed_by"] is None and closed["fact"]["record"]["valid_to"] is not None
    assert "no successor: invalidated, valid until" in memstack("blame", fact["id"], cwd=store).stdout


def test_blame_names_the_merge_that_brought_a_fact_in(store: Path, tmp_path: Path) -> None:
    remote = guarded_remote(store, tmp_path)
    mine, theirs = clone(remote, tmp_path / "mine"), clone(remote, tmp_path / "theirs")
    captured = _json(theirs, "capture", "--agent", "bob", "--subject", "ci", "--predicate", "chose",
                     "--object", "woodpecker")
    their_commit = _commit(theirs, "bob: ci chose woodpecker")
    assert git(theirs, "push", "-q", "origin", "main", check=False).returncode == 0
    _json(mine, "capture", "--subject", "docs", "--predicate", "chose", "--object", "mkdocs")
    _commit(mine, "alice: docs chose mkdocs")
    git(mine, "fetch", "-q", "origin")
    merged = git(mine, "merge", "--no-edit", "origin/main", check=False)
    assert merged.returncode == 0, merged.stdout + merged.stderr
    merge = _head(mine)
    [fact] = captured
    fact_id = fact["id"]

    here = _json(mine, "blame", fact_id)
    assert here["fact"]["added"]["commit"] == their_commit
    assert here["fact"]["merge"]["commit"] == merge and len(here["fact"]["merge"]["parents"]) == 2
    assert here["intake"] is None and here["promotions"] == []
    assert f"merged by  {merge[:12]}" in memstack("blame", fact_id, cwd=mine).stdout

    there = _json(theirs, "blame", fact_id)
    assert there["fact"]["added"]["commit"] == their_commit and there["fact"]["merge"] is None


def test_the_blame_tool_returns_what_the_command_prints(store: Path) -> None:
    record = _write(store, "pest", "0.9")
    assert memstack("promote", cwd=store).returncode == 0

    async def session() -> None:
        async with server("--store", str(store)) as client:
            assert await ok(client, "blame", id=record) == cli_json(store, "blame", record)
            assert "no fact or intake record has this id" in await refused(
                client, "blame", id="0190000000000000000000000000abcd")
            assert "not a fact or intake id" in await refused(client, "blame", id="../x")

    run(session)


def test_blame_in_a_store_inside_a_code_repository(tmp_path: Path) -> None:
    code = tmp_path / "code"
    code.mkdir()
    git(code, "init", "-q", "-b", "main")
    (code / "README").write_text("a project\n")
    _commit(code, "the project")
    assert memstack("init", ".memory", "--agent", "alice", cwd=code).returncode == 0
    [fact] = _json(code, "capture", "--subject", "ci", "--predicate", "chose", "--object", "gha")
    added = _commit(code, "memory: ci chose gha")
    (code / "src").mkdir()
    blamed = _json(code / "src", "blame", fact["id"])
    assert blamed["fact"]["path"] == "kb/facts/alice/" + blamed["fact"]["path"].rsplit("/", 1)[1]
    assert blamed["fact"]["added"]["commit"] == added


def test_blame_shows_the_code_anchors_a_record_carries(store: Path) -> None:
    [fact] = _json(store, "capture", "--subject", "parser", "--predicate", "decided", "--object", "pest")
    anchored = {**fact, "id": fact["id"][:12] + "0" * 12 + fact["id"][24:], "object": "pest 2.7",
                "anchors": [{"path": "src/parser.py", "start": 3, "end": 9, "commit": "a" * 40, "blob": "b" * 40,
                             "lines_sha256": "c" * 64}]}
    path = store / "kb" / "facts" / "alice" / Path(_json(store, "blame", fact["id"])["fact"]["path"]).name
    with path.open("a") as handle:  # a record as the code anchors' writers make it
        handle.write(json.dumps(anchored) + "\n")
    blamed = _json(store, "blame", anchored["id"])
    assert [a["path"] for a in blamed["anchors"]] == ["src/parser.py"] and blamed["fact"]["added"] is None
    text = memstack("blame", anchored["id"], cwd=store).stdout
    assert "code anchors\n  src/parser.py:3-9  at aaaaaaaaaaaa" in text
    assert _json(store, "blame", fact["id"])["anchors"] == []
