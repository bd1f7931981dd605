"""Every MCP tool, in the registry (`registry.py`) the server serves, and `call`, which runs one.

A tool is one entry in the module of its area (`tools_session.py`, `tools_facts.py`, `tools_binder.py`,
`tools_store.py`). A handler takes the store and the checked arguments and returns the very document the
equivalent command prints with `--json`: it calls the verb's function in `memstack.api`, the one place
that builds that document. Arguments are the command's options with `_` for `-` (`arguments.py`); a
tool's output is the JSON Schema of that document (`documents.py`).
"""

from collections.abc import Mapping
from typing import Any

from memstack.api import readers
from memstack.base.errors import MemstackError
from memstack.mcp import tools_binder as binder
from memstack.mcp import tools_facts as facts
from memstack.mcp import tools_session as session
from memstack.mcp import tools_store as store_wide
from memstack.mcp.arguments import AGENT
from memstack.mcp.registry import by_name
from memstack.repo.store import Store, locate, open_store

TOOLS = by_name(
    session.INTAKE_WRITE,
    session.SOIL_PUT,
    session.SOIL_GET,
    session.SOIL_UPDATE,
    session.HANDOFF_WRITE,
    session.BOOT_SHOW,
    facts.RECALL,
    facts.CAPTURE,
    facts.FACT_ADD,
    facts.FACT_GET_VALID_AT,
    facts.FACT_HISTORY,
    facts.FACT_INVALIDATE,
    binder.BINDER_LIST,
    store_wide.SYNC,
    session.BOOT_REBUILD,
    store_wide.PROMOTE,
    session.INTAKE_LIST,
    session.SOIL_LIST,
    session.SOIL_EXPIRE,
    session.HANDOFF_SHOW,
    binder.BINDER_RATIFY,
    binder.BINDER_REJECT,
    store_wide.SEARCH,
    session.SOIL_GRADUATE,
    binder.BINDER_FILE,
    binder.BINDER_EDGE,
    binder.RELATED,
    store_wide.STATUS,
    store_wide.BLAME,
    store_wide.ANCHORS,
    store_wide.ANCHORS_CHECK,
    store_wide.FORGET,
)


def call(tool_name: str, arguments: Mapping[str, Any] | None, *, store: str | None = None,
         agent: str | None = None, pg: str | None = None) -> Any:
    """Run one tool as the CLI would run its verb; `store`, `agent` and `pg` (a DSN) are the server's options."""
    tool = TOOLS.get(tool_name)
    if tool is None:
        raise MemstackError(f"unknown tool {tool_name!r}: the tools are {', '.join(sorted(TOOLS))}")
    args = tool.check(arguments)
    if tool.arguments.get("agent") is AGENT and args.get("agent") is None:  # not given ("" is, and refused as the
        args["agent"] = agent  # CLI refuses it): the agent acting; a filter's agent (`search`, ...) stays every agent
    if tool.as_agent:
        args["server_agent"] = agent
    if tool.reads_facts:
        reader = readers.fact_reader(store, pg, tool.optional_store)
        try:
            return tool.handler(reader, args)
        finally:
            reader.close()
    if tool.optional_store:
        root = locate(store)
        return tool.handler(Store(root) if root else None, args)
    return tool.handler(open_store(store), args)
