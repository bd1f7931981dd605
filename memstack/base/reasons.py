"""Whether a reason repeats what the records it stands for said (docs/forgetting.md).

A tombstone's reason is shown in a forgotten record's place, and an erasure receipt's is committed on top of
the history an excise cleaned: neither may carry the content they stand for. `memstack forget`, `memstack
excise` and the checks of a tombstone ask `repeats` (or `repeated`, over a record's texts already read).

The texts of a record are what forgetting hides of it: each string and number of an intake record, a fact or
a SOIL record outside what it keeps (forgotten.KEPT, times); each line of a handoff outside its front matter and its
required sections' headings. A reason repeats a text when they share TEXT OF 8 CHARACTERS OR MORE: a run of
whole words (letters and digits; case, spaces and punctuation between words not compared), counted as its
words joined by one space, less the LITTLE words at its ends ("a", "the", "of"), that is two words or more,
or one word holding a digit; or a whole text (a subject, a keyword) of 8 characters or more. One word of
letters alone is not counted: an ordinary word ("password", "a customer") may well be in both a record and
the reason it was forgotten.
"""

from collections import defaultdict
from collections.abc import Iterable
from typing import Any

import orjson

from memstack.base.forgotten import KEPT, Files, line_with
from memstack.base.layout import HANDOFF_SECTIONS
from memstack.base.patterns import lazy

SHORT = 8  # characters of shared text from which a reason repeats a record
# English function words, not counted at either end of a shared run: "a customer" is one ordinary word
LITTLE = frozenset("a an the of to at in on by for and or is are was be it its as my our your his her their this"
                   " that with from".split())
_WORD = lazy(r"\w+")
_HEADING = lazy(r"^#{1,6}[ \t]+(.*?)[ \t]*#*[ \t]*$")
_FRONT_END = "\n---"


def words(text: str) -> list[str]:
    """The words of `text`, case folded."""
    return [word.casefold() for word in _WORD.findall(text)]


def texts(files: Files, kind: str, path: str, record_id: str) -> list[str]:
    """The texts a record holds beyond what it keeps (what a reason must not repeat)."""
    return texts_in(kind, files.read(path) or b"", record_id)


def texts_in(kind: str, data: bytes, record_id: str) -> list[str]:
    """`texts` of the record `record_id` of `kind` in the file `data` (a SOIL record's or a handoff's own)."""
    if kind == "handoff":
        return handoff_texts(data)
    if kind == "soil":
        try:
            record = orjson.loads(data)
        except orjson.JSONDecodeError:
            return []
    else:
        record = line_with(data, record_id)
    found: list[str] = []

    def walk(value: Any) -> None:
        if isinstance(value, str):
            found.append(value)
        elif isinstance(value, (int, float)) and not isinstance(value, bool):  # a number said something too
            found.append(orjson.dumps(value).decode())
        elif isinstance(value, list):
            for item in value:
                walk(item)
        elif isinstance(value, dict):
            for item in value.values():
                walk(item)

    for key, value in (record if isinstance(record, dict) else {}).items():
        if key not in KEPT and not key.endswith(("_at", "_iso")):
            walk(value)
    return found


def handoff_texts(data: bytes) -> list[str]:
    """A handoff's lines, but its front matter (agent, date, session: kept) and its required sections' headings
    (every handoff has them)."""
    text = data.decode("utf-8", "replace")
    if text.startswith("---"):
        end = text.find(_FRONT_END, 3)
        if end >= 0:
            cut = text.find("\n", end + len(_FRONT_END))
            text = "" if cut < 0 else text[cut + 1:]
    found = []
    for line in text.split("\n"):
        heading = _HEADING.match(line)
        if line.strip() and not (heading and heading.group(1).strip().lower() in HANDOFF_SECTIONS):
            found.append(line)
    return found


def repeated(record_texts: Iterable[str], reason: str) -> bool:
    """Whether `reason` shares text of SHORT characters or more with one of `record_texts` (above).

    A shared run is read from each word of it that is not LITTLE (a counted run begins with one once its
    little words are left out), unless the word before it is one too (then the run was read from there), and
    only as far as it must be: so a reason and a record made of one repeated word cost a pass, not a cube."""
    said = words(reason)
    padded = f" {' '.join(said)} "
    at: dict[str, list[int]] = defaultdict(list)
    for n, word in enumerate(said):
        if word not in LITTLE:
            at[word].append(n)
    for text in record_texts:
        held = words(text)
        if held and sum(map(len, held)) + len(held) - 1 >= SHORT and f" {' '.join(held)} " in padded:
            return True  # a whole text of the record
        for start, word in enumerate(held):
            for other in at.get(word, ()):
                if start and other and held[start - 1] == said[other - 1] and held[start - 1] not in LITTLE:
                    continue  # the same run, read from the word before
                if _counts(held, said, start, other):
                    return True
    return False


def _counts(held: list[str], said: list[str], start: int, other: int) -> bool:
    """Whether the run `held` and `said` share from `held[start]` (`said[other]`, a word not LITTLE) holds text
    that counts: that word alone when it holds a digit, else with a later word not LITTLE, SHORT characters
    or more from the one to the other."""
    chars = len(held[start])
    if chars >= SHORT and any(ch.isdigit() for ch in held[start]):
        return True
    tail = 0  # the characters of the LITTLE words (and their spaces) since the last word that is not
    step = 1
    while start + step < len(held) and other + step < len(said) and held[start + step] == said[other + step]:
        word = held[start + step]
        if word in LITTLE:
            tail += len(word) + 1
        else:
            chars += tail + len(word) + 1
            tail = 0
            if chars >= SHORT:
                return True
        step += 1
    return False


def repeats(files: Files, kind: str, path: str, record_id: str, reason: str) -> bool:
    """Does `reason` repeat the content of the record `record_id` (of `kind`, in `path`)? A tombstone or a
    receipt stands in for the content: it must not carry it."""
    return repeated(texts(files, kind, path, record_id), reason)
