"""One module per verb; each exports `register(subparsers, common)`."""

import argparse
import textwrap
from typing import Any

from memstack.base.pages import MAX_LIMIT

AGENT = "the agent (default: MEMSTACK_AGENT, then memory.default_agent in memstack.yaml)"


def doc(description: str, *examples: str) -> dict[str, Any]:
    """A verb's --help: its description (paragraphs wrapped here) and its examples, shown as written.

    Every verb has both (tests/cli/test_help.py walks the parser): `sub.add_parser(name, ..., **doc(...))`."""
    text = "\n\n".join(textwrap.fill(" ".join(p.split()), 79) for p in description.split("\n\n"))
    epilog = ("examples:" if len(examples) > 1 else "example:") + "".join(f"\n  {e}" for e in examples)
    return {"description": text, "epilog": epilog, "formatter_class": argparse.RawDescriptionHelpFormatter}


def page_options(parser: Any, what: str = "items") -> None:
    """`--limit N` and `--cursor C`: the bounded answer every list verb gives (memstack/base/pages.py)."""

    parser.add_argument("--limit", metavar="N", type=_whole,
                        help=f"at most N {what} (1 to {MAX_LIMIT}); when more remain, --json says next_cursor and"
                             " remaining")
    parser.add_argument("--cursor", metavar="C", help="continue after the page that handed out this next_cursor")


def _whole(text: str) -> Any:
    """A --limit that reads as a whole number is one (so the message about it is the MCP tool's); anything else
    stays text, for pages.check_limit to refuse."""
    return int(text) if text.strip().lstrip("-").isdigit() and text.strip().isascii() else text


def pg_option(parser: Any, what: str = "answer") -> None:
    """`--pg [DSN]`: None when absent, "" when given bare (then `api.readers.pg_dsn` looks the DSN up)."""
    parser.add_argument("--pg", nargs="?", const="", default=None, metavar="DSN",
                        help=f"{what} from the PostgreSQL replica (`memstack pg sync`) at DSN (default: MEMSTACK_PG,"
                             " then replica.postgres in memstack.yaml)")


def anchor_options(parser: Any) -> None:
    """`--anchor PATH[:START[-END]]` (repeatable) and `--repo PATH`: code anchors on what a verb writes
    (memstack/anchors/take.py, docs/anchors.md)."""
    parser.add_argument("--anchor", action="append", default=[], metavar="PATH[:START[-END]]",
                        help="the code this is about: a file of the code repository, optionally lines START-END"
                             " (repeatable; the path from this folder or the repository's top)")
    parser.add_argument("--repo", metavar="PATH",
                        help="the code repository anchors point into (default: code.repo in memstack.yaml, then the"
                             " repository holding the store)")
