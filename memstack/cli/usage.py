"""The command line's parser: argparse, but a usage mistake is a MemstackError (one line, exit 2).

argparse prints its usage block and exits from inside `parse_args`; this parser raises instead, so
`cli.main`'s one error boundary says every mistake the same way. Two mistakes are named better than
argparse names them:

- an option nobody defines (`--contnet`), even when argparse would first complain that a required one
  (`--content`) is missing: "unrecognized argument --contnet; did you mean --content?";
- a verb nobody defines (`memstack intak`): "did you mean intake?" instead of the whole list.

Each verb's parser reports the options it does not know itself (argparse hands them up to the top,
which no longer knows whose they were), and records itself on the namespace as `verb_parser`, so
`main` can ask which options the chosen verb takes.
"""

import argparse
import difflib
import re
import sys
from collections.abc import Sequence
from typing import Any, NoReturn

from memstack.base.errors import MemstackError
from memstack.base.patterns import lazy

_CHOICE = lazy(r"^argument (?P<arg>\S+): invalid choice: (?P<given>'.*?') \(choose from (?P<choices>.*)\)$")
_NUMBER = lazy(r"^-\d+$|^-\d*\.\d+$")


class Parser(argparse.ArgumentParser):
    """An ArgumentParser whose mistakes are MemstackErrors; subparsers made from it are Parsers too."""

    top = False  # the `memstack` parser itself (set by `cli.main.parser`); the others are verbs
    verbs: set[str] = set()  # the top parser's verbs registered (set by `cli.main.parser`)

    def parse_known_args(self, args: Sequence[str] | None = None,  # type: ignore[override]
                         namespace: argparse.Namespace | None = None) -> tuple[argparse.Namespace, list[str]]:
        self._given = list(sys.argv[1:] if args is None else args)
        found, extra = super().parse_known_args(self._given, namespace)
        if extra and not self.top:
            self.error(f"unrecognized arguments: {' '.join(extra)}")
        if not hasattr(found, "verb_parser"):
            found.verb_parser = self  # the deepest parser sets it first
        return found, extra

    def error(self, message: str) -> NoReturn:
        verb = self.prog.removeprefix("memstack").strip()
        raise MemstackError((f"{verb}: " if verb else "") + self.explain(message))

    def explain(self, message: str) -> str:
        """argparse's message, or a better one for an unknown option or verb."""
        unknown = self.unknown_options()
        if unknown:
            return unrecognized(unknown, self.option_names())
        choice = _CHOICE.match(message)
        if choice:
            listed = choice["choices"]  # 'a', 'b' (quoted until Python 3.12.7, bare after)
            choices = re.findall(r"'([^']*)'", listed) or [c.strip() for c in listed.split(",")]
            guess = difflib.get_close_matches(choice["given"].strip("'"), choices, n=1)
            if guess:
                return f"argument {choice['arg']}: invalid choice: {choice['given']}; did you mean {guess[0]}?"
        return f"{message} (see {self.prog} --help)"

    def option_names(self) -> list[str]:
        return [name for name in self._option_string_actions if name.startswith("--")]

    def unknown_options(self) -> list[str]:
        """The options this parser was given that it defines under no name (nor as a prefix of one), up to
        its verb (the verb's parser judges what follows that) or `--`."""
        has_verbs = any(isinstance(action, argparse._SubParsersAction) for action in self._actions)
        tokens = iter(getattr(self, "_given", []))
        unknown = []
        for token in tokens:
            if token == "--" or (has_verbs and not token.startswith("-")):
                break
            name = token.split("=", 1)[0]
            if len(name) < 2 or not name.startswith("-") or _NUMBER.match(name):
                continue
            known = [action for option, action in self._option_string_actions.items()
                     if option == name or (name.startswith("--") and option.startswith(name))]
            if not known:
                unknown.append(name)
            elif "=" not in token and known[0].nargs is None:
                next(tokens, None)  # the option's value, whatever it looks like
        return unknown


def unrecognized(unknown: list[str], names: list[str]) -> str:
    """`unrecognized argument --contnet; did you mean --content?` (several: each with its guess)."""
    bare = {name.lstrip("-"): name for name in names}  # compared without dashes, which every name shares
    said: list[tuple[str, str | None]] = []
    for name in unknown:
        close = difflib.get_close_matches(name.lstrip("-"), list(bare), n=1, cutoff=0.7)
        said.append((name, bare[close[0]] if close else None))
    if len(said) == 1:
        name, guess = said[0]
        return f"unrecognized argument {name}" + (f"; did you mean {guess}?" if guess else "")
    return "unrecognized arguments " + ", ".join(name + (f" (did you mean {guess}?)" if guess else "")
                                                 for name, guess in said)


def takes(args: Any, option: str) -> bool:
    """Whether the verb chosen takes `option` (e.g. `--agent`)."""
    return option in getattr(args, "verb_parser")._option_string_actions  # noqa: B009 (set by Parser)
