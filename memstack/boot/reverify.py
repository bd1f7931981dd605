"""The facts willow.md asks to re-verify: the open facts (forgotten ones left out) whose code anchors' lines
are no longer at their path in the code of the very state willow.md is built from (a commit, the index, or
the work tree, whose code is read as the index stages it: repo/sources.py). A function of that state alone,
so the hooks, `check --range` and pre-receive rebuild it alike (docs/anchors.md).

For each anchor (a re-checked fact's as its latest `anchors reverify` took them): the file at its path holds
when its blob is the anchored one, or when a run of as many lines there has the anchored lines' hash (the
lines shifted); a whole-file anchor holds when the file's hash is the same. Else the file is there but the
lines are not (`drifted`), or no text file is at the path (`gone`: moved or deleted, or a symbolic link or
binary file now; `memstack anchors` tells which, following renames, which a state alone cannot).

Cost: the fact files are named with their blob ids (one `git ls-files`/`ls-tree`), and what each blob holds
of anchored open facts is kept by blob id in `.memstack/boot/anchored.json` (content-keyed: never wrong; a
bare repository just reads); a blob not known is read and only its lines that hold anchors are parsed.
"""

import re
from collections.abc import Mapping
from typing import Any

import orjson

from memstack.base import codelines, config, files, jsonio
from memstack.base.forgotten import Forgotten
from memstack.base.layout import CONFIG, DECISIONS
from memstack.repo.objects import blob_id
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
_ENTRY = re.compile(r"^- (drifted|gone): (.*)$")
_TAG = re.compile(r"\(fact `([^`]+)`\): ")
_COUNTED = re.compile(r"^[1-9][0-9]* more: " + re.escape(MORE) + "$")


def _anchored_lines(data: bytes, relpath: str) -> list[dict[str, Any]]:
    """The open facts with anchors of a fact file's bytes (only the lines that hold anchors are parsed)."""
    if KEY not in data:
        return []
    found = [jsonio.loads(line, relpath) for line in data.splitlines() if KEY in line]
    return [f for f in found if isinstance(f, dict) and f.get("anchors") and f.get("valid_to") is None
            and f.get("expired_at") is None]


def anchored_open(source: Source) -> list[dict[str, Any]]:
    """Every open fact with code anchors, file by file."""
    folder = source.cache_dir()
    path = None if folder is None else files.local_dir(folder, "boot") / CACHE
    kept: dict[str, Any] = {}
    if path is not None:
        try:
            loaded = orjson.loads(path.read_bytes())
            kept = loaded if isinstance(loaded, dict) else {}
        except (FileNotFoundError, orjson.JSONDecodeError):
            kept = {}
    now: dict[str, Any] = {}
    found: list[dict[str, Any]] = []
    for relpath, sha in source.blob_ids(FACTS_DIR).items():
        if not relpath.endswith(".jsonl"):
            continue
        facts = kept.get(sha)
        if not isinstance(facts, list):
            facts = _anchored_lines(source.read(relpath) or b"", relpath)
        now[sha] = facts
        found += facts
    if path is not None and now != kept:
        files.write_atomic(path, orjson.dumps(now))
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


def status(anchor: dict[str, Any], data: bytes | None) -> str:
    """`holds`, `drifted` or `gone`: the anchor against the bytes at its path (None: no file there)."""
    if data is None:
        return "gone"
    lines = codelines.text_lines(data)
    if lines is None:
        return "gone"
    start, end = anchor.get("start"), anchor.get("end")
    if start is None or end is None:
        return "holds" if codelines.sha256(lines) == anchor["lines_sha256"] else "drifted"
    keys = [codelines.normalised(line) for line in lines]
    found = codelines.find(keys, anchor["lines_sha256"], end - start + 1, start)
    return "holds" if found is not None else "drifted"


def to_reverify(source: Source, forgotten: Forgotten) -> tuple[list[dict[str, Any]], int] | None:
    """The facts to re-verify, most recently recorded first (at most SHOWN), each with its `status` (gone
    when an anchor is gone, else drifted) and its `stale` anchors, and how many there are in all; None when
    the code is not in this state (a store that is a repository of its own, or that names one)."""
    facts = [f for f in anchored_open(source) if f["id"] not in forgotten]
    if not facts:
        return [], 0
    if _standalone(source):
        return None
    checked = _rechecks(source)
    anchors = {f["id"]: checked.get(f["id"], f["anchors"]) for f in facts}
    paths = {a["path"] for listed in anchors.values() for a in listed if isinstance(a, dict)}
    code = source.code(paths)
    if code is None:
        return None
    blobs: dict[str, str] = {}
    found = []
    for fact in facts:
        stale = []
        for anchor in anchors[fact["id"]]:
            data = code.get(anchor["path"])
            if data is not None and anchor.get("blob") == blobs.setdefault(anchor["path"], _blob(data, anchor)):
                continue
            said = status(anchor, data)
            if said != "holds":
                stale.append({**anchor, "status": said})
        if stale:
            worst = "gone" if any(a["status"] == "gone" for a in stale) else "drifted"
            found.append({**fact, "status": worst, "stale": stale})
    found.sort(key=lambda f: (-int(f.get("recorded_at", 0)), str(f["id"])))
    return found[:SHOWN], len(found)


def _blob(data: bytes, anchor: dict[str, Any]) -> str:
    return blob_id(data, str(anchor.get("blob") or "0" * 40))


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
        where = ", ".join(f"`{place(a)}` " + ("changed" if a["status"] == "drifted" else
                                               "not at its path: moved or deleted; `memstack anchors` tells which")
                          for a in fact["stale"])
        out.append(f"- {fact['status']}: {entry_head(fact)}: {where}")
    if count > len(listed):
        out.append(f"{count - len(listed)} more: {MORE}")
    return out + [""]

def entry_head(fact: Mapping[str, Any]) -> str:
    """What an entry says of its fact: its triple and id (excision.py marks an excised fact's triple in it)."""
    return f"**{fact['subject']}** {fact['predicate']} {fact['object']} (fact `{fact['id']}`)"



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
