"""Every verb explains itself: a one-line help, a description and an example; every option its help.

The parser is walked, so a verb or option added later is held to the same rule.
"""

import argparse
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from helpers import memstack
from memstack.cli.main import parser

ROOT = Path(__file__).resolve().parents[2]
WILLOW = {  # Willow's words: where a user meets each (the --help of these verbs says what it means)
    "norn-pass": [("promote",)],
    "jeles": [("promote",), ("fact", "add")],
    "opus": [("promote",), ("fact", "add")],
    "Binder": [("binder",), ("promote",), ("intake", "write")],
    "SOIL": [("soil",), ("soil", "put")],
    "Nest": [("nest",)],
}


def verbs(top: argparse.ArgumentParser, path: tuple[str, ...] = ()) -> Iterator[
        tuple[tuple[str, ...], argparse.ArgumentParser, argparse._SubParsersAction | None]]:
    """(path, parser, the subparsers action listing it) for every verb, depth first."""
    for action in top._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield (*path, name), sub, action
                yield from verbs(sub, (*path, name))


def helpless(p: argparse.ArgumentParser) -> list[str]:
    """The options and arguments of a parser that have no help text (deliberately hidden ones aside)."""
    skip = (argparse._HelpAction, argparse._VersionAction, argparse._SubParsersAction)
    return ["/".join(a.option_strings) or str(a.metavar or a.dest) for a in p._actions
            if not isinstance(a, skip) and not (a.help and a.help.strip())]


def help_of(*path: str) -> str:
    p = dict((v, sub) for v, sub, _ in verbs(parser()))[path]
    return p.format_help()


ALL = [v for v, _, _ in verbs(parser())]


def test_the_walk_finds_every_verb() -> None:
    assert {("init",), ("install",), ("intake", "write"), ("soil", "expire"), ("fact", "get-valid-at"),
            ("binder", "reject"), ("merge-driver",), ("textconv",), ("mcp",), ("pg", "status")} <= set(ALL)


@pytest.mark.parametrize("path", ALL, ids=[" ".join(v) for v in ALL])
def test_every_verb_has_a_line_a_description_an_example_and_helped_options(path: tuple[str, ...]) -> None:
    p, listing = next((sub, action) for v, sub, action in verbs(parser()) if v == path)
    line = next(a.help for a in listing._choices_actions if a.dest == path[-1])
    assert line and line.strip(), f"`memstack {' '.join(path)}` has no one-line help in its parent's list"
    assert p.description and p.description.strip(), f"`memstack {' '.join(path)} --help` has no description"
    assert p.epilog and re.search(r"^examples?:\n  \S", p.epilog, re.M), \
        f"`memstack {' '.join(path)} --help` shows no example"
    examples = p.epilog.split(":", 1)[1]
    assert "memstack" in examples or "git " in examples
    assert helpless(p) == [], f"`memstack {' '.join(path)}`: options without help: {helpless(p)}"


def test_the_walk_would_catch_a_missing_help() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--fine", help="has help")
    p.add_argument("--bare")
    p.add_argument("thing")
    p.add_argument("--hidden", help=argparse.SUPPRESS)
    assert helpless(p) == ["--bare", "thing"]  # a hidden option (help=SUPPRESS) is deliberate


def test_repeatable_options_say_so() -> None:
    for path, p, _ in verbs(parser()):
        for action in p._actions:
            if isinstance(action, argparse._AppendAction):
                assert "repeatable" in (action.help or ""), f"{' '.join(path)} {action.option_strings}"


@pytest.mark.parametrize("word", sorted(WILLOW))
def test_willows_words_are_explained_where_a_user_meets_them(word: str) -> None:
    glossary = re.search(r"^## Glossary\n(.*?)(?=^## )", (ROOT / "README.md").read_text(), re.S | re.M)
    assert glossary and re.search(rf"^- \*\*{re.escape(word)}", glossary.group(1), re.M | re.I), \
        f"the README's glossary does not explain {word!r}"
    for path in WILLOW[word]:
        assert word.lower() in help_of(*path).lower(), f"`memstack {' '.join(path)} --help` does not say {word!r}"


def test_help_runs_as_a_command_with_the_example() -> None:
    proc = memstack("intake", "write", "--help")
    assert proc.returncode == 0
    assert re.search(r"--keyword K +a keyword \(repeatable\)", proc.stdout), proc.stdout
    assert "example" in proc.stdout and "memstack intake write --content" in proc.stdout


def test_mcp_offers_no_json_and_still_takes_a_store() -> None:
    usage = help_of("mcp").split("\n\n")[0]
    assert "--json" not in usage and "--store PATH" in usage
    proc = memstack("mcp", "--json")
    assert proc.returncode == 2 and "unrecognized argument --json" in proc.stderr


TOP = sorted({v[0] for v in ALL})


@pytest.mark.parametrize("verb", TOP)
def test_a_verb_alone_is_parsed_as_in_the_whole_parser(verb: str) -> None:
    """`memstack VERB` builds only VERB's module (its start-up imports no other verb): the parser it builds has
    that verb, with the same options and sub-verbs, so what the whole parser accepts it accepts."""
    alone = [(v, sub.format_help()) for v, sub, _ in verbs(parser(verb)) if v[0] == verb]
    assert alone == [(v, sub.format_help()) for v, sub, _ in verbs(parser()) if v[0] == verb]


def test_the_verb_of_a_command_line_skips_the_global_options_and_their_values() -> None:
    from memstack.cli.main import verb_of

    assert verb_of(["--store", "promote", "--json", "binder", "list"]) == "binder"
    assert verb_of(["--sto", "x", "--agent=a", "rebuild"]) == "rebuild"
    assert verb_of(["--version"]) is None
    assert memstack("--store", ".", "--json", "rebuild", "--help").returncode == 0


def test_the_version_alone_imports_no_verb() -> None:
    """`memstack --version` names no verb and needs none: it imports no command's module (each pulls in its
    library), so it answers at the interpreter's start-up cost."""
    import subprocess
    import sys

    from memstack import __version__

    probe = ("import sys\nfrom memstack.cli.main import main\ntry:\n    main(['--version'])\nfinally:\n"
             "    print(sorted(m for m in sys.modules if m.startswith('memstack.cli.commands.')), file=sys.stderr)")
    proc = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True)
    assert proc.returncode == 0 and proc.stdout == f"memstack {__version__}\n"
    assert proc.stderr == "[]\n"
