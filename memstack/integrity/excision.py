"""What `memstack excise` does to one blob (docs/forgetting.md, "Excise"): the transform T.

T is a pure function of a blob's path and bytes, the excised records (`Excised`) and a marker: every
content field of an excised record (everything outside `forgotten.KEPT` and the times) becomes
`[excised sha256:<hex>]` (the sha256 of a salt and the value; a list or a dict is emptied), in the file
where the record lives (an intake or fact line, a SOIL record, a sealed handoff's body) and in the derived
files that copy it (the view shards, the boot anchors, willow.md), the latter as their builders would
make them from the excised sources, so a commit whose derived files were fresh stays fresh.

The server has no salt: it runs the same T with every marker normalised (`Marker(None)`) and compares
with the pushed blob normalised (`normalise`). So T must depend on nothing but what the old history and
the receipt tell: the records' ids and paths, and the excised facts' old content (for willow.md's lines).
A value that is already a marker (an earlier excise) is left as it is.
"""

import hashlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

import orjson

from memstack.base import ids, jsonio, layout
from memstack.base.forgotten import KEPT, Files, find, line_with
from memstack.base.layout import HANDOFF_SECTIONS
from memstack.base.patterns import lazy
from memstack.base.times import day, iso, month
from memstack.boot import reverify
from memstack.kb import views

MARK = lazy(r"\[excised sha256:[0-9a-f]{64}\]")
MARK_BYTES = lazy(rb"\[excised sha256:[0-9a-f]{64}\]")
NORMAL = b"[excised sha256:" + b"0" * 64 + b"]"


class Marker:
    """A value's marker: `[excised sha256:<hex of sha256(salt + value)>]`; with no salt (the server's
    verification), every marker is the normalised one."""

    def __init__(self, salt: bytes | None) -> None:
        self.salt = salt

    def __call__(self, value: str) -> str:
        if MARK.fullmatch(value):
            return value
        if self.salt is None:
            return NORMAL.decode()
        return f"[excised sha256:{hashlib.sha256(self.salt + value.encode()).hexdigest()}]"


def normalise(data: bytes) -> bytes:
    """`data` with every marker's hash made zeros."""
    return MARK_BYTES.sub(NORMAL, data)


def comparable(path: str, data: bytes) -> bytes:
    """What the server compares of a blob T changed: its markers normalised and, in a JSON file (a view, a
    boot anchor, a SOIL record), its lists and objects taken as unordered, since their builders sort by
    values a marker replaced (a view by subject, an anchor's keys) and the order follows the salt."""
    if not path.endswith(".json"):
        return normalise(data)
    try:
        value = orjson.loads(data)
    except orjson.JSONDecodeError:
        return normalise(data)

    def canon(item: Any) -> Any:
        if isinstance(item, str):
            return NORMAL.decode() if MARK.fullmatch(item) else normalise(item.encode()).decode()
        if isinstance(item, dict):
            return {"{}": sorted(([canon(k), canon(v)] for k, v in item.items()), key=orjson.dumps)}
        if isinstance(item, list):
            return sorted((canon(i) for i in item), key=orjson.dumps)
        return item

    return orjson.dumps(canon(value))


@dataclass
class Excised:
    """The records an excise removes: intake and fact ids, SOIL records' paths, handoffs' paths, and the
    excised facts' old content (subject, predicate, object, valid_from: the lines willow.md renders)."""

    ids: frozenset[str] = frozenset()
    soil: frozenset[str] = frozenset()  # store/<collection>/<key>.json
    handoffs: frozenset[str] = frozenset()
    facts: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)

    @property
    def needles(self) -> list[bytes]:
        """Bytes one of which a blob T changes holds (a cheap filter before parsing)."""
        return [i.encode() for i in self.ids] + [h.encode() for h in self.handoffs]

    @cached_property
    def willow_needles(self) -> list[bytes]:
        """The same for willow.md, which names a fact by its line, not its id: the excised facts' lines and
        the handoffs' paths."""
        return [_fact_line(f).encode() for f in self.facts.values()] + [h.encode() for h in self.handoffs] \
            + [reverify.entry_head(f).encode() for f in self.facts.values()]

    @cached_property
    def periods(self) -> frozenset[str] | None:
        """The days and months of the excised ids (an id is bound to its file's day or month: base/ids.py);
        None when an id has no time in it (a store's older ids): then every file is looked at."""
        found: set[str] = set()
        for record_id in self.ids:
            match = ids.ID.match(record_id)
            if match is None:
                return None
            ms = int(match.group(1), 16)
            found |= {day(ms), month(ms)}
        return frozenset(found)

    def may_change(self, path: str) -> bool:
        """Whether T may change a blob at `path` (asked before its bytes are read)."""
        place = layout.classify(path)
        if place.kind == layout.SOIL:
            return path in self.soil
        if place.kind == layout.HANDOFF:
            return path in self.handoffs
        if place.kind in (layout.ANCHOR, layout.WILLOW_KIND):
            return bool(self.ids or self.handoffs)
        if place.kind in (layout.INTAKE, layout.FACTS, layout.VIEW):
            return bool(self.ids) and (self.periods is None or place.date in self.periods)
        return False


def soil_path(name: str) -> str:
    """A SOIL record's file from the `collection/key` a tombstone and a receipt name it by."""
    return f"store/{name}.json"


def gather(sources: list[Files], records: list[str]) -> Excised:
    """The `Excised` of `records` (as tombstones and receipts name them), read from `sources` (the branch
    heads before the rewrite: a record lives on in every later commit, facts are never removed)."""
    ids, soil, handoffs, facts = set(), set(), set(), {}
    for name in records:
        if name.startswith("handoffs/"):
            handoffs.add(name)
        elif name.count("/") == 1:
            soil.add(soil_path(name))
        else:
            ids.add(name)
            for files in sources:
                where = find(files, name)
                if where is not None and where[0] == "fact":
                    fact = line_with(files.read(where[1]) or b"", name)
                    if fact is not None:
                        facts[name] = fact
                        break
    return Excised(frozenset(ids), frozenset(soil), frozenset(handoffs), facts)


# Kept as well when excised: what points elsewhere, not what the record said, and whose schema an emptied
# list or a marker would break (code anchors: minItems 1; the facts a fact supersedes and the intake record a
# SOIL record became: ids by pattern).
EXCISE_KEPT = KEPT | {"anchors", "supersedes", "graduated_to"}


def excised_record(record: Mapping[str, Any], mark: Marker) -> dict[str, Any]:
    """The record with its content fields marked: KEPT fields (and EXCISE_KEPT), times and nulls as they are,
    a string the marker, a list or dict emptied, any other value the marker of its JSON text."""
    out: dict[str, Any] = {}
    for key, value in record.items():
        if key in EXCISE_KEPT or key.endswith(("_at", "_iso")) or value is None:
            out[key] = value
        elif isinstance(value, str):
            out[key] = mark(value)
        elif isinstance(value, list):
            out[key] = []
        elif isinstance(value, dict):
            out[key] = {}
        else:
            out[key] = mark(orjson.dumps(value).decode())
    return out


def transform(path: str, data: bytes, excised: Excised, mark: Marker) -> bytes | None:
    """T of the blob `data` at store-relative `path`: its new bytes, or None when T leaves it as it is."""
    if not excised.may_change(path):
        return None
    kind = layout.classify(path).kind
    if kind == layout.SOIL:
        return _soil(data, mark)
    if kind == layout.HANDOFF:
        return _handoff(data, mark)
    needles = excised.willow_needles if kind == layout.WILLOW_KIND else excised.needles
    if not any(needle in data for needle in needles):
        return None
    try:
        if kind in (layout.INTAKE, layout.FACTS):
            return _lines(data, excised, mark)
        if kind == layout.VIEW:
            return _view(path, data, excised, mark)
        if kind == layout.ANCHOR:
            return _anchor(data, excised, mark)
        if kind == layout.WILLOW_KIND:
            return _willow(data, excised, mark)
    except (orjson.JSONDecodeError, UnicodeDecodeError, TypeError, KeyError):
        return None  # a broken file is not a copy memstack made; `memstack check` names it
    return None


def _changed(new: bytes, old: bytes) -> bytes | None:
    return None if new == old else new


def _soil(data: bytes, mark: Marker) -> bytes | None:
    try:
        record = orjson.loads(data)
    except orjson.JSONDecodeError:
        return None
    if not isinstance(record, dict):
        return None
    return _changed(jsonio.dumps_pretty(excised_record(record, mark)), data)


def _lines(data: bytes, excised: Excised, mark: Marker) -> bytes | None:
    out = []
    for raw in data.splitlines(keepends=True):
        body = raw.rstrip(b"\r\n")
        if any(needle in body for needle in excised.needles):
            record = orjson.loads(body)
            if isinstance(record, dict) and record.get("id") in excised.ids:
                raw = jsonio.dumps_line(excised_record(record, mark)).rstrip(b"\n") + raw[len(body):]
        out.append(raw)
    return _changed(b"".join(out), data)


def _view(path: str, data: bytes, excised: Excised, mark: Marker) -> bytes | None:
    entries = views.parse(data)
    if not any(entry.get("id") in excised.ids for entry in entries):
        return None
    entries = [excised_record(e, mark) if e.get("id") in excised.ids else e for e in entries]
    order: Callable[[dict[str, Any]], Any] = views.queue_order if path.startswith(f"kb/{layout.QUEUE_VIEW}/") \
        else views.fact_order
    return _changed(views.render([views.line(e) for e in sorted(entries, key=order)]) or b"", data)


def _anchor(data: bytes, excised: Excised, mark: Marker) -> bytes | None:
    anchor = orjson.loads(data)
    if not isinstance(anchor, dict):
        return None
    anchor["knowledge"] = [excised_record(f, mark) if isinstance(f, dict) and f.get("id") in excised.ids else f
                           for f in anchor.get("knowledge") or []]
    if anchor.get("handoff") in excised.handoffs:
        anchor["open_threads"] = [mark(t) for t in anchor.get("open_threads") or []]
        anchor["capabilities"] = [{mark(k): mark(v) if v else v for k, v in row.items()}
                                  for row in anchor.get("capabilities") or []]
    return _changed(jsonio.dumps_pretty(anchor), data)


_ITEM = lazy(r"^(\s*(?:[-*+]|\d+[.)])\s+)(.*\S)(\s*)$")
_HEADING = lazy(r"^(#{1,6}[ \t]+)(.*?\S)([ \t]*#*[ \t]*)$")
_SEPARATOR = lazy(r"^\s*\|?\s*:?-{3,}:?\s*(\|\s*:?-{3,}:?\s*)*\|?\s*$")
_FRONT_END = "\n---"


def _row(line: str, mark: Marker) -> str:
    cells = line.strip().strip("|").split("|")
    return "| " + " | ".join(mark(c.strip()) if c.strip() else "" for c in cells) + " |"


def _text_line(line: str, mark: Marker) -> str:
    if not line.strip() or _SEPARATOR.match(line):
        return line
    heading = _HEADING.match(line)
    if heading:
        if heading.group(2).strip().lower() in HANDOFF_SECTIONS:  # they stay (I3: still complete)
            return line
        return heading.group(1) + mark(heading.group(2)) + heading.group(3)
    if line.lstrip().startswith("|"):
        return _row(line, mark)
    item = _ITEM.match(line)
    if item:
        return item.group(1) + mark(item.group(2)) + item.group(3)
    return line[:len(line) - len(line.lstrip())] + mark(line.strip())


def _handoff(data: bytes, mark: Marker) -> bytes | None:
    """A sealed handoff: its front matter kept, every other line's text marked; the required sections'
    headings and the tables' shape stay, so the excised handoff is still complete (I3)."""
    text = data.decode()
    front, body = "", text
    if text.startswith("---"):
        end = text.find(_FRONT_END, 3)
        if end >= 0:
            cut = text.find("\n", end + len(_FRONT_END))
            cut = len(text) if cut < 0 else cut + 1
            front, body = text[:cut], text[cut:]
    lines = body.split("\n")
    return _changed((front + "\n".join(_text_line(line, mark) for line in lines)).encode(), data)


def _fact_line(fact: Mapping[str, Any]) -> str:
    return f"- **{fact['subject']}** {fact['predicate']} {fact['object']} (since {iso(fact['valid_from'])})"


def _willow(data: bytes, excised: Excised, mark: Marker) -> bytes | None:
    """willow.md: the excised facts' lines, and the open threads and capability rows of an agent section
    whose latest handoff is excised, as the boot builder renders them from the excised sources."""
    facts = {_fact_line(f): _fact_line(excised_record(f, mark)) for f in excised.facts.values()}
    # A fact listed To re-verify (it keeps its anchors) is named by its triple and id, marked alike.
    heads = {reverify.entry_head(f): reverify.entry_head(excised_record(f, mark)) for f in excised.facts.values()}
    out, in_excised, section = [], False, ""
    for line in data.decode().split("\n"):
        if line.startswith("## "):
            in_excised, section = False, ""
        elif line.startswith("Latest handoff: `"):
            in_excised = line.split("`")[1] in excised.handoffs
        elif line.startswith("### "):
            section = line[4:].strip()
        elif line in facts:
            line = facts[line]
        elif line.startswith(("- drifted: ", "- gone: ")) and section == "" and not in_excised:
            line = next((line.replace(head, marked, 1) for head, marked in heads.items() if head in line), line)
        elif in_excised and section == "Open threads" and line.startswith("- "):
            line = "- " + mark(line[2:])
        elif in_excised and section == "Capabilities" and line.startswith("|") and not _SEPARATOR.match(line):
            line = _row(line, mark)
        out.append(line)
    return _changed("\n".join(out).encode(), data)
