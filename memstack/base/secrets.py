"""I8: no credential in memory. One detector for every write path, the checks and review.

The detection is Yelp's detect-secrets, limited to its plugins that recognise a
credential by its shape or its name (cloud keys, tokens with known prefixes,
private-key blocks, basic-auth URLs, password assignments). Its high-entropy
plugins are left out: they flag git hashes, UUIDs and memstack's hex ids, which
are everywhere in an agent's memory.

A cheap prefilter runs first, in two stages for each detector: the substrings
one of which it needs (`akia`, `ghp_`, `private key`, `pass`, `://`, ...),
searched in the lower-cased bytes; then, on the lines they hit, its shape (a
URL with `user:password@`, a password word followed by a quoted value, ...). A
line that fails either never reaches the library, so checking a 100,000-line
promotion commit costs a few substring searches.

What counts as a *password assignment* (detect-secrets' KeywordDetector, as it
reads source code): a secret-sounding name (password, passwd, pwd, secret,
api_key, auth_key, private_key, db_pass, ...) followed by `=`, `:`, `:=` or `=>`
and a quoted value, e.g. `password = "..."` or `"api_key": "..."`. memstack adds
one shape agents paste from `.env` files and YAML: a whole line `NAME=value` or
`NAME: value` whose value is a single unquoted token with a digit or a symbol
(`DB_PASSWORD=...`; `password_policy: strict` is a setting, not a secret). Prose
("the password is in the vault"), empty or templated values (`"${DB_PASSWORD}"`,
`"<password>"`) and indirect references (`password = os.environ["DB_PASSWORD"]`)
are not secrets.

An inline `pragma: allowlist secret` on the line (detect-secrets' convention,
here accepted anywhere on the line) marks a deliberate exception.

A store's `secrets:` block in memstack.yaml (a `Policy`) switches detectors off
(`disable`: their plugin names, PLUGINS) and adds patterns of its own
(`extra_patterns`: a name and a Python regular expression, searched on each line,
past the prefilter). The write paths read the store's block (`for_store`); the
checks read a state's, and where a change edits memstack.yaml, the base's too
(`Policy.both`), so one commit cannot switch a detector off and add what it finds.

Nothing here ever returns, prints or raises with the secret itself: a finding is
its kind, where it is (a field's JSON path, a line) and nothing more.
"""

import re
from bisect import bisect_right
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

import orjson

from memstack.base import config
from memstack.base.errors import MemstackError, bad

# detect-secrets' plugins that recognise a credential by its shape or its name.
PLUGINS = ("AWSKeyDetector", "BasicAuthDetector", "GitHubTokenDetector", "GitLabTokenDetector", "JwtTokenDetector",
           "KeywordDetector", "OpenAIDetector", "PrivateKeyDetector", "SlackDetector", "StripeDetector")

# detect-secrets 1.5 knows GitHub's classic tokens (ghp_, gho_, ...), not its fine-grained ones.
# Its findings are GitHubTokenDetector's: switching that off switches this off.
_EXTRA = (("GitHub Token", re.compile(r"github_pat_[A-Za-z0-9]{22}_[A-Za-z0-9]{59}")),)

# The kind of credential each plugin reports (detect-secrets' `secret_type`).
KIND = dict(zip(PLUGINS, ("AWS Access Key", "Basic Auth Credentials", "GitHub Token", "GitLab Token", "JSON Web Token",
                          "Secret Keyword", "OpenAI Token", "Private Key", "Slack Token", "Stripe Access Key")))

# The prefilter, in two stages, for each detector: first lower-case substrings one of which it
# needs, searched in the lower-cased bytes (plain or literal-prefixed searches run at memory speed;
# one alternation of them all is ~20x slower); then, on the few lines they hit, an expression of the
# detector's own shape, so prose that merely says "AWS", "secret" or "https://" stays cheap.
_KEYWORD = (r"(?:api|auth|service|account|db|database|priv|private|client)_?key|(?:db|database|key)_?pass"
            r"|passw|pwd|secret|contrase")
_WORDS = ("_key", "ikey", "hkey", "ekey", "tkey", "bkey", "vkey", "pass", "pwd", "secret", "contrase")
# Each: (first stage: lower-case substrings; the same, or tighter, as expressions for bytes), its shape
# (`(?#lower)`: the alternatives after it are searched in the lower-cased text).
_GROUPS = (
    # AWS access key ids, and secret keys named as such
    (("akia", "asia", "abia", "acca", "a3t", "aws"), ("a(?:kia|sia|bia|cca|3t)", "aws.{0,20}?(?:key|pw|pass|token)"),
     r"A3T[A-Z0-9]|ABIA|ACCA|AKIA|ASIA|(?#lower)aws.{0,20}?(?:key|pwd|pw|pass|token).{0,20}?['\"][0-9a-z/+]{40}['\"]"),
    (("ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_"), ("gh[pousr]_", "github_pat_"),  # GitHub
     r"gh[pousr]_|github_pat_"),
    (("glpat-", "gldt-", "glft-", "glsoat-", "glrt-", "glcbt-", "glimt-", "glptt-", "glagent-", "gloas-",
      "gr1348941"), ("gl(?:pat|dt|ft|soat|rt|cbt|imt|ptt|agent|oas)-", "gr1348941"),  # GitLab
     r"gl(?:pat|dt|ft|soat|rt|cbt|imt|ptt|agent|oas)-|GR1348941"),
    (("private key", "putty-user-key-file"), ("private key", "putty-user-key-file"),  # private keys
     r"PRIVATE KEY|PuTTY-User-Key-File"),
    (("://",), (r"://[^:/?#\[\]@\s]+:[^:/?#\[\]@\s]+@",), r"://[^:/?#\[\]@\s]+:[^:/?#\[\]@\s]+@"),  # basic auth
    (("xox", "hooks.slack.com"), ("xox", r"hooks\.slack\.com"), r"(?#lower)xox[abposr]-|hooks\.slack\.com"),  # Slack
    (("k_live_",), ("k_live_",), r"[rs]k_live_"),  # Stripe
    (("eyj",), (r"eyj[a-z0-9_=-]+\.[a-z0-9_=-]+",), r"eyJ"),  # JSON Web Tokens
    (("t3blbkfj",), ("t3blbkfj",), r"T3BlbkFJ"),  # OpenAI
    # password assignments: KeywordDetector's names (api_key, apikey, db_pass, password, ...) given a
    # quoted value (quotes may be JSON-escaped), compared with one, or a whole `NAME=value` line
    (_WORDS, _WORDS, None),
)
# The assignment shapes, on the lower-cased text (a case-insensitive alternation is ~5x slower).
_ASSIGNED = re.compile(rf"(?:{_KEYWORD})\w*[\]'\"\\]{{0,3}}(?:\[\d*\])?(?:\s*(?:[:=!]{{1,3}}>?|\(|\.assign\()\s*|\s+)"
                       rf"@?\\?['\"`]")
_COMPARED = re.compile(r"['\"`]\s*[!=]=")
_BARE_LINE = re.compile(rf"\s*(?:export\s+)?[\w.-]*(?:{_KEYWORD})[\w.-]*\s*[:=]\s*[^\s'\"`]+\s*")


def _assignment(text: str, low: str) -> bool:
    return bool(_ASSIGNED.search(low) or ("=" in low and _COMPARED.search(low)) or _BARE_LINE.fullmatch(low))


def _shape(pattern: str) -> Callable[[str, str], bool]:
    """A shape test; the alternatives after `(?#lower)` are searched in the lower-cased text (a
    case-insensitive expression is several times slower)."""
    if pattern.startswith("(?#lower)"):
        exact, lower = "", pattern.removeprefix("(?#lower)")
    else:
        exact, _, lower = pattern.partition("|(?#lower)")
    if not lower:
        compiled = re.compile(exact)
        return lambda text, low: compiled.search(text) is not None
    first, second = (re.compile(exact) if exact else None), re.compile(lower)
    return lambda text, low: bool((first and first.search(text)) or second.search(low))


_STAGES = tuple((words, tuple(re.compile(p.encode()) for p in in_bytes),
                 _assignment if shape is None else _shape(shape)) for words, in_bytes, shape in _GROUPS)
_ASSIGNMENTS = len(_STAGES) - 1  # the password-assignment stage
_NAMED = re.compile(_KEYWORD, re.IGNORECASE)


def triggered(text: str) -> bool:
    """The prefilter: might this text hold a credential the detectors know?"""
    low = text.lower()
    return any(shape(text, low) for words, _, shape in _STAGES if any(word in low for word in words))


CHUNK = 8 << 20  # bytes lowered at a time: a promotion's ledger (200 MB) is never copied whole


def prefilter_hits(data: bytes) -> list[tuple[int, int]]:
    """(offset, detector) where the first stage's substrings occur in `data`, at most one a line each."""
    found = set()
    start = 0
    while start < len(data):  # in pieces of whole lines, each lowered on its own
        end = data.find(b"\n", start + CHUNK)
        end = len(data) if end < 0 else end + 1
        low = data[start:end].lower()
        for index, (_, first, _) in enumerate(_STAGES):
            for pattern in first:
                match = pattern.search(low)
                while match is not None:
                    found.add((start + match.start(), index))
                    newline = low.find(b"\n", match.end())
                    if newline < 0:
                        break
                    match = pattern.search(low, newline + 1)
        start = end
    return sorted(found)


ALLOW = re.compile(r"pragma:\s*allowlist[ -]secret")
_BARE = re.compile(r"\s*(?:export\s+)?([A-Za-z_][\w.-]*)\s*(=|:)\s*([^\s'\"`()\[\]{}<>]+)\s*")

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


@dataclass(frozen=True)
class Policy:
    """A store's `secrets:` block: the kinds of the detectors switched off, and the extra patterns
    (name, expression)."""

    dropped: frozenset[str] = frozenset()
    extra: tuple[tuple[str, re.Pattern[str]], ...] = ()

    def both(self, other: "Policy") -> "Policy":
        """What either applies: a detector on in either is on, an extra pattern of either applies."""
        return Policy(self.dropped & other.dropped, self.extra + tuple(e for e in other.extra if e not in self.extra))

    def extras(self, line: str) -> set[str]:
        return {name for name, pattern in self.extra if pattern.search(line)}


DEFAULT = Policy()


def policy(document: Any) -> Policy:
    """The `secrets:` block of a parsed memstack.yaml that passed its schema; a MemstackError naming
    the field for an unknown detector or an extra pattern that does not compile."""
    section = document.get("secrets") if isinstance(document, dict) else None
    if not section:
        return DEFAULT
    dropped: set[str] = set()
    for index, name in enumerate(section.get("disable") or []):
        if name not in KIND:
            raise MemstackError(f"secrets.disable[{index}]: unknown detector {name!r} (known: {', '.join(PLUGINS)})")
        dropped.add(KIND[name])
    extra: list[tuple[str, re.Pattern[str]]] = []
    for index, item in enumerate(section.get("extra_patterns") or []):
        try:
            extra.append((str(item["name"]), re.compile(str(item["pattern"]))))
        except re.error as exc:
            raise MemstackError(f"secrets.extra_patterns[{index}].pattern: not a valid regular expression ({exc})") \
                from None
    return Policy(frozenset(dropped), tuple(extra))


def for_store(store: Path) -> Policy:
    """The `secrets:` block of the store's memstack.yaml (read once a process while the file is unchanged)."""
    path = store / "memstack.yaml"
    try:
        stat = path.stat()
    except FileNotFoundError:
        return DEFAULT
    return _loaded(path, stat.st_mtime_ns, stat.st_size)


@cache
def _loaded(path: Path, mtime_ns: int, size: int) -> Policy:

    try:
        return policy(config.load(path.parent).document)
    except MemstackError as exc:
        if exc.message.startswith(str(path)):
            raise
        raise MemstackError(f"{path}: invalid memstack.yaml: {exc.message}") from None


@cache
def _configured() -> bool:
    from detect_secrets.settings import (
        configure_settings_from_baseline,  # deferred: ~110 ms, only when a line looks like a credential
    )

    configure_settings_from_baseline({"plugins_used": [{"name": name} for name in PLUGINS]})
    return True


def _library(line: str) -> set[str]:
    from detect_secrets.core.scan import scan_line  # deferred with the settings above

    _configured()
    return {found.type for found in scan_line(line)}


def kinds(line: str, policy: Policy = DEFAULT) -> list[str]:
    """The kinds of credential on one line of text (sorted, each once); [] for most lines."""
    extra = policy.extras(line) if policy.extra else set()
    shaped = triggered(line)
    if not (shaped or extra) or ALLOW.search(line):
        return []
    found: set[str] = set()
    if shaped:
        found = _library(line)
        bare = _BARE.fullmatch(line)
        if bare and not found and not bare.group(3).isalpha():  # `password: required` is a word, not a secret
            name, sign, value = bare.groups()
            found |= _library(f'{name}: "{value}"' if sign == ":" else f'{name} = "{value}"')
        found |= {kind for kind, pattern in _EXTRA if pattern.search(line)}
        found -= policy.dropped
    return sorted(found | extra)


def scan_text(text: str, field: str = "text", policy: Policy = DEFAULT) -> list[Finding]:
    """Each credential in `text`, line by line (a line number only when the text has several)."""
    if not policy.extra and not _ANY_WORD_IN.search(text.lower()):
        return []
    parts = text.splitlines() or [text]
    numbered = len(parts) > 1
    return [Finding(field, number if numbered else 0, kind)
            for number, line in enumerate(parts, start=1) for kind in kinds(line, policy)]


_ANY_WORD = tuple(sorted({word for words, _, _ in _STAGES for word in words}))
# The same test as one expression: on the short strings of a record (a key, a field) one search is
# several times cheaper than a loop of substring tests (a promotion scans 16 fields of each fact).
_ANY_WORD_IN = re.compile("|".join(map(re.escape, _ANY_WORD)))


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
        if low is not None and not any(word in low for word in _ANY_WORD):
            return []
    return sorted(set(_walk(value, field, policy)))


def _walk(value: Any, field: str, policy: Policy) -> Iterator[Finding]:
    if isinstance(value, str):
        yield from scan_text(value, field or "value", policy)
    elif isinstance(value, dict):
        for key, item in value.items():
            path = f"{field}.{key}" if field else str(key)
            yield from scan_text(str(key), f"{path} (the key)", policy)
            yield from _walk(item, path, policy)
            if isinstance(item, str) and _NAMED.search(str(key)) and "\n" not in item:
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
    hit = {bisect_right(starts, offset) - 1 for offset, _ in prefilter_hits(joined)}
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


# ---- the checks: what a change adds to a file ----------------------------------------------------

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
    forced: set[int] = set()  # lines an extra pattern matches: past the prefilter
    for number, line in _extra_lines(new, policy):
        lines.setdefault(number, (line, set()))
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
        if number not in forced and not any((json_lines and d == _ASSIGNMENTS) or _STAGES[d][2](shown, low)
                                            for d in detectors):
            continue
        if before is None:
            before = b"\n" + old + (b"" if old.endswith(b"\n") else b"\n") if old else b""
        if before and b"\n" + raw + b"\n" in before:
            continue  # not added by this change
        found += [(number, finding) for finding in _line(line, json_lines, policy)]
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
    return [Finding("text", 0, kind) for kind in kinds(line, policy)]


# ---- output: what a report may print --------------------------------------------------------------

def redact(value: Any, policy: Policy = DEFAULT) -> Any:
    """`value` with each string that holds a credential replaced by `[redacted: <kind>]` (with the
    extra patterns of `policy`; every detector, whatever it switches off: a report redacts more).

    A long list (a review's 100,000 facts) is screened as one JSON line per item by the byte
    prefilter; only the items it hits are walked."""
    policy = Policy(frozenset(), policy.extra)
    if isinstance(value, str):
        found = scan_text(value, "text", policy)
        return f"[redacted: {', '.join(sorted({f.kind for f in found}))}]" if found else value
    if isinstance(value, dict):
        return {redact(k, policy) if isinstance(k, str) else k: redact(v, policy) for k, v in value.items()}
    if isinstance(value, list):
        if len(value) < 64:
            return [redact(item, policy) for item in value]
        hit = flagged([orjson.dumps(item) for item in value], policy)
        return [redact(item, policy) if index in hit else item for index, item in enumerate(value)]
    return value
