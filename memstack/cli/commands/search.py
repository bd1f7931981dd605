"""`memstack search QUERY`: ranked full-text search across facts, intake, handoffs and SOIL (docs/search.md)."""

import argparse
import json
from typing import Any

from memstack.base.errors import bad
from memstack.base.output import emit_page, note, shown
from memstack.cli.commands import doc
from memstack.cli.commands.fact import code_marker
from memstack.intake.log import TIERS
from memstack.kb.facts import TABLES
from memstack.repo.store import open_store
from memstack.search.records import LAYERS

CLI_DEFAULT_LIMIT = 20


def register(sub: Any, common: Any) -> None:
    p = sub.add_parser("search", parents=[common],
                       help="ranked full-text search (BM25, stemming) across facts, intake, handoffs and SOIL",
                       **doc("Ranked full-text search (BM25, stemmed: 'deploys' finds 'deployment') across facts,"
                             " intake, handoffs and SOIL values. Each hit: its layer, where it lives (path:line),"
                             " a snippet and its score; a fact also its validity window. The index lives in"
                             " .memstack/ and follows appends (docs/search.md).",
                             "memstack search deploy --layer facts --valid-at now",
                             "memstack search 'lexer tables' --agent bob --limit 5 --json"))
    p.add_argument("query", metavar="QUERY",
                   help="free text; records holding every word first, then any word; word* a prefix")
    p.add_argument("--layer", action="append", default=[], metavar="L",
                   help=f"only this layer ({', '.join(LAYERS)}); repeatable")
    p.add_argument("--agent", metavar="A", help="only records written by this agent")
    p.add_argument("--tier", metavar="T", help=f"only records of this tier ({', '.join(TIERS)})")
    p.add_argument("--table", metavar="T", help=f"only facts of this KB sub-tier ({', '.join(TABLES)})")
    p.add_argument("--valid-at", metavar="TS", help="only facts valid at TS (ms, ISO-8601 or now)")
    p.add_argument("--as-of", metavar="TS", help="as the store knew it at transaction time TS (ms, ISO-8601 or now)")
    p.add_argument("--limit", default=CLI_DEFAULT_LIMIT, metavar="N",
                   help=f"at most N hits (default {CLI_DEFAULT_LIMIT})")
    p.add_argument("--cursor", metavar="C", help="continue after the page that returned this next_cursor")
    p.add_argument("--semantic", action=argparse.BooleanOptionalAction, default=None,
                   help="fuse the ranking by meaning (a local model: pip install 'memstack[semantic]') with the"
                        " ranking by words, or not; default: as memstack.yaml's search.semantic says (false)")
    p.set_defaults(func=run)


def render(document: dict[str, Any]) -> str:
    lines = []
    for hit in document["hits"]:
        extra = f"  {hit.get('id') or hit.get('section')}"
        if hit["layer"] == "facts":
            extra += f"  valid {hit['valid_from_iso']} → {hit['valid_to_iso'] or 'open'}"
        if hit.get("source"):
            extra += f"  source {hit['source']}"
        lines.append(shown(f"{hit['layer']:<8} {hit['where']}  score {hit['score']:.3g}{extra}") + code_marker(hit))
        if "predicate" in hit:  # a fact: the whole triple (one line: a newline in it escaped), the snippet the match
            lines.append("    " + shown(" | ".join(_plain(hit[key]) for key in ("subject", "predicate", "object"))))
        lines.append("    " + " ".join(hit["snippet"].split()))
    if not lines:  # while a build is at work, "nothing" is only what is built so far (a fresh clone's first search)
        return f"nothing found for {document['query']!r}" + (" yet: the index is still being built, search again in"
                                                              " a moment" if "index" in document else "")
    return "\n".join(lines)


def _plain(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value)


def run(args: Any) -> int:
    from memstack.api.search import search_document  # lazy: --help stays quick

    if not args.query.strip():
        raise bad("QUERY", repr(args.query), "give the words to search for")
    document = search_document(open_store(args.store), query=args.query, layer=args.layer, agent=args.agent,
                               tier=args.tier, table=args.table, valid_at=args.valid_at, as_of=args.as_of,
                               limit=args.limit, cursor=args.cursor,
                               semantic=args.semantic)
    emit_page(args, document, lambda: render(document))  # how to go on: on stderr, as every list verb
    if "index" in document:
        held = document["index"]
        note(f"search: the index is still being built ({held['records_indexed']:,} records indexed,"
             f" {held['bytes_behind'] / 2**20:.1f} MiB of memory files to go): these answers come from"
             " what is built")
    return 0
