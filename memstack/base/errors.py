"""The one error type memstack raises; `cli.main` turns it into a message and an exit code.

A message may name what the user gave or can run: an argument, a command. The command line and MCP
say those in their own words (`--now-ts` and `now_ts`, `memstack binder list` and `binder_list`), so a
message that names one is written as a template marking it, and each interface renders the template
with its words. The marks:

- `{arg:--now-ts}`, `{arg:valid-from}`, `{arg:ID}`: an argument, spelled as the command line spells it
  in that message. Its one name (for programs, and MCP's argument) is that spelling without the
  leading dashes, lower case, `_` for `-`: `now_ts`, `valid_from`, `id` (`arg_name`).
- `{verb:memstack binder list}`, `{verb:soil put}`: a command, as the command line spells it, options
  included (`{verb:memstack fact history --subject S}`).
- `{pass:--store PATH}`: an option of the memstack process itself ("pass --store PATH" on the command
  line; a server says how it is started).

Every other `{field}` is a value, filled in as `str.format` fills it (`{id!r}`) and never read for
marks, so a value may hold any text. A plain message (`MemstackError(text)`) marks nothing.
`str(error)` and `error.message` are the command line's words; `error.render(words)` another's.
"""

from string import Formatter
from typing import Any, Protocol

_FORMAT = Formatter()


class Words(Protocol):
    """How an interface says what a message marks."""

    def arg(self, spelling: str) -> str: ...

    def verb(self, command: str) -> str: ...

    def option(self, option: str) -> str: ...


class CommandLine:
    """The command line's words: the template's own spellings."""

    def arg(self, spelling: str) -> str:
        return spelling

    def verb(self, command: str) -> str:
        return command

    def option(self, option: str) -> str:
        return f"pass {option}"


COMMAND_LINE = CommandLine()


def arg_name(spelling: str) -> str:
    """An argument's one name: `--now-ts`, `now-ts` -> `now_ts`; `ID` -> `id`."""
    return spelling.lstrip("-").lower().replace("-", "_")


MARKS = ("arg", "verb", "pass")


def render(template: str, values: dict[str, Any], words: Words) -> str:
    """A template in `words`: each mark said by them, each other field filled with its value."""
    marks = dict(zip(MARKS, (words.arg, words.verb, words.option), strict=True))
    out = []
    for literal, name, spec, conversion in _FORMAT.parse(template):
        out.append(literal)
        if name is None:
            continue
        if name in marks:  # a mark may hold values too: `{verb:memstack init {path}}`
            out.append(marks[name](_FORMAT.vformat(spec or "", (), values)))
        else:
            out.append(_FORMAT.format_field(_FORMAT.convert_field(values[name], conversion), spec or ""))
    return "".join(out)


class MemstackError(Exception):
    """Bad usage or bad input: exit 2 unless told otherwise, nothing written.

    `field` is the one name of the argument refused (None: the error is not about one argument) and
    `reason` why it was, in the command line's words; `template` and `values` the message before any
    interface said it (module docstring)."""

    def __init__(self, message: str, code: int = 2) -> None:
        """A plain message: it names no argument and no command (else `marked` or `bad`)."""
        super().__init__(message)
        self.message = message
        self.code = code
        self.template = message.replace("{", "{{").replace("}", "}}")
        self.values: dict[str, Any] = {}
        self.field: str | None = None
        self.reason: str | None = None

    @classmethod
    def marked(cls, template: str, code: int = 2, /, **values: Any) -> "MemstackError":
        """An error whose message marks the arguments and commands it names (module docstring)."""
        if set(MARKS) & set(values):
            raise TypeError(f"a value may not be named {', '.join(MARKS)}: those are marks")
        error = cls(render(template, values, COMMAND_LINE), code)
        error.template, error.values = template, values
        return error

    def render(self, words: Words) -> str:
        """The message in an interface's words."""
        return render(self.template, self.values, words)


def bad(arg: str, shown: str | None, reason: str, /, **values: Any) -> MemstackError:
    """The usual refusal, `bad ARG SHOWN: REASON`: argument `arg` (spelled as for `{arg:}`) was given
    a value, shown as `shown` (mostly its repr; None: not shown), refused for `reason` (a template,
    filled from `values`)."""
    head = "bad {arg:" + arg + "}" + ("" if shown is None else " {shown}")
    error = MemstackError.marked(f"{head}: {reason}", shown=shown, **values)
    error.field, error.reason = arg_name(arg), render(reason, values, COMMAND_LINE)
    return error


def os_problem(exc: OSError) -> str:
    """One line for an error the file system gave: the path, what it said, what to do."""
    where = " -> ".join(str(p) for p in (exc.filename, exc.filename2) if p is not None)
    what = exc.strerror or str(exc)
    hint = ""
    if isinstance(exc, PermissionError):
        hint = " — memstack needs to read and write the store's files as this user; fix the owner or mode"
    return f"{where}: {what}{hint}" if where else f"{what}{hint}"
