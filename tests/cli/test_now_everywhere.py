"""`now` is a time wherever the command line takes one: one parser (base/times.given_ts) for every option."""

import argparse

from test_help import verbs

from helpers import memstack
from memstack.cli.main import parser


def test_get_valid_at_now_without_subject_or_limit_lists_what_is_valid_now(store) -> None:
    assert memstack("capture", "--subject", "db", "--predicate", "decided", "--object", "sqlite",
                    "--valid-from", "2026-01-01T00:00:00Z", cwd=store).returncode == 0
    for extra in ((), ("--as-of", "now"), ("--as-of", "NOW")):
        streamed = memstack("fact", "get-valid-at", "--ts", "now", *extra, cwd=store)  # the streaming path
        assert streamed.returncode == 0, streamed.stderr
        assert "db | decided | sqlite" in streamed.stdout
        paged = memstack("fact", "get-valid-at", "--ts", "Now", "--limit", "5", *extra, cwd=store)
        assert paged.returncode == 0 and "db | decided | sqlite" in paged.stdout, paged.stderr


def test_a_time_that_is_not_one_says_now_is_one() -> None:
    result = memstack("fact", "get-valid-at", "--ts", "whenever")
    assert result.returncode == 2
    assert result.stderr.strip().endswith("or now"), result.stderr


def test_every_time_option_says_it_takes_now() -> None:
    times = [(path, action) for path, p, _ in verbs(parser()) for action in p._actions
             if action.metavar == "TS" and not isinstance(action, argparse._SubParsersAction)]
    assert len(times) >= 15
    assert [("/".join(path), a.option_strings) for path, a in times if "now" not in (a.help or "")] == []
