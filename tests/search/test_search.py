"""`memstack search`: real stores, real `memstack` processes, the real MCP SDK client."""

import json
import os
import sqlite3
import subprocess
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client, StdioServerParameters

from helpers import MEMSTACK, git, memstack, tree_snapshot

INDEX = ".memstack/search.sqlite3"
DAY = 86_400_000
T0 = 1_767_225_600_000  # 2026-01-01T00:00:00Z
HANDOFF = """## Open threads

- the canary deployment of the billing service waits for a green run

## Capability table

| capability | status |
|---|---|
| search | done |
"""


def search(store: Path, *args: str) -> dict[str, Any]:
    result = memstack("search", *args, "--json", cwd=store)
    assert result.returncode == 0, result.stderr
    document: dict[str, Any] = json.loads(result.stdout)
    return document


def ids(document: dict[str, Any]) -> list[str]:
    return [hit.get("id") or hit["section"] for hit in document["hits"]]


def write(store: Path, *args: str) -> dict[str, Any]:
    result = memstack(*args, "--json", cwd=store)
    assert result.returncode == 0, result.stderr
    document: dict[str, Any] = json.loads(result.stdout)
    return document


def intake(store: Path, content: str, *extra: str) -> str:
    return str(write(store, "intake", "write", "--content", content, *extra)["record"]["id"])


def noise(store: Path, count: int = 4) -> None:
    """Unrelated records, so that a word of a few records is rare (BM25 needs that to rank by it)."""
    for n in range(count):
        intake(store, f"routine note {n} about the weekly sync of the team calendar")


def test_stemming_finds_other_forms_of_a_word_and_marks_the_match(store: Path) -> None:
    noise(store)
    wanted = intake(store, "the deployment goes through the staging cluster")
    for query in ("deploys", "deploying", "deployed", "deployment"):
        found = search(store, query)
        assert ids(found) == [wanted], query
    [hit] = search(store, "deploys")["hits"]
    assert "**deployment**" in hit["snippet"]
    assert hit["layer"] == "intake" and hit["where"] == f"{hit['path']}:5" and hit["score"] > 0
    assert search(store, "kubernetes")["hits"] == []


def test_a_record_about_the_query_ranks_above_one_that_mentions_it_once(store: Path) -> None:
    noise(store)
    once = intake(store, "we talked about lunch, rollback plans, and the office move", "--title", "Friday")
    about = intake(store, "the rollback restores the previous release; rollback takes a minute",
                   "--title", "Rollback procedure")
    found = search(store, "rollback")
    assert ids(found) == [about, once]
    assert found["hits"][0]["score"] > found["hits"][1]["score"]


def test_every_layer_is_searched_and_each_filter_narrows(store: Path) -> None:
    noise(store)
    alice = intake(store, "the invoice service owns billing", "--tier", "verified")
    bob = intake(store, "billing retries are capped", "--agent", "bob")
    [fact] = write(store, "fact", "add", "--subject", "billing", "--predicate", "uses", "--object", "stripe",
                   "--valid-from", str(T0), "--recorded-at", str(T0))
    [atom] = write(store, "fact", "add", "--subject", "billing-docs", "--predicate", "cites", "--object", "rfc",
                   "--valid-from", str(T0), "--recorded-at", str(T0), "--table", "jeles_atoms")
    assert memstack("soil", "put", "session", "current", "--value", '{"topic": "billing migration"}',
                    cwd=store).returncode == 0
    assert memstack("handoff", "write", "--agent", "bob", input=HANDOFF.replace("canary", "billing canary"),
                    cwd=store).returncode == 0

    everything = search(store, "billing")
    assert {h["layer"] for h in everything["hits"]} == {"facts", "intake", "handoffs", "soil"}
    assert set(ids(everything)) >= {alice, bob, fact["id"], atom["id"], "session/current", "Open threads"}
    [soil_hit] = [h for h in everything["hits"] if h["layer"] == "soil"]
    assert soil_hit["where"] == "store/session/current.json"
    [handoff_hit] = [h for h in everything["hits"] if h["layer"] == "handoffs"]
    assert handoff_hit["where"].startswith("handoffs/bob/session_handoff-") and handoff_hit["line"] > 1

    assert set(ids(search(store, "billing", "--layer", "facts"))) == {fact["id"], atom["id"]}
    assert {h["layer"] for h in search(store, "billing", "--layer", "soil", "--layer", "handoffs")["hits"]} == \
        {"soil", "handoffs"}
    assert set(ids(search(store, "billing", "--agent", "bob"))) == {bob, "Open threads"}
    assert ids(search(store, "billing", "--tier", "verified")) == [alice]
    assert ids(search(store, "billing", "--table", "jeles_atoms")) == [atom["id"]]
    assert ids(search(store, "billing", "--table", "knowledge", "--layer", "intake")) == []


def test_a_closed_fact_and_its_successor_are_both_found_with_their_windows(store: Path) -> None:
    [first] = write(store, "fact", "add", "--subject", "queue", "--predicate", "decided", "--object", "rabbitmq",
                    "--valid-from", str(T0), "--recorded-at", str(T0))
    later = T0 + 10 * DAY
    [second] = [f for f in write(store, "capture", "--subject", "queue", "--predicate", "decided", "--object", "kafka",
                                 "--valid-from", str(later), "--recorded-at", str(later + DAY), "--contradicts")
                if f["object"] == "kafka"]
    hits = {h["id"]: h for h in search(store, "queue")["hits"]}
    assert set(hits) == {first["id"], second["id"]}
    assert (hits[first["id"]]["valid_from"], hits[first["id"]]["valid_to"]) == (T0, later)
    assert (hits[second["id"]]["valid_from"], hits[second["id"]]["valid_to"]) == (later, None)
    assert hits[first["id"]]["valid_to_iso"] == "2026-01-11T00:00:00.000Z"

    # valid time: which one held then
    assert ids(search(store, "queue", "--valid-at", str(T0 + DAY))) == [first["id"]]
    assert ids(search(store, "queue", "--valid-at", str(later))) == [second["id"]]  # valid_to belongs to the successor
    assert ids(search(store, "queue", "--valid-at", "now")) == [second["id"]]
    assert ids(search(store, "queue", "--valid-at", str(T0 - 1))) == []
    # transaction time: before the closing was recorded, the store knew only the first, still open
    [known] = search(store, "queue", "--as-of", str(later + 1))["hits"]
    assert (known["id"], known["valid_to"]) == (first["id"], None)
    assert ids(search(store, "queue", "--as-of", str(later + DAY))) == [second["id"]]
    assert ids(search(store, "queue", "--as-of", str(T0 - 1))) == []
    assert ids(search(store, "queue", "--valid-at", str(T0 + DAY), "--as-of", "now")) == [first["id"]]


def test_as_of_keeps_intake_written_by_then(store: Path) -> None:
    old = intake(store, "the cache warms at boot", "--created-at", "2026-01-05T10:00:00Z")
    new = intake(store, "the cache warms lazily now", "--created-at", "2026-03-05T10:00:00Z")
    assert set(ids(search(store, "cache"))) == {old, new}
    assert ids(search(store, "cache", "--as-of", "2026-02-01T00:00:00Z")) == [old]
    assert ids(search(store, "cache", "--valid-at", "2026-02-01T00:00:00Z")) == []  # intake has no validity


def test_pages_cover_every_hit_once(store: Path) -> None:
    made = {intake(store, f"incident {n}: the pager woke the on-call" + " pager" * (n % 4)) for n in range(23)}
    seen: list[str] = []
    cursor = None
    pages = 0
    while True:
        found = search(store, "pager", "--limit", "5", *(["--cursor", cursor] if cursor else []))
        pages += 1
        seen += ids(found)
        assert found["remaining"] == 23 - len(seen)
        cursor = found["next_cursor"]
        if cursor is None:
            break
    assert pages == 5 and len(seen) == len(set(seen)) == 23 and set(seen) == made
    assert ids(search(store, "pager", "--limit", "100")) == seen  # the pages are the ranking, cut
    # the CLI's default page
    assert len(search(store, "pager")["hits"]) == 20


def test_text_output_says_how_to_go_on_on_stderr_as_every_list_verb_does(store: Path) -> None:
    for n in range(5):
        intake(store, f"incident {n}: the pager woke the on-call")
    text = memstack("search", "pager", "--limit", "2", cwd=store)
    assert text.returncode == 0 and "more" not in text.stdout and "--cursor" not in text.stdout
    assert len(text.stdout.splitlines()) == 4  # two hits of two lines each, nothing else
    cursor = search(store, "pager", "--limit", "2")["next_cursor"]
    assert text.stderr.splitlines() == [f"… 3 more; --cursor {cursor}"]  # docs/bounded.md, as intake list says it


def test_an_appended_line_is_indexed_without_rebuilding(store: Path) -> None:
    first = intake(store, "the compiler flags are set in one place")
    assert ids(search(store, "compiler")) == [first]
    index = store / INDEX
    with sqlite3.connect(index) as db:
        before = dict(db.execute("SELECT ref, rowid FROM docs"))
    inode = index.stat().st_ino
    second = intake(store, "the compiler cache lives in the build folder")
    assert set(ids(search(store, "compiler"))) == {first, second}
    assert index.stat().st_ino == inode
    with sqlite3.connect(index) as db:
        after = dict(db.execute("SELECT ref, rowid FROM docs"))
    assert {ref: after[ref] for ref in before} == before  # the rows already there were not re-read
    assert set(after) - set(before) == {second}


def test_a_deleted_or_corrupt_index_is_rebuilt(store: Path) -> None:
    wanted = intake(store, "the firewall blocks port 25")
    assert ids(search(store, "firewall")) == [wanted]
    for suffix in ("", "-wal", "-shm"):
        (store / (INDEX + suffix)).unlink(missing_ok=True)
    assert ids(search(store, "firewall")) == [wanted]
    (store / INDEX).write_bytes(b"this is not a database" * 100)
    for suffix in ("-wal", "-shm"):
        (store / (INDEX + suffix)).unlink(missing_ok=True)
    assert ids(search(store, "firewall")) == [wanted]


def test_files_changed_by_git_are_re_read(store: Path) -> None:
    kept = intake(store, "the nightly backup runs at two")
    git(store, "add", "-A")
    git(store, "commit", "-qm", "memory")
    dropped = intake(store, "the backup also copies the logs")
    assert set(ids(search(store, "backup"))) == {kept, dropped}
    git(store, "checkout", "--", "intake")  # the file shrinks back to the committed line
    assert ids(search(store, "backup")) == [kept]
    git(store, "checkout", "-q", "-b", "other", "HEAD~1")  # a branch where the file does not exist
    assert ids(search(store, "backup")) == []
    git(store, "checkout", "-q", "-")
    assert ids(search(store, "backup")) == [kept]


def test_a_soil_record_rewritten_is_found_by_its_new_value_only(store: Path) -> None:
    assert memstack("soil", "put", "plans", "today", "--value", '"write the parser"', cwd=store).returncode == 0
    assert ids(search(store, "parser")) == ["plans/today"]
    assert memstack("soil", "update", "plans", "today", "--value", '"review the lexer"', cwd=store).returncode == 0
    assert ids(search(store, "parser")) == []
    assert ids(search(store, "lexer")) == ["plans/today"]


def test_searches_at_once_build_one_index_and_agree(store: Path) -> None:
    for n in range(30):
        intake(store, f"the gateway timeout was raised to {n} s")
    runs = [subprocess.Popen([MEMSTACK, "search", "gateway", "--json", "--limit", "100"], cwd=store,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for _ in range(4)]
    answers = []
    for run in runs:
        out, err = run.communicate(timeout=120)
        assert run.returncode == 0, err
        answers.append(ids(json.loads(out)))
    assert all(len(answer) == 30 for answer in answers) and answers.count(answers[0]) == 4
    with sqlite3.connect(store / INDEX) as db:
        assert db.execute("SELECT count(*) FROM docs").fetchone() == (30,)
        assert db.execute("PRAGMA integrity_check").fetchone() == ("ok",)


@pytest.mark.parametrize("query", ["foo-bar", '"', "AND", "OR NOT", "(", "a*b", "NEAR(x y)", "col:value", "^x", "*"])
def test_free_text_never_reaches_fts5_as_syntax(store: Path, query: str) -> None:
    intake(store, "foo bar and col value near x y")
    result = memstack("search", query, "--json", cwd=store)
    assert result.returncode == 0, result.stderr
    assert "Traceback" not in result.stderr


@pytest.mark.parametrize(("args", "field"), [
    (("",), "QUERY"),
    (("   ",), "QUERY"),
    (("x", "--layer", "kb"), "layer"),
    (("x", "--valid-at", "yesterday"), "valid-at"),
    (("x", "--as-of", "2026-13-45"), "as-of"),
    (("x", "--tier", "sure"), "tier"),
    (("x", "--table", "facts"), "table"),
    (("x", "--agent", "Bad Name"), "agent"),
    (("x", "--agent", "carol"), "bad --agent 'carol': no agent of that name in this store (its agents: alice, bob)"),
    (("x", "--limit", "0"), "limit"),
    (("x", "--cursor", "garbage"), "cursor"),
])
def test_bad_input_is_exit_2_naming_the_field(store: Path, args: tuple[str, ...], field: str) -> None:
    before = tree_snapshot(store)
    result = memstack("search", *args, cwd=store)
    assert result.returncode == 2
    assert field in result.stderr and "Traceback" not in result.stderr
    assert tree_snapshot(store) == before


def test_the_search_tool_over_mcp(store: Path) -> None:
    noise(store)
    made = [intake(store, f"the migration step {n} rewrites a table") for n in range(7)]

    async def session() -> None:
        params = StdioServerParameters(command=MEMSTACK, args=["mcp"], cwd=store, env=dict(os.environ))
        async with Client(params, mode="legacy") as client:
            [tool] = [t for t in (await client.list_tools()).tools if t.name == "search"]
            assert tool.input_schema["required"] == ["query"]
            result = await client.call_tool("search", {"query": "migrations", "limit": 4})
            assert not result.is_error, result.content
            first = json.loads(result.content[0].text)
            assert len(first["hits"]) == 4 and first["remaining"] == 3
            result = await client.call_tool("search", {"query": "migrations", "cursor": first["next_cursor"]})
            second = json.loads(result.content[0].text)
            assert set(ids(first)) | set(ids(second)) == set(made) and second["next_cursor"] is None
            cli = search(store, "migrations", "--limit", "50")
            assert ids(cli) == ids(first) + ids(second)
            for arguments, message in (({"query": ""}, "bad query"), ({"query": "x", "layer": ["kb"]}, "bad layer"),
                                       ({"query": "x", "valid_at": "soon"}, "bad valid_at")):
                result = await client.call_tool("search", arguments)
                assert result.is_error and message in result.content[0].text

    anyio.run(session)


def test_appends_to_an_older_file_and_by_hand_to_the_newest_are_found(store: Path) -> None:
    old = intake(store, "the old day mentions a lighthouse", "--created-at", "2026-01-05T10:00:00Z")
    new = intake(store, "the new day mentions a lighthouse too", "--created-at", "2026-01-09T10:00:00Z")
    assert set(ids(search(store, "lighthouse"))) == {old, new}
    backdated = intake(store, "a late note on the lighthouse", "--created-at", "2026-01-05T18:00:00Z")
    assert set(ids(search(store, "lighthouse"))) == {old, new, backdated}  # not the folder's newest file
    newest = store / "intake/alice/2026-01-09.jsonl"
    record = json.loads(newest.read_text().splitlines()[0])
    record.update(id=record["id"][:-1] + ("0" if record["id"][-1] != "0" else "1"), content="a lighthouse by hand")
    with newest.open("a") as handle:  # appended in place by another tool: the folder does not move
        handle.write(json.dumps(record) + "\n")
    assert record["id"] in ids(search(store, "lighthouse"))


def test_a_word_most_records_hold_filters_and_the_rare_words_rank(store: Path) -> None:
    for n in range(5):
        intake(store, f"status report {n}: all green")
    zebra = intake(store, "status report: the zebra crossing is closed", "--title", "zebra")
    other = intake(store, "a zebra was seen near the gate")
    found = search(store, "status zebra")
    assert ids(found) == [zebra, other]  # "status" is in most records: it filters, and adds no hit
    assert found["matched"] == "all words, then any word"
    assert ids(search(store, "zebra")) == [zebra, other]  # the title counts twice
    assert len(search(store, "status")["hits"]) == 6
    assert search(store, "status unicorn")["matched"] == "any word"
