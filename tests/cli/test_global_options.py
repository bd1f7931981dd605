"""Global options (`--store`, `--json`, `--agent`) work before or after the verb, and a mistyped option or
verb is named, with a guess, in one line."""

import argparse
import json
from pathlib import Path

from test_help import verbs

from helpers import memstack, tree_snapshot
from memstack.cli.main import parser

RUN_BY_GIT = {("merge-driver",), ("textconv",)}  # git runs these with the paths it chose


def test_every_verb_takes_the_store_and_json_options_after_it() -> None:
    for path, p, _ in verbs(parser()):
        if path in RUN_BY_GIT or any(isinstance(a, argparse._SubParsersAction) for a in p._actions):
            continue
        assert "--store" in p._option_string_actions, path
        assert "--json" in p._option_string_actions or path == ("mcp",), path


def test_store_and_json_before_or_after_the_verb_are_the_same(store: Path, tmp_path: Path) -> None:
    before = memstack("--store", str(store), "--json", "intake", "write", "--content", "one", cwd=tmp_path)
    after = memstack("intake", "write", "--content", "two", "--store", str(store), "--json", cwd=tmp_path)
    assert before.returncode == 0 and after.returncode == 0, before.stderr + after.stderr
    assert json.loads(before.stdout)["path"] == json.loads(after.stdout)["path"]


def test_agent_before_the_verb_is_the_agent_after_it(store: Path) -> None:
    before = memstack("--agent", "bob", "intake", "write", "--content", "x", "--json", cwd=store)
    assert before.returncode == 0, before.stderr
    assert json.loads(before.stdout)["record"]["agent"] == "bob"
    same = memstack("--agent", "bob", "fact", "add", "--subject", "s", "--predicate", "p", "--object", "o",
                    "--agent", "bob", "--json", cwd=store)
    assert same.returncode == 0 and json.loads(same.stdout)[0]["agent"] == "bob", same.stderr


def test_agent_before_a_verb_without_one_or_twice_differently_is_refused(store: Path) -> None:
    files = tree_snapshot(store)
    for args, says in ((("--agent", "bob", "promote"), "memstack promote takes no agent"),
                       (("--agent", "bob", "intake", "write", "--content", "x", "--agent", "alice"),
                        "was given --agent 'alice' too")):
        result = memstack(*args, cwd=store)
        assert result.returncode == 2 and says in result.stderr, result.stderr
        assert len(result.stderr.splitlines()) == 1
    assert tree_snapshot(store) == files


def test_a_misspelled_option_is_named_with_a_guess_even_when_a_required_one_is_missing(store: Path) -> None:
    for args, line in (
            (("intake", "write", "--contnet", "x"),
             "memstack: intake write: unrecognized argument --contnet; did you mean --content?"),
            (("intake", "write", "--content", "x", "--tittle", "t"),
             "memstack: intake write: unrecognized argument --tittle; did you mean --title?"),
            (("--stroe", str(store), "status"), "memstack: unrecognized argument --stroe; did you mean --store?"),
            (("intake", "wrte", "--content", "x"),
             "memstack: intake: argument VERB: invalid choice: 'wrte'; did you mean write?"),
            (("intake", "write", "--content", "x", "--zzz"), "memstack: intake write: unrecognized argument --zzz"),
    ):
        result = memstack(*args, cwd=store)
        assert (result.returncode, result.stderr, result.stdout) == (2, line + "\n", ""), result.stderr


def test_an_abbreviated_option_still_works(store: Path) -> None:
    result = memstack("intake", "write", "--cont", "x", "--json", cwd=store)
    assert result.returncode == 0 and json.loads(result.stdout)["record"]["content"] == "x", result.stderr
