"""`memstack mcp`: a Model Context Protocol server on stdio exposing the verbs as tools."""

import argparse
from typing import Any

from memstack.base.errors import MemstackError
from memstack.base.names import check_name
from memstack.base.output import note
from memstack.cli.commands import doc, pg_option
from memstack.repo.store import locate

STORE = ("the store, looked up on every call (default: MEMSTACK_HOME, WILLOW_HOME, or the nearest ancestor"
         " with memstack.yaml)")


def register(sub: Any, common: Any) -> None:
    p = sub.add_parser("mcp", help="Model Context Protocol server on stdio (for agents)",
                       **doc("A Model Context Protocol server on stdio: the verbs as tools (intake_write,"
                             " recall, capture, fact_add, soil_put, ...) for an agent's MCP client; the"
                             " README's MCP section lists them. Tools answer JSON, so there is no --json.",
                             "memstack mcp --store ~/my-memory --agent claude"))
    # Not the common options: a server prints no document, so --json would do nothing.
    p.add_argument("--store", metavar="PATH", default=argparse.SUPPRESS, help=STORE)
    p.add_argument("--agent", metavar="A",
                   help="the tools' default agent (a tool's `agent` argument wins; default: MEMSTACK_AGENT,"
                        " then memory.default_agent)")
    pg_option(p, "answer recall, fact_get_valid_at and fact_history (the other tools use the store)")
    p.set_defaults(func=run)


def run(args: Any) -> int:
    from memstack.api.readers import pg_dsn  # lazy: --help stays quick

    if args.agent is not None:
        check_name(args.agent, "agent")
    pg = pg_dsn(args.store, args.pg)
    try:  # the store is resolved on every call, as the CLI does; say early if there is none yet
        if locate(args.store) is None:
            note("memstack mcp: no memstack store here yet; tools will say so until there is one")
    except MemstackError as exc:
        note(f"memstack mcp: {exc.message}; tools will say so until it is fixed")
    from memstack.mcp import server as mcp_server  # lazy: the MCP SDK; --help stays quick

    mcp_server.serve(args.store, args.agent, pg)
    return 0
