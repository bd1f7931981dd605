"""`memstack test`: a store's memory tests run against real memory (made by `memstack init`, `capture`,
`intake write` and `promote`), through the real command; the store template's workflow runs them on a
pull request. Malformed files are in the bad-input corpus (tests/cli/test_bad_input.py)."""

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from helpers import git, memstack

ROOT = Path(__file__).resolve().parents[2]
WORKFLOW = ".github/workflows/memstack.yml"
NOW = "2026-03-01T00:00:00Z"


def write(store: Path, *args: str) -> Any:
    result = memstack(*args, "--json", cwd=store)
    assert result.returncode == 0, result.stderr
    document = json.loads(result.stdout)
    return document


def make_memory(store: Path) -> dict[str, str]:
    """A store whose deploy day was friday, then monday (friday superseded), a note about the lexer, and a
    verified intake record promoted into a fact; the ids of what was written."""
    friday = write(store, "capture", "--subject", "deploys", "--predicate", "decided", "--object", "friday",
                   "--valid-from", "2026-01-01T00:00:00Z", "--recorded-at", "2026-01-01T00:00:00Z")
    monday = write(store, "capture", "--subject", "deploys", "--predicate", "decided", "--object", "monday",
                   "--valid-from", "2026-02-01T00:00:00Z", "--recorded-at", "2026-02-01T00:00:00Z", "--contradicts")
    lexer = write(store, "intake", "write", "--title", "lexer", "--agent", "bob", "--created-at",
                  "2026-01-10T00:00:00Z", "--content", "The lexer uses tables generated at build time")
    cache = write(store, "intake", "write", "--title", "cache", "--tier", "verified", "--confidence", "0.9",
                  "--subject", "cache", "--predicate", "uses", "--object", "redis", "--created-at",
                  "2026-01-12T00:00:00Z", "--content", "The cache runs on redis")
    git(store, "add", "-A")
    git(store, "commit", "-q", "-m", "memory")
    promoted = memstack("promote", "--now-ts", NOW, cwd=store)
    assert promoted.returncode == 0, promoted.stderr
    [friday_id] = [fact["id"] for fact in friday if fact["object"] == "friday"]
    [monday_id] = [fact["id"] for fact in monday if fact["object"] == "monday"]
    return {"friday": friday_id, "monday": monday_id, "lexer": lexer["record"]["id"], "cache": cache["record"]["id"]}


@pytest.fixture(scope="module")
def _memory(_store_template: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, str]]:
    root = tmp_path_factory.mktemp("memory") / "store"
    shutil.copytree(_store_template, root, symlinks=True)
    return root, make_memory(root)


@pytest.fixture
def memory(store: Path, _memory: tuple[Path, dict[str, str]]) -> dict[str, str]:
    """`store` as `make_memory` leaves it (made once for the module, copied in); the ids of what was written."""
    made, ids = _memory
    shutil.rmtree(store)
    shutil.copytree(made, store, symlinks=True)
    return dict(ids)


PASSING = """\
# what this store must remember
- name: deploy day
  recall: {{subject: deploys}}
  expect: [Monday]
  expect_not: [friday, {friday}]
- name: deploy day, searched now
  search: deploys
  valid_at: now
  expect: [{monday}]
  expect_not: [{friday}]
- name: deploy day as known in January
  search: deploys
  valid_at: 2026-01-15T00:00:00Z
  as_of: 2026-01-20T00:00:00Z
  expect: [friday]
  expect_not: [monday]
- name: the lexer's tables
  search: lexer tables
  agent: bob
  k: 1
  expect: [{lexer}, "GENERATED   at build"]
- name: the promoted cache fact
  search: cache redis
  valid_at: {now}
  expect: [redis]
"""


def test_a_passing_file_passes_every_case_exits_0_and_is_no_stray_file_for_the_hooks(
        store: Path, memory: dict[str, str]) -> None:
    (store / "memory-tests.yaml").write_text(PASSING.format(now=NOW, **memory))
    result = memstack("test", cwd=store)
    assert result.returncode == 0, (result.stdout, result.stderr)
    lines = result.stdout.splitlines()
    assert [line.split()[0] for line in lines[:-1]] == ["PASS"] * 5, result.stdout
    assert "deploy day as known in January" in lines[2]
    assert lines[-1] == "5 cases: 5 passed, 0 failed (memory-tests.yaml)"
    document = json.loads(memstack("test", "--json", cwd=store).stdout)
    assert (document["passed"], document["failed"]) == (5, 0)
    assert document["cases"][3]["query"] == {"search": "lexer tables", "agent": "bob"}
    # The file is the store's, not memory: the pre-commit hook takes it like a CI file.
    git(store, "add", "memory-tests.yaml")
    committed = git(store, "commit", "-q", "-m", "memory tests", check=False)
    assert committed.returncode == 0, committed.stdout + committed.stderr


FAILING = """\
- name: still passes
  recall: {{subject: deploys}}
  expect: [monday]
- name: the superseded day is still found
  search: deploys
  expect: [monday]
  expect_not: [{friday}]
- name: forgotten
  search: lexer
  expect: [lexer, hand-written]
- name: one of two days, further down
  search: deploys
  k: 1
  expect: [friday, monday]
"""


def test_a_failing_case_exits_1_and_says_what_was_missing_and_what_was_present_where(
        store: Path, memory: dict[str, str], tmp_path: Path) -> None:
    tests = tmp_path / "deploys.yaml"
    tests.write_text(FAILING.format(**memory))
    result = memstack("test", str(tests), cwd=store)
    assert result.returncode == 1, (result.stdout, result.stderr)
    lines = result.stdout.splitlines()
    assert lines[0].split()[0] == "PASS" and lines[0].endswith("still passes")
    # Search without valid_at answers the closed fact too: listed in expect_not, it fails the case.
    assert lines[1].split()[0] == "FAIL" and lines[1].endswith("the superseded day is still found")
    assert f"present '{memory['friday']}' (expect_not): answer " in lines[2]
    assert "kb/facts/alice/2026-01.jsonl:1" in lines[2]
    assert lines[3].split()[0] == "FAIL" and lines[3].endswith("forgotten")
    assert lines[4].strip() == "missing 'hand-written': not found (1 answer in all)"
    # Only one of the two facts is the first answer: the other is said to be the second.
    assert lines[5].endswith("one of two days, further down")
    assert re.fullmatch(r"missing '(friday|monday)': answer 2, below the first answer,"
                        r" kb/facts/alice/2026-0[12].jsonl:1 \w+", lines[6].strip()), lines[6]
    assert lines[-1] == f"4 cases: 1 passed, 3 failed ({tests})"
    document = json.loads(memstack("test", str(tests), "--json", cwd=store).stdout)
    assert [case["passed"] for case in document["cases"]] == [True, False, False, False]
    assert document["cases"][1]["present"][0]["id"] == memory["friday"]
    assert document["cases"][2]["missing"] == ["hand-written"]
    assert (document["cases"][2]["looked_further"], document["cases"][2]["looked_at_all"]) == (1, True)
    [further] = document["cases"][3]["found_further"]
    assert further["rank"] == 2 and further["id"] == memory[further["entry"]]


def test_no_file_at_the_store_root_is_exit_2_with_one_clear_line(store: Path) -> None:
    (store / "memory-tests.yaml").unlink()
    result = memstack("test", cwd=store)
    assert result.returncode == 2 and result.stdout == ""
    assert result.stderr.splitlines() == [
        f"memstack: no memory-tests.yaml at the store's root ({store}): write one (docs/memory-tests.md) or name"
        " the file: memstack test FILE"]


def test_the_template_example_holds_no_case_and_passes(store: Path) -> None:
    """A new store has the commented example: nothing to check yet, so its pull requests pass."""
    assert (store / "memory-tests.yaml").read_text().startswith("# Memory tests")
    result = memstack("test", cwd=store)
    assert result.returncode == 0, result.stderr
    assert result.stdout == "memory-tests.yaml: no cases, nothing to check\n"


def test_the_workflow_runs_the_memory_tests_on_a_pull_request(store: Path, memory: dict[str, str]) -> None:
    """The workflow's test step, run as the runner would: it fails the pull request on a failing case, passes
    a passing file and says so when the store has none."""
    from ruamel.yaml import YAML

    workflow = YAML(typ="safe").load((ROOT / "store-template" / WORKFLOW).read_text())
    [step] = [s for s in workflow["jobs"]["check"]["steps"] if s.get("name") == "memstack test"]
    assert step["if"] == "github.event_name == 'pull_request'"
    bin_dir = os.path.dirname(sys.executable)

    def run() -> subprocess.CompletedProcess[str]:
        return subprocess.run(["bash", "-e", "-c", step["run"]], cwd=store, capture_output=True, text=True,
                              env={"PATH": f"{bin_dir}:/usr/bin:/bin", "MEMSTACK_STORE": ".",
                                   "HOME": str(store.parent)})

    (store / "memory-tests.yaml").write_text(FAILING.format(**memory))
    failed = run()
    assert failed.returncode == 1 and "FAIL" in failed.stdout, failed.stderr
    (store / "memory-tests.yaml").write_text(PASSING.format(now=NOW, **memory))
    assert run().returncode == 0
    (store / "memory-tests.yaml").unlink()
    absent = run()
    assert absent.returncode == 0 and "no ./memory-tests.yaml: no memory tests to run" in absent.stdout


BEHIND = """\
- name: the new lighthouse is found
  search: lighthouse
  expect: [{lighthouse}]
- name: nothing about the cape
  search: lighthouse
  expect_not: [northern cape]
"""


def test_the_cases_answer_from_a_complete_search_index_never_from_one_a_build_is_catching_up(
        store: Path, memory: dict[str, str], tmp_path: Path) -> None:
    """A search answers from a half-built index while a build is at work (docs/search.md); the memory tests
    (CI, on every pull request of a fresh clone) must not: they bring the index up to date first and say so."""
    from memstack.base import files, locks

    assert memstack("search", "deploys", cwd=store).returncode == 0  # the index holds the memory so far
    lighthouse = write(store, "intake", "write", "--title", "lighthouse", "--created-at", "2026-01-20T00:00:00Z",
                       "--content", "a new lighthouse on the northern cape")["record"]["id"]
    tests = tmp_path / "behind.yaml"
    tests.write_text(BEHIND.format(lighthouse=lighthouse))
    with locks.acquire(str(files.local_dir(store, "locks") / "search-index-build.lock")):  # a build at work
        searched = memstack("search", "lighthouse", cwd=store)
        assert "still being built" in searched.stderr  # a search does not wait for it
        result = memstack("test", str(tests), "--json", cwd=store)
    document = json.loads(result.stdout)
    assert [case["passed"] for case in document["cases"]] == [True, False], document
    assert document["cases"][1]["present"][0]["id"] == lighthouse  # expect_not searched the whole memory
    assert result.returncode == 1 and "search index" in result.stderr and "still being built" not in result.stderr


def test_a_forgotten_record_is_matched_only_by_its_reason(store: Path, memory: dict[str, str],
                                                          tmp_path: Path) -> None:
    """docs/forgetting.md: a forgotten record is found only by the words of its reason, in every read: a case
    does not match its content, read from its file, as an answer's text."""
    forgot = memstack("forget", memory["lexer"], "--reason", "an erasure request", cwd=store)
    assert forgot.returncode == 0, forgot.stderr
    tests = tmp_path / "forgotten.yaml"
    tests.write_text("- name: its content\n  search: erasure request\n  expect: [generated at build time]\n"
                     "- name: its reason\n  search: erasure request\n  expect: [an erasure request]\n")
    document = json.loads(memstack("test", str(tests), "--json", cwd=store).stdout)
    assert [case["answered"] for case in document["cases"]] == [1, 1]  # the forgotten record, by its reason
    assert [case["passed"] for case in document["cases"]] == [False, True]
    assert document["cases"][0]["missing"] == ["generated at build time"]
