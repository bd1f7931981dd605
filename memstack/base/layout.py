"""Where each memory file lives (docs/reference.md: store layout): a store-relative path -> what kind of file it is.

The checks ask this module, never a path pattern of their own. A path inside a
layer folder that has the right shape but a bad name (`intake/Alice/...`) is an
I7 problem; one of no known shape (`kb/notes.txt`) is a stray file (I5).
"""

import re
from dataclasses import dataclass
from datetime import date

from memstack.base.names import NAME_RULE, is_name
from memstack.base.patterns import lazy

LAYERS = ("intake", "kb", "store", "handoffs", "identity")
CONFIG = "memstack.yaml"
WILLOW = "willow.md"
DECISIONS = "kb/binder.jsonl"  # the Binder's decisions, edges and filed documents (append-only)
VIEWS = ("knowledge", "jeles_atoms", "opus_atoms", "binder_queue")  # kb/<view>.json
FORGOTTEN_DIR = "kb/forgotten"  # kb/forgotten/<agent>/YYYY-MM.jsonl: tombstones by writer and month (append-only)
ERASURES_LOG = "kb/erasures.jsonl"  # the erasure receipts of `memstack excise` (append-only)
HANDOFF_SECTIONS = ("open threads", "capability table")  # the sections every handoff has (I3), as headed

# Kinds of file. Append-only logs (I1), facts (I2), handoffs (I3), derived (I4), records (I5), identity (I6).
INTAKE, PROMOTIONS, BINDER, TOMBSTONES = "intake", "promotions", "binder", "tombstones"
ERASURES = "erasures"
FACTS, HANDOFF, SOIL, IDENTITY = "facts", "handoff", "soil", "identity"
ANCHOR, WILLOW_KIND, VIEW, CONFIG_KIND = "anchor", "willow", "view", "config"
OTHER, STRAY, BAD_NAME = "other", "stray", "bad-name"
V1_VIEW = "v1-view"  # kb/<view>.json: a view of format 1 (checked as format 1's history; refused in format 2)
BINDER_FILE = "binder-file"  # kb/files/<sha256>[.ext]: a document a human filed in the Binder, never changed
ATTRIBUTES = "attributes"  # the store's .gitattributes: memory files' line endings and merge driver

# Store format 2 (docs/reference.md: store layout): no file in kb/ grows with the whole store.
FORMAT = 2  # the `format:` of memstack.yaml this memstack reads and writes
V1_LEDGER = "kb/promotions.jsonl"  # format 1's one-file ledger (read by `memstack migrate` only)
V1_VIEWS = tuple(f"kb/{view}.json" for view in VIEWS)  # format 1's one-file views
LEDGER_DIR = "kb/promotions"  # kb/promotions/<agent>/YYYY-MM-DD.jsonl: the ledger lines of one intake file's records
FACT_VIEWS = ("knowledge", "jeles_atoms", "opus_atoms")  # kb/<view>/<agent>/YYYY-MM.json, one per fact file
QUEUE_VIEW = "binder_queue"  # kb/binder_queue/<agent>/YYYY-MM-DD.json, one per intake file


def ledger_shard(intake_file: str) -> str:
    """The ledger shard of `intake/<agent>/YYYY-MM-DD.jsonl`: `kb/promotions/<agent>/YYYY-MM-DD.jsonl`."""
    return LEDGER_DIR + intake_file[len("intake"):]


def view_shard(view: str, source_file: str) -> str:
    """A view's shard for the file its entries come from: `kb/<view>/<agent>/YYYY-MM.json` for
    `kb/facts/<agent>/YYYY-MM.jsonl` (a fact view), `kb/binder_queue/<agent>/YYYY-MM-DD.json` for
    `intake/<agent>/YYYY-MM-DD.jsonl` (the Binder queue)."""
    agent, name = source_file.rsplit("/", 2)[-2:]
    return f"kb/{view}/{agent}/{name.removesuffix('.jsonl')}.json"


def tombstone_file(agent: str, month: str) -> str:
    """Where `agent`'s tombstones of month `YYYY-MM` (their `forgotten_at`) are appended."""
    return f"{FORGOTTEN_DIR}/{agent}/{month}.jsonl"


LOGS = (INTAKE, PROMOTIONS, BINDER, TOMBSTONES, ERASURES)
DERIVED = (ANCHOR, WILLOW_KIND, VIEW)


@dataclass(frozen=True)
class Place:
    kind: str
    agent: str = ""
    date: str = ""  # YYYY-MM-DD (intake, handoff) or YYYY-MM (facts, tombstones)
    collection: str = ""
    key: str = ""
    problem: str = ""  # for BAD_NAME and STRAY: what is wrong with the path

    @property
    def memory(self) -> bool:
        """A file memstack owns: UTF-8 text ending in a newline (I7)."""
        return self.kind not in (OTHER, STRAY, BAD_NAME)


_N = r"[^/]+"  # a name, checked separately so a bad one is reported as such
_SHAPES: tuple[tuple[str, re.Pattern[str]], ...] = tuple((kind, lazy(pattern)) for kind, pattern in (
    (INTAKE, rf"intake/(?P<agent>{_N})/(?P<date>\d{{4}}-\d{{2}}-\d{{2}})\.jsonl"),
    (PROMOTIONS, rf"kb/promotions/(?P<agent>{_N})/(?P<date>\d{{4}}-\d{{2}}-\d{{2}})\.jsonl"),
    (PROMOTIONS, re.escape(V1_LEDGER)),  # an append-only log until `memstack migrate` moves it to the shards
    (BINDER, r"kb/binder\.jsonl"),
    (ERASURES, re.escape(ERASURES_LOG)),
    (V1_VIEW, rf"kb/(?:{'|'.join(VIEWS)})\.json"),
    (TOMBSTONES, rf"kb/forgotten/(?P<agent>{_N})/(?P<date>\d{{4}}-\d{{2}})\.jsonl"),
    (BINDER_FILE, r"kb/files/[0-9a-f]{64}(?:\.[a-z0-9]{1,16})?"),
    (VIEW, rf"kb/(?:{'|'.join(FACT_VIEWS)})/(?P<agent>{_N})/(?P<date>\d{{4}}-\d{{2}})\.json"),
    (VIEW, rf"kb/{QUEUE_VIEW}/(?P<agent>{_N})/(?P<date>\d{{4}}-\d{{2}}-\d{{2}})\.json"),
    (FACTS, rf"kb/facts/(?P<agent>{_N})/(?P<date>\d{{4}}-\d{{2}})\.jsonl"),
    (SOIL, rf"store/(?P<collection>{_N})/(?P<key>{_N})\.json"),
    (HANDOFF, rf"handoffs/(?P<agent>{_N})/session_handoff-(?P<date>\d{{4}}-\d{{2}}-\d{{2}})_(?P=agent)"
              r"(?:-\d+)?\.md"),
    (BAD_NAME, r"handoffs/[^/]+/session_handoff-[^/]*\.md"),
    (IDENTITY, rf"identity/(?P<agent>{_N})\.md"),
    (ANCHOR, rf"session_anchor_(?P<agent>{_N})\.json"),
    (WILLOW_KIND, re.escape(WILLOW)),
    (CONFIG_KIND, re.escape(CONFIG)),
    (ATTRIBUTES, re.escape(".gitattributes")),
))


def _real_date(text: str) -> bool:
    try:
        date.fromisoformat(text if len(text) == 10 else f"{text}-01")
    except ValueError:
        return False
    return True


def _name_problem(match: re.Match[str]) -> str:
    groups = match.groupdict()
    for field in ("agent", "collection", "key"):
        value = groups.get(field)
        if value is not None and not is_name(value):
            return f"{field} {value!r} in the path is not a valid name ({NAME_RULE}, no '..')"
    if groups.get("date") and not _real_date(groups["date"]):
        return f"{groups['date']!r} in the path is not a calendar date"
    return ""


def classify(path: str) -> Place:
    for kind, shape in _SHAPES:
        match = shape.fullmatch(path)
        if match:
            problem = _name_problem(match) if kind != BAD_NAME else (
                "a handoff's name must be session_handoff-YYYY-MM-DD_<agent>[-N].md, <agent> its folder's")
            if problem:
                return Place(BAD_NAME, problem=problem)
            groups = {k: v for k, v in match.groupdict().items() if k in ("agent", "date", "collection", "key") and v}
            return Place(kind, **groups)
    top = path.split("/", 1)[0]
    if top in LAYERS:
        return Place(STRAY, problem=f"is not a memory file of the {top}/ layer")
    return Place(OTHER)


def expected_shape(path: str) -> str:
    """What a file in the layer folder of `path` must look like (for a stray file's fix)."""
    return {
        "intake": "intake/<agent>/YYYY-MM-DD.jsonl",
        "kb": "kb/facts/<agent>/YYYY-MM.jsonl, kb/promotions/<agent>/YYYY-MM-DD.jsonl, kb/binder.jsonl,"
              " kb/<view>/<agent>/YYYY-MM.json, kb/binder_queue/<agent>/YYYY-MM-DD.json,"
              " kb/forgotten/<agent>/YYYY-MM.jsonl"
              " or kb/files/<sha256>[.ext] (`memstack binder file`)",
        "store": "store/<collection>/<key>.json",
        "handoffs": "handoffs/<agent>/session_handoff-YYYY-MM-DD_<agent>[-N].md",
        "identity": "identity/<agent>.md",
    }.get(path.split("/", 1)[0], "a path of memstack's store layout")
