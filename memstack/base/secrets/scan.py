"""Credentials in records, text and the lines a change adds: what the write paths refuse, the checks
report and review redacts. A finding is a kind and a place, never the value."""

import re
from bisect import bisect_right
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from itertools import islice, permutations
from pathlib import Path
from typing import Any

import orjson

from memstack.base.errors import MemstackError, bad
from memstack.base.patterns import lazy
from memstack.base.secrets.detect import (
    ALLOW,
    ANY_WORD,
    ASSIGNMENTS,
    DEFAULT,
    ENDS_NAMED,
    KIND,
    LINE_BREAK,
    LINK,
    NAMED,
    STAGES,
    TOKEN_WORD_IN,
    TOKEN_WORDS,
    USER_AT,
    Policy,
    encoded_runs,
    holds_word,
    kinds,
    prefilter_hits,
    split_lines,
)
from memstack.base.secrets.settings import for_store

KEYWORD = KIND["KeywordDetector"]

FIX = ("memory never keeps credentials: remove it (keep a reference instead: the variable's or the vault"
       " entry's name) and rotate it if it was real, or mark a deliberate exception with"
       " `pragma: allowlist secret` on its line")


@dataclass(frozen=True, order=True)
class Finding:
    """A credential found: its kind (detect-secrets' name for it) and where; never its value."""

    field: str  # a JSON path (`content`, `value.db.password`, `keywords[2]`) or `text`
    line: int  # the line within the field's text (multi-line text), or 0
    kind: str

    def __str__(self) -> str:
        return f"{self.kind} in {self.field}" + (f" (line {self.line})" if self.line else "")


def scan_text(text: str, field: str = "text", policy: Policy = DEFAULT) -> list[Finding]:
    """Each credential in `text`, line by line (a line number only when the text has several)."""
    if not policy.extra and not holds_word(text.lower()) and not encoded_runs(text.encode()):
        return []
    parts = split_lines(text)
    numbered = len(parts) > 1
    return [Finding(field, number if numbered else 0, kind)
            for number, line in enumerate(parts, start=1) for kind in kinds(line, policy)]


def scan(value: Any, field: str = "", policy: Policy = DEFAULT) -> list[Finding]:
    """Each credential in a record or any JSON value: every string, and every key with its string value
    (so `{"password": "..."}` is read as the assignment it is).

    Without extra patterns, a record none of whose strings holds a first-stage word is answered from
    one look at its JSON (JSON escapes only quotes, backslashes and control characters, none of which
    a word holds): a promotion's 100,000 facts would otherwise cost a prefilter call for each field."""
    if not isinstance(value, str) and not policy.extra:
        try:
            low = orjson.dumps(value).decode("utf-8").lower()
        except TypeError:  # not plain JSON (a key that is no string, ...): field by field
            low = None
        if low is not None and not encoded_runs(low.encode()) and (
                not holds_word(low) and not _split_word(value) or _only_links(value, low)):
            return []
    found = sorted(set(_walk(value, field, policy)))
    if not found and isinstance(value, dict):
        found = _across(value, field, policy)
    return found


ACROSS_FIELDS = 32  # the strings of a record whose joins are read, at most
ACROSS_CHARS = 64  # characters of each side of a join
# a record's ids and times (`id`, `intake_id`, `created_at`, a fact's `superseded_by` and what a capture
# `supersedes`): memstack's own
_METADATA = lazy(r"(?:^|\.)(?:(?:\w*_)?(?:id|at)|superseded_by|supersedes(?:\[\d+\])?)$")
_TIME = lazy(r"\d{4}-\d\d-\d\d[T ][\d:.]+(?:Z|[+-]\d\d:?\d\d)?")


def _strings(value: Any, field: str) -> Iterator[tuple[str, str]]:
    if isinstance(value, str):
        yield field, value
    elif isinstance(value, dict):
        for key, item in value.items():
            yield from _strings(item, f"{field}.{key}" if field else str(key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from _strings(item, f"{field}[{index}]")


_CUT: dict[str, list[str]] = {}  # the start of a token detector's word -> the rests that complete it
for _word, _at in ((word, at) for word in TOKEN_WORDS for at in range(1, len(word))):
    _CUT.setdefault(_word[:_at], []).append(_word[_at:])
_LONGEST = max(map(len, TOKEN_WORDS))
_STARTS, _RESTS = tuple(_CUT), tuple({rest for rests in _CUT.values() for rest in rests})  # a word's cuts, rests


def _only_links(value: Any, low: str) -> bool:
    """Is a record's only first-stage word `://` (links: the commonest case), with no `user:password@`
    after it and no token detector's word cut between two of its strings? Then the walk finds nothing:
    each string's only stage is the basic-auth detector, whose shape the record's JSON `low` lacks (it
    holds each string's characters, or an escape where a string has a quote, a backslash or a control
    character, none of which the shape needs), and `_across` reads no join (no string ends with a
    secret-sounding name or holds a token's word, and no token's word spans a join)."""
    if USER_AT.search(low) or holds_word(low.replace(LINK, " ")):
        return False
    texts = [text.lower() for _, text in islice(_strings(value, ""), ACROSS_FIELDS)]
    cut = [i for i, text in enumerate(texts) if text.endswith(_STARTS)]  # two C calls answer most records
    if not cut or not any(text.startswith(_RESTS) for j, text in enumerate(texts) if cut != [j]):
        return True
    for i, text in enumerate(texts):
        for start in _CUT.keys() & {text[-n:] for n in range(1, min(len(text), _LONGEST) + 1)}:
            if any(j != i and other.startswith(rest) for rest in _CUT[start] for j, other in enumerate(texts)):
                return False
    return True


def _split_word(value: Any) -> bool:
    """Might a detector's word be cut between two string fields of a record (its top level)? Asked where
    no string holds a word whole, so a word found spans a join: only the characters a word can reach on
    each side of each join are searched, not the whole texts (a record of long texts: ~100x cheaper)."""
    if not isinstance(value, dict):
        return False
    strings = [item for item in value.values() if isinstance(item, str)]
    if len(strings) < 2:
        return False
    around = []
    for order in (strings, strings[::-1]):  # joined both ways, as `_across` reads them
        joined, at = "".join(order), 0
        for text in order[:-1]:
            at += len(text)
            around.append(joined[max(0, at - _REACH):at + _REACH])
    return holds_word("\n".join(around).lower())


_REACH = max(map(len, ANY_WORD)) - 1  # a word across a join lies within this many characters of it


def _across(record: dict[str, Any], field: str, policy: Policy) -> list[Finding]:
    """A credential split across two fields of one record (the name in one, the value in the other; a
    token cut in two): the end of each string joined to the start of each other one, read as one line.

    Only joins that can make one are read: after a string that ends with a secret-sounding name (and a
    sign), with a space between; after a string whose end holds a token detector's word, or where such
    a word spans the join, without (a name read with the word after it would be a name no one wrote:
    there, only the detectors of a token's shape)."""
    strings = [(path, text) for path, text in islice(_strings(record, field), ACROSS_FIELDS)
               if text.strip() and not ALLOW.search(text) and not _METADATA.search(path) and not _TIME.fullmatch(text)]
    ends = [text[-ACROSS_CHARS:] for _, text in strings]
    named = [bool(ENDS_NAMED.search(end[-40:].lower())) for end in ends]
    token = [bool(TOKEN_WORD_IN.search(end.lower())) for end in ends]
    pairs = list(permutations(range(len(strings)), 2))
    tails, heads = [end[-12:].lower() for end in ends], [text[:12].lower() for _, text in strings]
    spans = TOKEN_WORD_IN.search("\n".join(tails[i] + heads[j] for i, j in pairs))  # a word across a join
    found = set()
    for i, j in pairs:
        if not (named[i] or token[i] or spans):
            continue
        start = strings[j][1][:ACROSS_CHARS]
        joined = set(kinds(f"{ends[i]} {start}", policy, encoded=False)) if named[i] else set()
        if token[i] or spans:
            joined |= {kind for kind in kinds(ends[i] + start, policy, encoded=False) if kind != KEYWORD}
        found |= {Finding(f"{strings[i][0]} + {strings[j][0]}", 0, kind) for kind in joined}
    return sorted(found)


def _walk(value: Any, field: str, policy: Policy) -> Iterator[Finding]:
    if isinstance(value, str):
        yield from scan_text(value, field or "value", policy)
    elif isinstance(value, dict):
        for key, item in value.items():
            path = f"{field}.{key}" if field else str(key)
            yield from scan_text(str(key), f"{path} (the key)", policy)
            yield from _walk(item, path, policy)
            if isinstance(item, str) and NAMED.search(str(key)) and "\n" not in item:
                pair = orjson.dumps({str(key): item}).decode()[1:-1]  # "name":"value", as JSON holds it
                yield from (Finding(path, 0, kind) for kind in kinds(pair, policy) if kind == "Secret Keyword")
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from _walk(item, f"{field}[{index}]", policy)


def message(findings: list[Finding]) -> str:
    return f"bad {findings[0].field}: {_why(findings)}"


def _why(findings: list[Finding]) -> str:
    first = findings[0]
    where = f", line {first.line}" if first.line else ""
    more = f" (and {len(findings) - 1} more)" if len(findings) > 1 else ""
    return f"holds a credential ({first.kind}{where}){more} — {FIX} (I8)"


def flagged(lines: Sequence[bytes], policy: Policy = DEFAULT) -> set[int]:
    """The indexes of the `lines` (JSON lines, each of one line) the byte prefilter hits (the hook's,
    `added`): only these can hold a credential. One pass over them all instead of a walk of each."""
    starts, at = [], 0
    for line in lines:
        starts.append(at)
        at += len(line) + 1
    joined = b"\n".join(line.rstrip(b"\n") for line in lines)
    hit = {bisect_right(starts, offset) - 1 for offset, _ in prefilter_hits(joined) + encoded_runs(joined)}
    return hit | {number - 1 for number, _ in _extra_lines(joined, policy)}


def refuse_secrets_in(records: Sequence[Any], lines: Sequence[bytes], store: Path | None = None) -> None:
    """refuse_secrets for many records at once, given as their JSON `lines` too: only the records
    whose line the prefilter hits are walked."""
    policy = DEFAULT if store is None else for_store(store)
    for index in sorted(flagged(lines, policy)):
        findings = scan(records[index], "", policy)
        if findings:
            raise MemstackError(message(findings))


def refuse_secrets(value: Any, field: str = "", store: Path | None = None) -> None:
    """Raise a MemstackError (exit 2) naming the kind and the field of the first credential in
    `value` (a record, any JSON value, or text: then `field` names it), with the `secrets:` block of
    the `store`'s memstack.yaml. Every write path calls this before it writes anything."""
    findings = scan(value, field, DEFAULT if store is None else for_store(store))
    if findings and field and findings[0].field == field:  # the text of an argument: it is named
        raise bad(field, None, "{why}", why=_why(findings))
    if findings:  # a field of a record, named as the record names it
        raise MemstackError(message(findings))


def added(new: bytes, old: bytes | None | Callable[[], bytes | None], json_lines: bool,
          policy: Policy = DEFAULT) -> list[tuple[int, Finding]]:
    """(line number, finding) for each credential on a line of `new` that `old` does not hold.

    One pass of the prefilter over `new`; only the lines it hits are looked up in `old` and read.
    `json_lines`: a line is read as JSON (a JSONL record, or one `"key": value` line of an indented
    JSON document) so a finding names its field; other lines (Markdown) are read as text.

    Where `new` is `old` and more lines (an appended log or fact file: a promotion's), only those
    lines are scanned: the old ones cannot be added ones."""
    base = old() if callable(old) else old
    if base and base.endswith(b"\n") and len(new) > len(base) and new.startswith(base):
        shift = base.count(b"\n")
        return [(number + shift, finding) for number, finding in _added(new[len(base):], base, json_lines, policy)]
    return _added(new, base, json_lines, policy)


def _added(new: bytes, old: bytes | None, json_lines: bool, policy: Policy) -> list[tuple[int, Finding]]:
    lines: dict[int, tuple[bytes, set[int]]] = {}  # line number -> (its bytes, the detectors hit)
    number, at, end = 1, 0, -1
    for offset, detector in prefilter_hits(new):
        if offset > end:
            start = new.rfind(b"\n", 0, offset) + 1
            number += new.count(b"\n", at, start)
            end = new.find(b"\n", start)
            end = len(new) if end < 0 else end
            lines[number] = (new[start:end], set())
            at = start
        lines[number][1].add(detector)
    forced: set[int] = set()  # lines an extra pattern matches, or with base64 runs: past the prefilter
    for number, raw_line in _extra_lines(new, policy) + _encoded_lines(new):
        lines.setdefault(number, (raw_line, set()))
        forced.add(number)
    before: bytes | None = None
    found = []
    for number, (raw, detectors) in sorted(lines.items()):
        try:
            line = raw.decode("utf-8")
        except UnicodeDecodeError:
            continue  # I7 reports it
        # JSON escapes its quotes, and a `.env` line inside a JSON string is no whole line:
        # there, a password word is enough to read the record.
        shown = line.replace('\\"', '"') if json_lines else line
        low = shown.lower()
        if LINE_BREAK.search(line.rstrip("\r")):  # NUL-separated (an environment dump): each part a line
            forced.add(number)
        if number not in forced and not any((json_lines and d == ASSIGNMENTS) or STAGES[d][2](shown, low)
                                            for d in detectors):
            continue
        if before is None:
            before = b"\n" + old + (b"" if old.endswith(b"\n") else b"\n") if old else b""
        if before and b"\n" + raw + b"\n" in before:
            continue  # not added by this change
        found += [(number, finding) for finding in _line(line, json_lines, policy)]
    return found


def _encoded_lines(new: bytes) -> list[tuple[int, bytes]]:
    """(line number, its bytes) for each line of `new` holding a base64 run (detect.encoded_runs)."""
    found: list[tuple[int, bytes]] = []
    number, at, end = 1, 0, -1
    for offset, _ in encoded_runs(new):
        if offset <= end:
            continue
        start = new.rfind(b"\n", 0, offset) + 1
        number += new.count(b"\n", at, start)
        end = new.find(b"\n", offset)
        end = len(new) if end < 0 else end
        found.append((number, new[start:end]))
        at = start
    return found


def _extra_lines(new: bytes, policy: Policy) -> list[tuple[int, bytes]]:
    """(line number, its bytes) for each line of `new` where an extra pattern may match: each pattern
    searched once over the whole text (`^`, `$` at each line), then again from the next line on."""
    if not policy.extra:
        return []
    text = new.decode("utf-8", "surrogateescape")
    starts: set[int] = set()
    for _, pattern in policy.extra:
        multi = re.compile(pattern.pattern, pattern.flags | re.MULTILINE)
        match = multi.search(text)
        while match is not None:
            starts.add(text.rfind("\n", 0, match.start()) + 1)
            newline = text.find("\n", match.start())
            if newline < 0:
                break
            match = multi.search(text, newline + 1)
    found: list[tuple[int, bytes]] = []
    number, at = 1, 0
    for start in sorted(starts):
        number += text.count("\n", at, start)
        at = start
        end = text.find("\n", start)
        found.append((number, text[start:None if end < 0 else end].encode("utf-8", "surrogateescape")))
    return found


def _line(line: str, json_lines: bool, policy: Policy) -> list[Finding]:
    if json_lines:
        stripped = line.strip().rstrip(",")
        for candidate in (stripped, "{" + stripped + "}"):
            try:
                value = orjson.loads(candidate)
            except orjson.JSONDecodeError:
                continue
            if isinstance(value, (dict, list, str)):
                found = [Finding(f.field, 0, f.kind) for f in scan(value, "", policy)]
                seen = {f.kind for f in found}  # an extra pattern written for the line as it is stored
                extra = set() if ALLOW.search(line) else policy.extras(line) - seen
                return found + [Finding("text", 0, name) for name in sorted(extra)]
    return [Finding("text", 0, kind) for kind in kinds(line, policy)]  # NUL-separated parts: each a line
