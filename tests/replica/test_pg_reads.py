"""The read verbs answered from the PostgreSQL replica (`--pg`): the same `--json` documents as the files.

A real server per test process (tests/pgcluster.py); the CLI and the MCP
server run as subprocesses, as users run them.
"""

import json
import tempfile
from pathlib import Path
from typing import Any

import anyio
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from mcp import Client, StdioServerParameters

from helpers import MEMSTACK, copied_to, git, items, made_from, memstack
from memstack.base.errors import MemstackError
from memstack.base.output import render_json
from memstack.kb import factstore
from memstack.kb.readers import FileReader
from memstack.replica import replicate as sync
from memstack.replica.reads import ReplicaReader
from pgcluster import Cluster

JAN_MS = 1_767_225_600_000
DAY = 86_400_000


def stdout(*args: str, cwd: Path, env: dict[str, str] | None = None) -> str:
    result = memstack(*args, cwd=cwd, env=env)
    assert result.returncode == 0, result.stderr
    return result.stdout


def build_history(store: Path) -> None:
    """Decisions of two subjects over time: adds, contradicting captures, an invalidation; committed."""
    def run(*args: str) -> None:
        stdout(*args, "--json", cwd=store)

    for n, (subject, predicate, value) in enumerate([
            ("acme", "decided", "sqlite"), ("acme", "Prefers", "tabs"), ("acme", "uses", "git"),
            ("beta", "chose", "rust"), ("beta", "pattern", "event sourcing"), ("acme", "decided", "postgres"),
            ("beta", "chose", "go"), ("acme", "Prefers", "spaces")]):
        ts = str(JAN_MS + n * DAY)
        run("capture", "--subject", subject, "--predicate", predicate, "--object", value, "--valid-from", ts,
            "--recorded-at", ts, *(["--contradicts"] if n >= 5 else []))
    run("fact", "invalidate", "--subject", "acme", "--predicate", "uses", "--valid-to", str(JAN_MS + 9 * DAY),
        "--recorded-at", str(JAN_MS + 10 * DAY))
    git(store, "add", "-A")
    git(store, "commit", "-q", "-m", "decisions")


@pytest.fixture(scope="module")
def _history(_store_template: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    return made_from(_store_template, tmp_path_factory, "history", build_history)[0]


@pytest.fixture
def history(_history: Path, tmp_path: Path) -> Path:
    """A new store after `build_history` (made once for the module, copied for each test)."""
    return copied_to(_history, tmp_path / "store")


# Before anything, a change's instant, just after it, after the invalidation (the in-process property below
# covers every instant; each probe here costs subprocesses).
PROBES = [JAN_MS - 1, JAN_MS + 5 * DAY, JAN_MS + 5 * DAY + 1, JAN_MS + 9 * DAY]


@pytest.mark.slow
def test_every_read_verb_answers_the_same_document_from_the_replica(history: Path, pg_dsn: str) -> None:
    store = history
    stdout("pg", "sync", pg_dsn, cwd=store)
    asked = 0
    for ts in map(str, PROBES):
        for verb in (["recall", "--subject", "acme", "--now-ts", ts], ["recall", "--subject", "beta", "--now-ts", ts,
                                                                      "--limit", "1"],
                     ["fact", "get-valid-at", "--ts", ts], ["fact", "get-valid-at", "--ts", ts, "--subject", "acme"],
                     ["fact", "get-valid-at", "--ts", ts, "--as-of", str(JAN_MS + 6 * DAY)],
                     ["fact", "get-valid-at", "--ts", ts, "--subject", "beta", "--as-of", str(JAN_MS + 3 * DAY)]):
            files = stdout(*verb, "--json", cwd=store)
            assert stdout(*verb, "--json", "--pg", pg_dsn, cwd=store) == files, verb
            asked += json.loads(files)["items"] != []
    assert asked > 12  # the probes found facts
    text = ["fact", "get-valid-at", "--ts", str(PROBES[2])]
    assert stdout(*text, "--pg", pg_dsn, cwd=store) == stdout(*text, cwd=store)  # the text output too
    for subject in ("acme", "beta", "nobody"):
        verb = ["fact", "history", "--subject", subject, "--json"]
        assert stdout(*verb, "--pg", pg_dsn, cwd=store) == stdout(*verb, cwd=store)


def test_a_host_with_no_clone_recalls_from_the_replica(history: Path, tmp_path: Path, pg_dsn: str) -> None:
    store = history
    config = store / "memstack.yaml"
    config.write_text(config.read_text().replace("recall_limit: 50", "recall_limit: 1")
                      if "recall_limit: 50" in config.read_text()
                      else config.read_text() + "memory:\n  recall_limit: 1\n")
    git(store, "commit", "-q", "-am", "recall one")
    stdout("pg", "sync", pg_dsn, cwd=store)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    verb = ["recall", "--subject", "acme", "--now-ts", str(JAN_MS + 20 * DAY), "--json"]
    from_files = json.loads(stdout(*verb, cwd=store))
    assert len(from_files["items"]) == 1 and from_files["remaining"] == 1  # the synced recall_limit applies
    assert stdout(*verb, "--pg", cwd=elsewhere, env={"MEMSTACK_PG": pg_dsn}) == stdout(*verb, cwd=store)
    assert items(json.loads(stdout(*verb, cwd=elsewhere))) == []  # without --pg: no store here, nothing recalled


def test_a_database_never_synced_is_a_clear_error(store: Path, pg_dsn: str) -> None:
    result = memstack("recall", "--subject", "acme", "--pg", pg_dsn, cwd=store)
    assert result.returncode == 2
    assert result.stderr.strip().endswith("holds no memstack replica yet — run `memstack pg sync` in a clone of"
                                          " the store")
    bad = memstack("fact", "history", "--subject", "acme", "--pg", "port=notanumber", cwd=store)
    assert bad.returncode == 2 and "\n" not in bad.stderr.strip() and "Traceback" not in bad.stderr
    wrong = memstack("fact", "get-valid-at", "--ts", "yesterday", "--pg", pg_dsn, cwd=store)
    assert wrong.returncode == 2 and "bad ts 'yesterday'" in wrong.stderr  # bad input is bad before any query


def test_mcp_serves_the_read_tools_from_the_replica(history: Path, tmp_path: Path, pg_dsn: str) -> None:
    store = history
    stdout("pg", "sync", pg_dsn, cwd=store)
    ts = str(JAN_MS + 7 * DAY)
    expected = {
        "recall": stdout("recall", "--subject", "acme", "--now-ts", ts, "--json", cwd=store),
        "fact_get_valid_at": stdout("fact", "get-valid-at", "--ts", ts, "--as-of", ts, "--json", cwd=store),
        "fact_history": stdout("fact", "history", "--subject", "beta", "--json", cwd=store),
    }
    arguments = {"recall": {"subject": "acme", "now_ts": ts}, "fact_get_valid_at": {"ts": ts, "as_of": ts},
                 "fact_history": {"subject": "beta"}}
    elsewhere = tmp_path / "no-clone"
    elsewhere.mkdir()

    async def check() -> None:
        params = StdioServerParameters(command=MEMSTACK, args=["mcp", "--pg", pg_dsn], cwd=elsewhere)
        async with Client(params, mode="legacy") as client:
            for tool, args in arguments.items():
                result = await client.call_tool(tool, args)
                assert not result.is_error, result.content
                assert json.loads(result.content[0].text) == json.loads(expected[tool]), tool  # the same document
                assert result.content[0].text == json.dumps(json.loads(expected[tool]), separators=(",", ":"),
                                                            sort_keys=True, ensure_ascii=False), tool  # compact
            refused = await client.call_tool("fact_add", {"subject": "x", "predicate": "y", "object": "z",
                                                          "valid_from": 1})
            assert refused.is_error and "no memstack store here" in refused.content[0].text

    anyio.run(check)


# --- the property: any sequence of writes, synced in steps, reads the same from both sources ---------

SUBJECTS = ("acme", "Ünïcode", "a\x00b", "a\ufffdb")  # NUL cannot be PostgreSQL text: see replica/tables.py
PREDICATES = ("decided", "Prefers", "status")
operations = st.one_of(
    st.tuples(st.just("add"), st.sampled_from(SUBJECTS), st.sampled_from(PREDICATES), st.sampled_from("xyz"),
              st.integers(0, 8)),
    st.tuples(st.just("capture"), st.sampled_from(SUBJECTS), st.sampled_from(PREDICATES), st.sampled_from("xyz"),
              st.integers(0, 8)),
    st.tuples(st.just("invalidate"), st.sampled_from(SUBJECTS), st.sampled_from(PREDICATES), st.integers(0, 8)),
    st.tuples(st.just("sync")),
)


def _apply(root: Path, step: int, op: tuple[Any, ...]) -> None:
    recorded = JAN_MS + step * 4 * DAY  # a new month every few steps: several files
    try:
        if op[0] == "add":
            factstore.add(root, subject=op[1], predicate=op[2], object=op[3], valid_from=op[4] * 1000,
                          recorded_at=recorded, agent=("alice", "bob")[step % 2])
        elif op[0] == "capture":
            factstore.capture(root, subject=op[1], predicate=op[2], object=op[3], valid_from=op[4] * 1000,
                              recorded_at=recorded, agent="alice", contradicts=True)
        else:
            factstore.invalidate(root, subject=op[1], predicate=op[2], valid_to=op[3] * 1000, recorded_at=recorded)
    except MemstackError:
        pass  # refused (nothing to close, an overlap): nothing written


def _same_answers(root: Path, replica: ReplicaReader, steps: int) -> None:
    files = FileReader(root)
    for ts in range(-500, 9001, 500):
        assert render_json(replica.valid_at(ts)) == render_json(files.valid_at(ts)), ts
        for step in range(0, steps + 1, 3):
            as_of = JAN_MS + step * 4 * DAY
            assert replica.valid_at(ts, None, as_of) == files.valid_at(ts, None, as_of), (ts, as_of)
        for subject in SUBJECTS:
            assert render_json(replica.recall(subject, ts, 2)) == render_json(files.recall(subject, ts, 2))
            assert render_json(replica.recall(subject, ts)) == render_json(files.recall(subject, ts))
            assert replica.valid_at(ts, subject) == files.valid_at(ts, subject)
    for subject in SUBJECTS:
        assert render_json(replica.history(subject)) == render_json(files.history(subject))


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                 HealthCheck.function_scoped_fixture])
@pytest.mark.slow
@given(ops=st.lists(operations, min_size=1, max_size=12))
def test_any_sequence_of_writes_reads_the_same_from_the_replica(pg_cluster: Cluster, ops: list[Any]) -> None:
    dsn = pg_cluster.dsn(PROPERTY_DB.setdefault("name", pg_cluster.new_database().rsplit("=", 1)[1]))
    replica = ReplicaReader(dsn)
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        (root / "memstack.yaml").write_text("version: 1\nformat: 2\n")
        git(root, "init", "-q")
        # Commits without the hook: the library wrote these files; this property is about the replica.
        def commit_and_sync(message: str, force: bool = False) -> None:
            git(root, "add", "-A")
            git(root, "commit", "-q", "--no-verify", "--allow-empty", "-m", message)
            sync.sync(root, dsn, force)

        commit_and_sync("start", force=True)  # the database holds the previous example's repository: forced
        for step, op in enumerate(ops):
            if op[0] == "sync":
                commit_and_sync(f"step {step}")
                _same_answers(root, replica, step)
            else:
                _apply(root, step, op)
        commit_and_sync("end")
        _same_answers(root, replica, len(ops))
    replica.close()


PROPERTY_DB: dict[str, str] = {}


def test_pages_and_recall_notes_are_the_same_from_the_replica(history: Path, pg_dsn: str) -> None:
    store = history
    stdout("capture", "--subject", "gamma", "--predicate", "uses", "--object", "git", "--valid-from", str(JAN_MS),
           "--recorded-at", str(JAN_MS), cwd=store)
    stdout("intake", "write", "--content", "gamma prefers tabs", "--subject", "gamma", "--predicate", "prefers",
           "--object", "tabs", "--created-at", str(JAN_MS), cwd=store)
    git(store, "add", "-A")
    git(store, "commit", "-q", "-m", "gamma")
    stdout("promote", cwd=store)  # the intake record waits in the Binder
    stdout("pg", "sync", pg_dsn, cwd=store)
    for verb in (["fact", "get-valid-at", "--ts", str(JAN_MS + 5 * DAY)], ["fact", "history", "--subject", "acme"],
                 ["recall", "--subject", "acme", "--now-ts", str(JAN_MS + 20 * DAY)]):
        cursor, pages = None, 0
        while True:
            args = [*verb, "--limit", "1" if verb[0] == "recall" else "2", *(["--cursor", cursor] if cursor else []),
                    "--json"]
            files = stdout(*args, cwd=store)
            assert stdout(*args, "--pg", pg_dsn, cwd=store) == files, args
            pages += 1
            if not (cursor := json.loads(files)["next_cursor"]):
                break
        assert pages >= 2, verb
    recall = ["recall", "--subject", "gamma", "--now-ts", str(JAN_MS + DAY), "--json"]
    files = stdout(*recall, cwd=store)
    assert stdout(*recall, "--pg", pg_dsn, cwd=store) == files
    note = json.loads(files)["note"]
    assert note.startswith("1 fact about 'gamma' holds other predicates (uses)") and "waits in the Binder" in note
