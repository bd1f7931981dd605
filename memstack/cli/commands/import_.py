"""`memstack import ferrox FILE`: a ferrox fact store into the store's facts (docs/ferrox.md)."""

import shutil
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from typing import IO, Any

from memstack.base.errors import bad
from memstack.base.output import emit
from memstack.cli.commands import doc
from memstack.repo.store import open_store


def register(sub: Any, common: Any) -> None:
    top = sub.add_parser("import", help="bring facts in from another memory (ferrox)",
                         **doc("Bring facts in from another memory: today a ferrox fact store.",
                               "memstack import ferrox .planning/graphs/memory-facts.json --agent alice"))
    forms = top.add_subparsers(dest="form", metavar="FORM", required=True)
    p = forms.add_parser("ferrox", parents=[common], help='a ferrox fact store, {"facts": [...]}: windows and'
                                                          " closings kept; importing it again adds nothing",
                         **doc('Import a ferrox fact store ({"facts": [...]}, its memory.fact_store file): every'
                               " window and closing kept, successors linked, the whole file checked before"
                               " anything is written; importing the same file again adds nothing.",
                               "memstack import ferrox memory-facts.json", "cat facts.json | memstack import ferrox -"))
    p.add_argument("file", metavar="FILE", help="the ferrox fact store file (memory.fact_store), or - for stdin")
    p.add_argument("--agent", metavar="A", help="whose facts they become (default MEMSTACK_AGENT, then"
                                                " memory.default_agent)")
    p.add_argument("--source", metavar="S", help="their provenance (default `ferrox`)")
    p.set_defaults(func=run)


@contextmanager
def opened(file: str) -> Iterator[IO[bytes]]:
    """FILE open for reading; stdin (`-`) copied to a temporary file first, a megabyte at a time (the
    import reads the file twice and never holds it whole)."""
    if file == "-":
        with tempfile.TemporaryFile() as spool:
            shutil.copyfileobj(sys.stdin.buffer, spool, 1 << 20)
            yield spool
        return
    try:
        handle = open(file, "rb")  # noqa: SIM115 (closed below; the errors are the command line's)
    except FileNotFoundError:
        raise bad("FILE", repr(file), "no such file") from None
    except IsADirectoryError:
        raise bad("FILE", repr(file), "a folder, not a file") from None
    with handle:
        yield handle


def run(args: Any) -> int:
    from memstack.api.ferrox import import_document  # lazy: --help stays quick

    store = open_store(args.store)
    with opened(args.file) as stream:
        done = import_document(store, args.file, stream, agent=args.agent, source=args.source)
    extra = f", {done['differs']} left as the store has them (closed otherwise there)" if done["differs"] else ""
    emit(args, done, f"imported {done['facts']} ferrox facts: {done['added']} added, {done['closed']} closed,"
                     f" {done['present']} already present{extra}")
    return 0
