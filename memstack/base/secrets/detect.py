"""The detectors: which credential a line of text holds, found cheaply.

Yelp's detect-secrets, limited to its plugins that recognise a credential by its shape or its name,
behind a two-stage prefilter (a detector's substrings in the lower-cased bytes, then its shape on the
lines they hit), and a store's `Policy` (detectors switched off, extra patterns).
"""

import base64
import re
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache

from ahocorasick_rs import AhoCorasick, BytesAhoCorasick

from memstack.base.patterns import lazy

# detect-secrets' plugins that recognise a credential by its shape or its name.
PLUGINS = ("AWSKeyDetector", "BasicAuthDetector", "GitHubTokenDetector", "GitLabTokenDetector", "JwtTokenDetector",
           "KeywordDetector", "OpenAIDetector", "PrivateKeyDetector", "SlackDetector", "StripeDetector")


# detect-secrets 1.5 knows GitHub's classic tokens (ghp_, gho_, ...), not its fine-grained ones.
# Its findings are GitHubTokenDetector's: switching that off switches this off.
_EXTRA = (("GitHub Token", lazy(r"github_pat_[A-Za-z0-9]{22}_[A-Za-z0-9]{59}")),)


# The kind of credential each plugin reports (detect-secrets' `secret_type`).
KIND = dict(zip(PLUGINS, ("AWS Access Key", "Basic Auth Credentials", "GitHub Token", "GitLab Token", "JSON Web Token",
                          "Secret Keyword", "OpenAI Token", "Private Key", "Slack Token", "Stripe Access Key"),
                strict=True))


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
_ASSIGNED = lazy(rf"(?:{_KEYWORD})\w*[\]'\"\\]{{0,3}}(?:\[\d*\])?(?:\s*(?:[:=!]{{1,3}}>?|\(|\.assign\()\s*|\s+)"
                       rf"@?\\?['\"`]")


_COMPARED = lazy(r"['\"`]\s*[!=]=")


# What separates lines for I8: Python's line breaks (str.splitlines) and NUL, which separates the
# variables of /proc/<pid>/environ and the names of `find -print0`.
LINE_BREAK = lazy("\r\n|[\n\r\x00\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029]")


def split_lines(text: str) -> list[str]:
    """`text`'s lines, split at every LINE_BREAK (as str.splitlines, NUL included)."""
    parts = LINE_BREAK.split(text)
    return parts[:-1] if len(parts) > 1 and not parts[-1] else parts


# An unquoted assignment anywhere in a line (`- api_key=<value>`, `<!-- password: <value> -->`, a `.env`
# line): a secret-sounding name, `=`, `:`, `:=` or `=>`, and one token that ends the line or is followed
# by a space, `,`, `;`, `}`, a quote or `-->` (so `os.environ[...]`, `getpass()` and `<placeholder>`
# are no value; nor is `settings.pw` in `f(password=settings.pw)`: code passes a name, not a secret).
_STOP = "\\s'\"`()\\[\\]{}<>,;\\x00-\\x1f\\x7f-\\x9f\\u2028\\u2029"
_UNQUOTED = (rf"([\w.-]*(?:{_KEYWORD})[\w.-]*)\s*(?::=|=>|=|:)\s*([^={_STOP}][^{_STOP}]*)"
             rf"(?=$|[\s,;}}'\"\x00-\x1f\x7f-\x9f\u2028\u2029]|-->)")
_UNQUOTED_LOW = lazy(_UNQUOTED)
UNQUOTED = lazy(_UNQUOTED, re.IGNORECASE)


def _assignment(text: str, low: str) -> bool:
    return bool(_ASSIGNED.search(low) or ("=" in low and _COMPARED.search(low)) or _UNQUOTED_LOW.search(low))


def _shape(pattern: str) -> Callable[[str, str], bool]:
    """A shape test; the alternatives after `(?#lower)` are searched in the lower-cased text (a
    case-insensitive expression is several times slower)."""
    if pattern.startswith("(?#lower)"):
        exact, lower = "", pattern.removeprefix("(?#lower)")
    else:
        exact, _, lower = pattern.partition("|(?#lower)")
    if not lower:
        compiled = lazy(exact)
        return lambda text, low: compiled.search(text) is not None
    first, second = (lazy(exact) if exact else None), lazy(lower)
    return lambda text, low: bool((first and first.search(text)) or second.search(low))


STAGES = tuple((words, tuple(lazy(p.encode()) for p in in_bytes),
                 _assignment if shape is None else _shape(shape)) for words, in_bytes, shape in _GROUPS)


ASSIGNMENTS = len(STAGES) - 1  # the password-assignment stage


NAMED = lazy(_KEYWORD, re.IGNORECASE)


# Text that ends with a secret-sounding name and, maybe, its sign (`api_key =`, `prod db password:`):
# what joins the start of another field as its value (lower-cased text).
ENDS_NAMED = lazy(rf"(?:{_KEYWORD})[\w.-]*\s*(?::=|=>|=|:)?\s*$")


# The prefixes of the tokens of a known shape (cloud keys, GitHub, GitLab, Slack, Stripe, JWT, OpenAI),
# as one expression: rare in prose, unlike `aws`, `://` or `private key`.
TOKEN_WORDS = tuple(word for words, _, _ in STAGES[:ASSIGNMENTS] for word in words
                    if word not in ("aws", "://", "private key", "hooks.slack.com"))
TOKEN_WORD_IN = lazy("|".join(map(re.escape, TOKEN_WORDS)))


def triggered(text: str) -> bool:
    """The prefilter: might this text hold a credential the detectors know?"""
    low = text.lower()
    return any(shape(text, low) for words, _, shape in STAGES if any(word in low for word in words))


CHUNK = 8 << 20  # bytes lowered at a time: a promotion's ledger (200 MB) is never copied whole


def prefilter_hits(data: bytes) -> list[tuple[int, int]]:
    """(offset, detector) where the first stage's expressions match in `data`, at most one an expression
    a line. The detectors' words are found in one pass (Aho-Corasick, ~10x fewer passes over the bytes
    than an expression at a time); each line holding a detector's word is then searched for that
    detector's expressions, each of which holds one of its words."""
    found = set()
    start = 0
    while start < len(data):  # in pieces of whole lines, each lowered on its own
        end = data.find(b"\n", start + CHUNK)
        end = len(data) if end < 0 else end + 1
        low = data[start:end].lower()
        asked = set()
        for word, at, _ in _FIRST_WORDS.find_matches_as_indexes(low, overlapping=True):
            line = low.rfind(b"\n", 0, at) + 1
            stages = [index for index in _WORD_STAGES[word] if (line, index) not in asked]
            if not stages:
                continue
            line_end = low.find(b"\n", at)
            line_end = len(low) if line_end < 0 else line_end
            for index in stages:
                asked.add((line, index))
                for pattern in STAGES[index][1]:
                    match = pattern.search(low, line, line_end)
                    if match is not None:
                        found.add((start + match.start(), index))
        start = end
    return sorted(found)


ALLOW = lazy(r"pragma:\s*allowlist[ -]secret")


# Base64: a credential wrapped in it (a `.env` file or a token encoded for a header or a manifest) is
# found by decoding each run of the alphabet longer than 32 characters (memstack's ids are 28 to 32 hex
# digits; a run of hex digits only is a hash) and reading the text it decodes to, if it is text, for
# the same shapes. Finding the runs is one bytes.translate and a few finds (~2 ms a megabyte).
_BASE64 = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
_RUNS = bytes(0x78 if c in _BASE64 else 0x20 for c in range(256))
MIN_ENCODED = 33  # characters in a run
_RUN = b"x" * MIN_ENCODED
_HEX = lazy(rb"[0-9a-fA-F]+")
MAX_DECODED = 1 << 16  # characters of a run decoded: a longer one is read this far


def encoded_runs(data: bytes) -> list[tuple[int, int]]:
    """(start, end) of each run of base64's alphabet longer than 32 characters, not all hex digits."""
    marked = data.translate(_RUNS)
    found = []
    at = marked.find(_RUN)
    while at >= 0:
        end = marked.find(b" ", at + MIN_ENCODED)
        end = len(data) if end < 0 else end
        if not _HEX.fullmatch(data, at, end):
            found.append((at, end))
        at = marked.find(_RUN, end)
    return found


def decoded(text: str) -> list[str]:
    """The text each base64 run of `text` decodes to, where it decodes to text (of one of its four
    alignments: a run may start with a letter that is not its own, `\\n` of an escaped newline)."""
    data = text.encode("utf-8", "surrogateescape")
    found = []
    for start, end in encoded_runs(data):
        run = data[start:min(end, start + MAX_DECODED)]
        for skip in range(4):
            piece = run[skip:]
            piece = piece[:len(piece) - 1] if len(piece) % 4 == 1 else piece  # never a whole group
            try:
                plain = base64.b64decode(piece + b"=" * (-len(piece) % 4), validate=True).decode("utf-8")
            except (ValueError, UnicodeDecodeError):
                continue
            if sum(c.isprintable() or c.isspace() for c in plain) >= 0.95 * len(plain):
                found.append(plain)
                break
    return found


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


def kinds(line: str, policy: Policy = DEFAULT, encoded: bool = True) -> list[str]:
    """The kinds of credential on one line of text (sorted, each once); [] for most lines. A "line"
    holding a LINE_BREAK (NUL, ...) is read as the lines it separates; with `encoded`, the text its base64
    runs decode to is read too (its kinds marked `(base64)`)."""
    if LINE_BREAK.search(line):
        return sorted({kind for part in split_lines(line) for kind in kinds(part, policy, encoded)})
    if ALLOW.search(line):
        return []
    extra = policy.extras(line) if policy.extra else set()
    shaped = triggered(line)
    found: set[str] = set()
    if shaped:
        found = _library(line)
        for name, value in UNQUOTED.findall(line):
            if not value.isalpha():  # `password: required` is a word, not a secret
                found |= _library(f'{name} = "{value}"')
        found |= {kind for kind, pattern in _EXTRA if pattern.search(line)}
        found -= policy.dropped
    if encoded and len(line) > MIN_ENCODED:
        found |= {f"{kind} (base64)" for plain in decoded(line) for kind in kinds(plain, policy, False)}
    return sorted(found | extra)


ANY_WORD = tuple(sorted({word for words, _, _ in STAGES for word in words}))


# Every word in one pass (Aho-Corasick): on a record's short strings and on long texts alike, ~7x
# cheaper than a loop of substring tests or one alternation of them all (a promotion scans each fact).
_ANY_WORD = AhoCorasick(ANY_WORD)
_FIRST_WORDS = BytesAhoCorasick([word.encode() for word in ANY_WORD])  # the same in bytes (`prefilter_hits`)
_WORD_STAGES = [tuple(index for index, (words, _, _) in enumerate(STAGES) if word in words) for word in ANY_WORD]


def holds_word(low: str) -> bool:
    """Does the lower-cased text `low` hold any detector's first-stage word?"""
    return bool(_ANY_WORD.find_matches_as_indexes(low))


LINK = "://"  # the one first-stage word of the basic-auth detector: in every link a record holds
USER_AT = lazy(r"://[^:/?#\[\]@\s]+:[^:/?#\[\]@\s]+@")  # its shape: a user and password before an @
_LINK_INDEX = ANY_WORD.index(LINK)  # no other word begins inside it (none starts with ':' or '/')


def word_and_link_starts(low: str) -> tuple[list[int], list[int]]:
    """Where in the lower-cased text `low` detectors' first-stage words start (not overlapping): the words
    other than `LINK`, and the links."""
    words: list[int] = []
    links: list[int] = []
    for index, start, _ in _ANY_WORD.find_matches_as_indexes(low):
        (links if index == _LINK_INDEX else words).append(start)
    return words, links
