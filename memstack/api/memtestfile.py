"""A memory tests file (`memory-tests.yaml`, docs/memory-tests.md): read, checked against
schemas/memory-tests.schema.json, and made into cases.

Every refusal is one line naming the file, the case (its number from 1 and its name) and the field:
`memory-tests.yaml: case 3 'deploy day': expect: must be a list of ids or text`. A file with no case
(empty, or only comments) holds nothing to check, which is no error.
"""

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from memstack.base import schemas
from memstack.base.config import YAML_TOO_DEEP
from memstack.base.errors import MemstackError
from memstack.base.limits import read_input
from memstack.base.times import given_or_none

KIND = "memory-tests"
DEFAULT_K = 10
KEYS = ("name", "search", "recall", "valid_at", "as_of", "agent", "k", "expect", "expect_not")


@dataclass(frozen=True, kw_only=True)
class Case:
    """One case: its query, the first `k` answers it looks at, what they must and must not hold."""

    index: int  # from 1, as the messages say it
    name: str
    search: str | None
    subject: str | None  # a recall's subject (search is None then)
    valid_at: int | None
    as_of: int | None
    agent: str | None
    k: int
    expect: tuple[str, ...]
    expect_not: tuple[str, ...]

    def query(self) -> dict[str, Any]:
        """The query as the file gave it (times as ms), for the `--json` document."""
        asked: dict[str, Any] = {"search": self.search} if self.search is not None else \
            {"recall": {"subject": self.subject}}
        asked.update({key: value for key, value in (("valid_at", self.valid_at), ("as_of", self.as_of),
                                                    ("agent", self.agent)) if value is not None})
        return asked


def load(path: Path, shown: str, store: Path | None = None) -> list[Case]:
    """The cases of the file at `path`, named `shown` in messages; a MemstackError (exit 2) for a bad one.
    `store`: whose limits.file_bytes bounds the read."""
    try:
        text = read_input(store, path, "FILE")  # bounded: a device or an endless pipe is refused
    except MemstackError as exc:
        raise MemstackError(f"{shown}: {exc.reason}") from None
    document = _parse(text, shown)
    if document is None:
        return []
    problems = schemas.problems(KIND, document)
    if problems:
        first = min(problems, key=lambda e: [(0, p) if isinstance(p, int) else (1, 0) for p in e.absolute_path])
        raise MemstackError(_worded(first, document, shown))
    cases = [_case(n, raw, shown) for n, raw in enumerate(document, 1)]
    seen: dict[str, int] = {}
    for case in cases:
        if case.name in seen:
            raise _refused(shown, case.index, case.name, "name", f"case {seen[case.name]} has this name too;"
                                                                 " give each case its own")
        seen[case.name] = case.index
    return cases


def _parse(text: str, shown: str) -> Any:
    from ruamel.yaml import YAML  # deferred: ~20-30 ms to import, needed only to read YAML
    from ruamel.yaml.constructor import SafeConstructor
    from ruamel.yaml.error import MarkedYAMLError, YAMLError

    class _TimesAsText(SafeConstructor):
        """A YAML timestamp stays the text it was (the times parser reads it; the schema wants text)."""

    _TimesAsText.add_constructor("tag:yaml.org,2002:timestamp", SafeConstructor.construct_yaml_str)
    yaml = YAML(typ="safe", pure=True)
    yaml.Constructor = _TimesAsText
    try:
        return yaml.load(text)
    except MarkedYAMLError as exc:
        mark, context = exc.problem_mark or exc.context_mark, exc.context_mark
        where = f" at line {mark.line + 1}" if mark is not None else ""
        during = f" ({exc.context} from line {context.line + 1})" if exc.problem and exc.context and context \
            else ""
        raise MemstackError(f"{shown}: not valid YAML{where}: {exc.problem or exc.context}{during}") from None
    except YAMLError as exc:
        raise MemstackError(f"{shown}: not valid YAML: {exc}".replace("\n", " ")) from None
    except RecursionError:  # thousands of nested brackets: the parser is recursive
        raise MemstackError(f"{shown}: not valid YAML: {YAML_TOO_DEEP}") from None


def _refused(shown: str, index: int, name: Any, field: str, reason: str) -> MemstackError:
    named = f" {name!r}" if isinstance(name, str) else ""
    return MemstackError(f"{shown}: case {index}{named}: " + (f"{field}: " if field else "") + reason)


_TYPES = {"name": "must be non-empty text", "search": "must be non-empty text (the words to search for)",
          "recall": "must be a mapping: recall: {subject: S}", "subject": "must be non-empty text",
          "valid_at": "must be a time: integer milliseconds, ISO-8601 or now",
          "as_of": "must be a time: integer milliseconds, ISO-8601 or now",
          "agent": "must be an agent's name (a-z, 0-9, '.', '_', '-'; at most 64)",
          "k": "must be a whole number from 1 to 1000 (how many first answers count)",
          "expect": "must be a list of ids or text", "expect_not": "must be a list of ids or text"}


def _worded(error: Any, document: Any, shown: str) -> str:
    """A schema error in the file's words: the case, the field, what it must be."""
    path = list(error.absolute_path)
    if not path:
        return f"{shown}: must be a list of cases (`- name: ...`), not {_kind_of(document)}"
    index, case = path[0] + 1, document[path[0]]
    name = case.get("name") if isinstance(case, dict) else None
    fields = [str(part) for part in path[1:]]
    if not fields:
        reason = _case_problem(error, case)
        field, _, reason = reason.partition(": ")
        return _refused(shown, index, name, field, reason).message
    field = fields[0]
    if field == "recall" and len(fields) == 1 and error.validator == "additionalProperties":
        return _refused(shown, index, name, "recall", f"unknown key {_unknown(error)}: recall takes subject"
                        ).message
    if field == "recall" and error.validator == "required":
        return _refused(shown, index, name, "recall.subject", "missing: recall: {subject: S}").message
    if field in ("expect", "expect_not") and len(fields) > 1:
        return _refused(shown, index, name, f"{field}[{int(fields[1]) + 1}]", "must be non-empty text").message
    reason = "must list at least one id or text" if error.validator == "minItems" else \
        _TYPES.get(fields[-1], error.message)
    return _refused(shown, index, name, ".".join(fields), reason).message


def _case_problem(error: Any, case: Any) -> str:
    """`field: reason` for an error about a case as a whole."""
    if error.validator == "type":
        return f": must be a mapping (name, search or recall, expect), not {_kind_of(case)}"
    if error.validator == "additionalProperties":
        return f"{_unknown(error)}: unknown key; a case takes {', '.join(KEYS)}"
    if error.validator == "required":
        return "name: missing; give each case a name"
    if error.validator == "oneOf":
        if "search" in case and "recall" in case:
            return "search, recall: give one query, not both (make two cases)"
        return "search/recall: missing query: give search: TEXT or recall: {subject: S}"
    if error.validator == "anyOf":
        return ("expect/expect_not: missing: give what must (expect) or must not (expect_not) be among"
                " the first k answers")
    return f": {error.message}"


def _unknown(error: Any) -> str:
    given = sorted(map(str, set(error.instance) - set(error.schema.get("properties", {}))))
    return ", ".join(given) or "?"


def _kind_of(value: Any) -> str:
    return {dict: "a mapping", list: "a list", str: "text", int: "a number", float: "a number",
            bool: "true/false", type(None): "nothing"}.get(type(value), type(value).__name__)


def _case(index: int, raw: dict[str, Any], shown: str) -> Case:
    name = raw["name"]
    times: dict[str, int | None] = {}
    for field in ("valid_at", "as_of"):
        try:
            times[field] = given_or_none(raw.get(field), field)
        except MemstackError as exc:
            raise _refused(shown, index, name, field, f"{raw[field]!r}: {exc.reason or exc.message}") from None
    recall = raw.get("recall")
    if recall is not None:
        for field, reason in (("as_of", "recall answers at valid_at only (as `memstack recall --now-ts`);"
                                        " use search for as_of"),
                              ("agent", "recall answers every agent's facts; use search for one agent's")):
            if field in raw:
                raise _refused(shown, index, name, field, reason)
    return Case(index=index, name=name, search=raw.get("search"),
                subject=None if recall is None else recall["subject"], valid_at=times["valid_at"],
                as_of=times["as_of"], agent=raw.get("agent"), k=raw.get("k", DEFAULT_K),
                expect=tuple(raw.get("expect", ())), expect_not=tuple(raw.get("expect_not", ())))
