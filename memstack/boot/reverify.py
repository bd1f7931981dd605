"""The facts willow.md asks to re-verify: the open facts (forgotten ones left out) whose code anchors' lines
are no longer at their path in the code of the very state willow.md is built from (a commit, the index, or
the work tree, whose code is read as the index stages it: repo/sources.py). A function of that state alone,
so the hooks, `check --range` and pre-receive rebuild it alike (docs/anchors.md).

For each anchor (a re-checked fact's as its latest `anchors reverify` took them): the file at its path holds
when its blob is the anchored one, or when a run of as many lines there has the anchored lines' hash (the
lines shifted); a whole-file anchor holds when the file's hash is the same. Else the file is there but the
lines are not (`drifted`), or no text file is at the path (`gone`: moved or deleted, or a symbolic link or
binary file now; `memstack anchors` tells which, following renames, which a state alone cannot).

Cost: the fact files are named with their blob ids (one `git ls-files`/`ls-tree`); what each blob holds of
anchored open facts, and whether an anchor holds in a code file of a given blob, are kept by those ids in
`.memstack/boot/anchored.json` (content-keyed: never wrong; a bare repository just reads). A fact file not
known is read and only its lines that hold anchors are parsed; only code files whose blob is neither the
anchored one nor known are read.
"""

import re
from collections.abc import Mapping
from typing import Any

from memstack.base import codelines, config, jsonio
from memstack.base.forgotten import Forgotten
from memstack.base.layout import CONFIG, DECISIONS
from memstack.base.output import shown
from memstack.base.patterns import lazy
from memstack.boot.kept import KeptFile
from memstack.repo.sources import Source

FACTS_DIR = "kb/facts"
KEY = b'"anchors"'
SHOWN = 50  # the most facts willow.md lists; the rest are counted
CACHE = "anchored.json"
HEADING = "## To re-verify"
INTRO = ("Facts whose anchored lines were no longer at their place in the code when this file was built: check",
         "each against the code (`memstack anchors` shows the change), then `memstack anchors reverify ID --by",
         "NAME` if it still holds, or capture what holds now with `memstack capture --contradicts`.")
MORE = "run `memstack anchors --status drifted`"
_ENTRY = lazy(r"^- (drifted|gone): (.*)$")
_TAG = lazy(r"\(fact `([^`]+)`\): ")
_COUNTED = lazy(r"^[1-9][0-9]* more: " + re.escape(MORE) + "$")


def _anchored_lines(data: bytes, relpath: str) -> list[dict[str, Any]]:
    """The open facts with anchors of a fact file's bytes (only the lines that hold anchors are parsed)."""
    return [f for f in jsonio.records_holding(data, KEY, relpath) if f.get("anchors") and f.get("valid_to") is None
            and f.get("expired_at") is None]


class Kept:
    """`.memstack/boot/anchored.json` (per clone, never committed; none in a bare repository), keyed by content
    so it is never wrong: each fact file's anchored open facts by the file's blob id (`facts`), and whether
    an anchor holds in a file by the anchor's lines and the file's blob id (`found`). What a build did not
    use is let go when it is saved."""

    def __init__(self, source: Source) -> None:
        self.file = KeptFile(source, CACHE)
        self.facts: dict[str, Any] = self.file.held.get("facts", {})
        self.found: dict[str, Any] = self.file.held.get("found", {})
        self.used: dict[str, dict[str, Any]] = {"facts": {}, "found": {}}

    def save(self) -> None:
        self.file.save(self.used, {"facts": self.facts, "found": self.found})


def _slim(fact: dict[str, Any]) -> dict[str, Any]:
    """What the section needs of a fact (kept in the cache: a tenth of the record)."""
    return {"id": fact["id"], "subject": fact.get("subject"), "predicate": fact.get("predicate"),
            "object": fact.get("object"), "recorded_at": fact.get("recorded_at", 0),
            "anchors": [{k: a.get(k) for k in ("path", "start", "end", "blob", "lines_sha256")}
                        for a in fact["anchors"] if isinstance(a, dict)]}


def anchored_open(source: Source, kept: Kept | None = None) -> list[dict[str, Any]]:
    """Every open fact with code anchors, file by file (what the section needs of each: `_slim`)."""
    kept = kept if kept is not None else Kept(source)
    found: list[dict[str, Any]] = []
    for relpath, sha in source.blob_ids(FACTS_DIR).items():
        if not relpath.endswith(".jsonl"):
            continue
        facts = kept.facts.get(sha)
        if not isinstance(facts, list):
            facts = [_slim(f) for f in _anchored_lines(source.read(relpath) or b"", relpath)]
        kept.used["facts"][sha] = facts
        found += facts
    return found


def _standalone(source: Source) -> bool:
    """Whether memstack.yaml names another code repository (`code.repo`): its code is not in this state."""
    data = source.read(CONFIG) or b""
    if b"repo" not in data:
        return False
    document = config.parse(data.decode("utf-8"), CONFIG)
    code = document.get("code") if isinstance(document, dict) else None
    return isinstance(code, dict) and code.get("repo") is not None


def _rechecks(source: Source) -> dict[str, list[dict[str, Any]]]:
    """The anchors of each fact's latest re-check (`anchors reverify`), by fact id."""
    data = source.read(DECISIONS) or b""
    if b'"reverify"' not in data:
        return {}
    return {line["reverified"]: line["anchors"] for line in jsonio.iter_jsonl(data, DECISIONS)
            if line.get("kind") == "reverify" and isinstance(line.get("reverified"), str)
            and isinstance(line.get("anchors"), list)}


class Texts:
    """The code files read, by blob id: each one's lines normalised, and the hashes of its runs of lines by
    their length, made once however many anchors point into it."""

    def __init__(self, data: dict[str, bytes]) -> None:
        self.data = data
        self._keys: dict[str, list[str] | None] = {}
        self._runs: dict[tuple[str, int], set[str]] = {}

    def keys(self, blob: str) -> list[str] | None:
        if blob not in self._keys:
            data = self.data.get(blob)
            lines = None if data is None else codelines.text_lines(data)
            self._keys[blob] = None if lines is None else [codelines.normalised(line) for line in lines]
        return self._keys[blob]

    def status(self, anchor: dict[str, Any], blob: str | None) -> str:
        """`holds`, `drifted` or `gone`: the anchor against the file of blob `blob` at its path (None: none)."""
        keys = None if blob is None else self.keys(blob)
        if blob is None or keys is None:
            return "gone"  # no file, or no text file (binary)
        start, end = anchor.get("start"), anchor.get("end")
        if start is None or end is None:
            return "holds" if codelines.sha256(keys) == anchor["lines_sha256"] else "drifted"
        count = end - start + 1
        if (blob, count) not in self._runs:
            self._runs[(blob, count)] = codelines.runs(keys, count)
        return "holds" if anchor["lines_sha256"] in self._runs[(blob, count)] else "drifted"


def to_reverify(source: Source, forgotten: Forgotten) -> tuple[list[dict[str, Any]], int] | None:
    """The facts to re-verify, most recently recorded first (at most SHOWN), each with its `status` (gone
    when an anchor is gone, else drifted) and its `stale` anchors, and how many there are in all; None when
    the code is not in this state (a store that is a repository of its own, or that names one)."""
    if source.code(()) is None:  # a store that is a repository of its own: no code in this state
        return None
    kept = Kept(source)
    facts = [f for f in anchored_open(source, kept) if f["id"] not in forgotten]
    if facts and _standalone(source):
        return None
    checked = _rechecks(source) if facts else {}
    anchors = {f["id"]: checked.get(f["id"], f["anchors"]) for f in facts}
    paths = {a["path"] for listed in anchors.values() for a in listed if isinstance(a, dict)}
    code = source.code(paths) or {}
    said: dict[str, str] = {}  # an anchor's status, by its lines and the file's blob now
    for listed in anchors.values():
        for anchor in listed:
            blob = code.get(anchor["path"])
            key = f"{anchor['lines_sha256']}:{anchor['start']}-{anchor['end']}:{blob}"
            if blob is None or blob == anchor.get("blob"):
                said[key] = "gone" if blob is None else "holds"
            elif isinstance(kept.found.get(key), str):
                said[key] = kept.used["found"][key] = kept.found[key]
    unknown = {code[a["path"]] for listed in anchors.values() for a in listed
               if f"{a['lines_sha256']}:{a['start']}-{a['end']}:{code.get(a['path'])}" not in said}
    texts = Texts(source.code_blobs(unknown))
    found = []
    for fact in facts:
        stale = []
        for anchor in anchors[fact["id"]]:
            blob = code.get(anchor["path"])
            key = f"{anchor['lines_sha256']}:{anchor['start']}-{anchor['end']}:{blob}"
            if key not in said:
                said[key] = kept.used["found"][key] = texts.status(anchor, blob)
            if said[key] != "holds":
                stale.append({**anchor, "status": said[key]})
        if stale:
            worst = "gone" if any(a["status"] == "gone" for a in stale) else "drifted"
            found.append({**fact, "status": worst, "stale": stale})
    kept.save()
    found.sort(key=lambda f: (-int(f.get("recorded_at", 0)), str(f["id"])))
    return found[:SHOWN], len(found)


def place(anchor: dict[str, Any]) -> str:
    start, end = anchor.get("start"), anchor.get("end")
    return anchor["path"] if start is None else f"{anchor['path']}:{start}" if start == end \
        else f"{anchor['path']}:{start}-{end}"


def render(listed: list[dict[str, Any]], count: int) -> list[str]:
    """The section's lines (none when nothing is to be re-verified: willow.md is then as it always was)."""
    if not count:
        return []
    out = [HEADING, "", *INTRO, ""]
    for fact in listed:
        where = ", ".join(f"`{shown(place(a))}` " + ("changed" if a["status"] == "drifted" else
                                               "not at its path: moved or deleted; `memstack anchors` tells which")
                          for a in fact["stale"])
        out.append(f"- {fact['status']}: {entry_head(fact)}: {where}")
    if count > len(listed):
        out.append(f"{count - len(listed)} more: {MORE}")
    return out + [""]

def entry_head(fact: Mapping[str, Any]) -> str:
    """What an entry says of its fact: its triple and id (excision.py marks an excised fact's triple in it), on
    one line (control characters escaped)."""
    return f"**{shown(fact['subject'])}** {shown(fact['predicate'])} {shown(fact['object'])} (fact `{fact['id']}`)"



def _split(text: str) -> tuple[str, list[str]]:
    """willow.md's text without its To re-verify section, and that section's lines."""
    lines = text.split("\n")
    if HEADING not in lines:
        return text, []
    start = lines.index(HEADING)
    end = next((i for i in range(start + 1, len(lines)) if lines[i].startswith("## ")), len(lines))
    return "\n".join(lines[:start] + lines[end:]), lines[start:end]


def lags(actual: bytes, built: bytes, source: Source) -> bool:
    """Whether willow.md's bytes `actual` differ from the rebuild `built` only in the To re-verify section, and
    that section lists only open anchored facts of this state (not forgotten), each by the very triple and id
    a rebuild names it by: a section built against other code, which a rebase or a merge brought in with no
    change to the store. It lags as derived files may (`memstack rebuild` refreshes it); nothing in it is
    made up, and nothing forgotten is kept."""
    try:
        rest, section = _split(actual.decode("utf-8"))
    except UnicodeDecodeError:
        return False
    if rest != _split(built.decode("utf-8"))[0]:
        return False
    forgotten = Forgotten.of(source)
    facts = {f["id"]: f for f in anchored_open(source) if f["id"] not in forgotten}
    fixed = {HEADING, "", *INTRO}
    for line in section:
        entry = _ENTRY.match(line)
        if entry is None:
            if line not in fixed and _COUNTED.match(line) is None:
                return False
            continue
        named = [facts[i] for i in _TAG.findall(entry.group(2)) if i in facts]
        if not any(entry.group(2).startswith(entry_head(f) + ": `") for f in named):
            return False
    return True
