"""The `memstack` command: argparse, thin; each verb lives in `memstack/cli/commands/`.

`main(argv)` returns the exit code, so tests call it directly. This module holds
the one error boundary: a MemstackError becomes a one-line message on stderr and
its exit code (2 for bad usage or input, 1 for violations found). A reader that closed
stdout (`| head -1`) ends any verb quietly with exit 141 (`READER_GONE`).
"""

import argparse
import importlib
import os
import sys
from collections.abc import Sequence

from memstack import __version__
from memstack.base import progress
from memstack.base.errors import MemstackError, bad, os_problem
from memstack.cli.usage import Parser, takes

READER_GONE = 141  # what a shell reports for a command whose reader closed the pipe (128 + SIGPIPE)

# Each module exports `register(subparsers, common)`; its parsers set `func`.
COMMANDS = ("init", "agent", "intake", "soil", "handoff", "boot", "identity", "nest", "fact", "recall", "capture",
            "promote", "binder", "check", "review", "merge", "mcp", "pg", "sync",
            "query", "import_", "export", "hook", "search", "status", "related", "test", "migrate", "blame",
            "anchors", "forget", "excise")
# The verbs a module registers besides the one it is named after: `memstack VERB` imports only its module
# (tests/cli/test_help.py checks this table against what each module registers).
ALSO = {"install": "init", "rebuild": "promote", "merge-driver": "merge", "textconv": "merge", "import": "import_"}
_VALUED = ("--store", "--agent")  # the global options that take a value (abbreviations too: argparse allows them)


def _common() -> argparse.ArgumentParser:
    """Global options, accepted before or after the verb."""
    common = Parser(add_help=False)
    common.add_argument("--store", metavar="PATH", default=argparse.SUPPRESS,
                        help="the store (default: MEMSTACK_HOME, WILLOW_HOME, or the nearest ancestor with"
                             " memstack.yaml)")
    common.add_argument("--json", action="store_true", default=argparse.SUPPRESS,
                        help="print one JSON document on stdout")
    common.add_argument("--reveal", action="store_true", default=argparse.SUPPRESS,
                        help="show a credential that reached memory past the checks, instead of [redacted: kind]"
                             " (a person at a terminal only; never over MCP)")
    return common


def verb_of(argv: Sequence[str]) -> str | None:
    """The verb of a command line (its first word that is neither an option nor a global option's value)."""
    skip = False
    for arg in argv:
        if skip:
            skip = False
        elif arg == "--":
            return None
        elif arg.startswith("-"):
            skip = "=" not in arg and len(arg) > 2 and any(v.startswith(arg) for v in _VALUED)
        else:
            return arg
    return None


def parser(verb: str | None = None, commands: bool = True) -> Parser:
    """The whole command line's parser; given the verb a command line names, only that verb's module is
    imported and registered (a start-up of every command pays for one module, not for all of them); not
    `commands`, none is (`memstack --version` alone names none and needs none)."""
    common = _common()
    top = Parser(
        prog="memstack", parents=[common],
        description="Persistent memory for AI agents, kept in a git repository.",
        epilog="Each command's --help says what it does and shows an example (memstack intake write --help).")
    top.top = True
    top.add_argument("--agent", metavar="A", dest="global_agent", default=argparse.SUPPRESS,
                     help="the agent, for a command that takes --agent: the same as --agent after the command")
    top.add_argument("--version", action="version", version=f"memstack {__version__}")
    sub = top.add_subparsers(dest="command", metavar="COMMAND", required=True)
    module = ALSO.get(verb, verb) if verb else None
    for name in (module,) if module in COMMANDS else COMMANDS if commands else ():
        importlib.import_module(f"memstack.cli.commands.{name}").register(sub, common)
    return top


def _not_utf8(argv: Sequence[str]) -> str | None:
    """The first argument that is not valid UTF-8 (the shell passed raw bytes), if any."""
    for arg in argv:
        try:
            arg.encode("utf-8")
        except UnicodeEncodeError:
            return arg.encode("utf-8", "surrogateescape").decode("utf-8", "replace")
    return None


def main(argv: Sequence[str] | None = None) -> int:
    bad = _not_utf8(sys.argv[1:] if argv is None else argv)
    if bad is not None:
        print(f"memstack: bad argument {bad!r}: not valid UTF-8", file=sys.stderr)
        return 2
    try:
        given = sys.argv[1:] if argv is None else list(argv)
        args = parser(verb_of(given), commands=given != ["--version"]).parse_args(given)
        args.store = getattr(args, "store", None)
        args.json = getattr(args, "json", False)
        if hasattr(args, "global_agent"):
            _agent_before_the_verb(args)
        if getattr(args, "reveal", False):
            _reveal(args)
        if args.json:
            progress.silence()
        code = int(args.func(args) or 0)
        sys.stdout.flush()  # a reader that went away (`| head -1`) shows here, not as the interpreter exits
        return code
    except MemstackError as exc:
        print(f"memstack: {exc.message}", file=sys.stderr)
        return exc.code
    except BrokenPipeError:
        return _reader_gone()
    except OSError as exc:  # the file system refused (permissions, a file where a folder belongs): bad input
        print(f"memstack: {os_problem(exc)}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("memstack: interrupted", file=sys.stderr)
        return 130


def _agent_before_the_verb(args: argparse.Namespace) -> None:
    """`memstack --agent A VERB ...` is `memstack VERB --agent A ...` (a verb with no --agent refuses it)."""
    given, verb = args.global_agent, args.verb_parser.prog
    if not takes(args, "--agent"):
        raise bad("--agent", repr(given), "{verb:" + verb + "} takes no agent")
    if isinstance(args.agent, list):  # `init --agent A --agent B`: the one before the verb comes first
        args.agent = [given, *args.agent]
    elif args.agent is None or args.agent == given:
        args.agent = given
    else:
        raise bad("--agent", repr(given), "{verb:" + verb + "} was given {arg:--agent} {other!r} too; give one",
                  other=args.agent)


def _reveal(args: argparse.Namespace) -> None:
    """--reveal: what the read verbs redact is shown, to a person at a terminal (stdin and stdout both one),
    never into a pipe, a file or an MCP client."""
    if args.command == "mcp":
        raise bad("--reveal", None, "never over MCP: an agent is shown [redacted: kind]")
    if not (sys.stdin.isatty() and sys.stdout.isatty()):
        raise bad("--reveal", None, "shows a credential only to a person at a terminal (stdin and stdout a"
                  " terminal), never into a pipe or a file")
    from memstack.base import shown

    shown.REVEAL = True


def _reader_gone() -> int:
    """The reader of stdout closed it: stop quietly. What is still buffered goes to /dev/null, so the
    interpreter's last flush has nowhere to fail (the Python documentation's advice for SIGPIPE)."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())
    os.close(devnull)
    return READER_GONE


def entry() -> None:
    try:
        try:
            code = main()
        finally:  # also after --help or a usage error (argparse exits): their text is still buffered
            sys.stdout.flush()
    except BrokenPipeError:
        code = _reader_gone()
    raise SystemExit(code)
