"""How a MemstackError reads over MCP: the library's message, in the words of a tool's caller.

A message marks what it names (memstack/base/errors.py). Over MCP an argument is said by its one name
(`--now-ts` -> `now_ts`, `ID` -> `id`), one no tool takes (`COMMAND_LINE_ONLY`) as the command line
spells it; a command by its tool, options as `name=value` (`memstack fact history --subject S` ->
`fact_history subject=S`), or, when no tool does it, as the command line it is; and an option of the
memstack process as one of `memstack mcp`, which the client starts ("start `memstack mcp` with --store
PATH"). A plain message reads as it is.
"""

from memstack.base.errors import MemstackError, arg_name
from memstack.mcp.registry import Tool
from memstack.mcp.tools import TOOLS

# Options no tool takes, on purpose: an agent does not point memstack at another code repository.
COMMAND_LINE_ONLY = frozenset({"repo"})


class ToolWords:
    """The words of a call to `tool` (None: a prompt or a resource, no tool's arguments to name)."""

    def __init__(self, tool: Tool | None) -> None:
        self.tool = tool

    def arg(self, spelling: str) -> str:
        if arg_name(spelling.split()[0]) in COMMAND_LINE_ONLY:
            return f"{spelling} (on the command line: no tool takes it)"
        return arg_name(spelling)

    def verb(self, command: str) -> str:
        words = command.split()
        words = words[1:] if words[:1] == ["memstack"] else words
        for size in (2, 1):  # `binder list`, then `promote`
            name = "_".join(words[:size]).replace("-", "_")
            if name in TOOLS and not any(word.startswith("-") for word in words[:size]):
                return " ".join([name, *_options(words[size:])])
        return command

    def option(self, option: str) -> str:
        started = f"start `memstack mcp` with {option}"
        name = arg_name(option.split()[0])
        if self.tool is not None and name in self.tool.arguments:
            return f"pass {name} or {started}"
        return started


def _options(words: list[str]) -> list[str]:
    """A command line's options as a tool's arguments: `--subject S` -> `subject=S`, `--pending` -> `pending=true`."""
    said: list[str] = []
    for word in words:
        if word.startswith("--"):
            said.append(f"{arg_name(word)}=")
        elif said and said[-1].endswith("="):
            said[-1] += word
        else:
            said.append(word)
    return [f"{word}true" if word.endswith("=") else word for word in said]


def message(error: MemstackError, tool: Tool | None = None) -> str:
    """The error's message as a tool's (or a prompt's, or a resource's) caller reads it."""
    return error.render(ToolWords(tool))
