"""L2 intake: the append-only staging log, `intake/<agent>/YYYY-MM-DD.jsonl`."""

import math
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from memstack.base import clock, ids, jsonio, ledger, limits, schemas
from memstack.base.errors import bad
from memstack.base.files import append_line
from memstack.base.logfiles import read_jsonl
from memstack.base.names import check_name
from memstack.base.shown import Shown
from memstack.base.times import day, iso, parse_ts

TIERS = ("observed", "fetched", "verified", "ratified")  # every tier a record or a fact may hold
WRITABLE_TIERS = TIERS[:3]  # what a writer may give: "ratified" is a person's, made only by a Binder ratification
RATIFIED_BY_BINDER = ("only a person's Binder ratification makes a record ratified (`{verb:memstack binder ratify ID}`"
                      " on a record waiting in the Binder): write it at {tiers}")


def refuse_ratified(tier: Any) -> None:
    """A writer claiming tier "ratified" (intake write, soil graduate, nest, their tools) is refused."""
    if tier == "ratified":
        raise bad("tier", repr(tier), RATIFIED_BY_BINDER, tiers=", ".join(WRITABLE_TIERS))


def check_confidence(value: Any, field: str = "confidence") -> float:
    if isinstance(value, str):
        try:
            value = float(value)
        except ValueError:
            raise bad(field, repr(value), "must be a finite number in [0, 1]") from None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) \
            or not 0 <= value <= 1:
        raise bad(field, repr(value), "must be a finite number in [0, 1]")
    return float(value)


def make_record(*, agent: str, content: str, created_at: Any, title: str = "", source: str = "",
                tier: str = "observed", confidence: Any = 0.5, keywords: Iterable[str] = (),
                tags: Iterable[str] = (), subject: str | None = None, predicate: str | None = None,
                object: str | None = None, relevance_score: Any = None, id: str | None = None,
                anchors: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    """A validated intake record; raises MemstackError naming the first bad field. `id`: one the caller
    derived (bound to `created_at` and `agent` like a fresh one: ids.from_content), else a fresh one."""
    check_name(agent, "agent")
    if not isinstance(content, str) or not content.strip():
        raise bad("content", None, "must be non-empty text")
    refuse_ratified(tier)
    if tier not in WRITABLE_TIERS:
        raise bad("tier", repr(tier), "must be one of {tiers}", tiers=", ".join(WRITABLE_TIERS))
    ms = parse_ts(created_at, "created-at")
    if ms < 0:  # the id and the day file carry it: say so before either is made
        raise bad("created-at", repr(created_at), "a transaction time must lie between 1970-01-01 and 9999-12-31 (UTC)")
    record: dict[str, Any] = {
        "id": id or ids.new_id(ms, agent), "content": content, "title": title, "source": source, "agent": agent,
        "tier": tier, "confidence": check_confidence(confidence), "keywords": list(keywords),
        "tags": list(tags), "created_at": iso(ms),
    }
    triple = {"subject": subject, "predicate": predicate, "object": object}
    given = [k for k, v in triple.items() if v is not None]
    if given and len(given) != 3:
        missing = sorted(set(triple) - set(given))
        raise bad(given[0], None, "{arg:--subject}, {arg:--predicate} and {arg:--object} go together"
                  " (missing {missing})", missing=", ".join(missing))
    for key in given:
        if not str(triple[key]).strip():
            raise bad(key, None, "must be non-empty text")
        record[key] = triple[key]
    if relevance_score is not None:
        record["relevance_score"] = check_confidence(relevance_score, "relevance-score")
    if anchors:
        record["anchors"] = anchors
    schemas.validate("intake", record)
    return record


def relpath_for(record: dict[str, Any]) -> str:
    return f"intake/{record['agent']}/{day(parse_ts(record['created_at'], 'created_at'))}.jsonl"


TEXTS = ("content", "title", "source", "subject", "predicate", "object")  # a record's texts, as limits weigh them


def write(store: Path, record: dict[str, Any]) -> str:
    """Append one record to its agent's day file; returns the store-relative path."""
    for field in TEXTS:  # within limits.text_bytes before any other work (base/limits.py)
        limits.check_text(store, field, record.get(field))
    schemas.validate("intake", record)
    refuse_ratified(record["tier"])
    from memstack.base.secrets import refuse_secrets  # deferred: only a write screens for credentials

    refuse_secrets(record, store=store)
    clock.refuse_future(store, ("created-at", parse_ts(record["created_at"], "created-at")))
    relpath = relpath_for(record)
    append_line(store, relpath, jsonio.dumps_line(record))
    return relpath


def find_written(store: Path, prefix: str, created_at: str) -> tuple[dict[str, Any], str] | None:
    """The record, and its file, whose id starts with `prefix` (a bound id's time and random parts, any
    agent's tag) in any agent's file of the day of `created_at`: what a write of a derived id that was
    killed after its append left. One byte search per agent's file of that day."""
    name = f"{day(parse_ts(created_at, 'created_at'))}.jsonl"
    needle = b'"id":"' + prefix.encode()
    for folder in sorted((store / "intake").glob("*")):
        path = folder / name
        if not path.is_file():
            continue
        data = path.read_bytes()
        at = data.find(needle)
        if at >= 0:
            start, end = data.rfind(b"\n", 0, at) + 1, data.find(b"\n", at)
            relpath = str(path.relative_to(store))
            record = jsonio.loads(data[start:end if end >= 0 else len(data)], relpath)
            if isinstance(record, dict):
                return record, relpath
    return None


def promoted_ids(store: Path, intake_file: str) -> set[str]:
    """The ids of one intake file's records that promotion routed (its ledger shard)."""
    return ledger.routed_ids(store, intake_file)


def records(store: Path, agent: str | None = None, pending: bool = False) -> list[dict[str, Any]]:
    """Intake records, oldest first (by created_at, then id); `pending`: not yet in the ledger."""
    return list(each_record(store, agent, pending))


def each_record(store: Path, agent: str | None = None, pending: bool = False) -> Iterator[dict[str, Any]]:
    """`records`, one day at a time: a record lies in the file of its agent and day (I5), so the
    days in order, each day's files sorted together, are the whole log in order."""
    if agent is not None:
        check_name(agent, "agent")
    root = store / "intake"
    folders = [root / agent] if agent else sorted(p for p in root.glob("*") if p.is_dir())
    days: dict[str, list[Path]] = {}
    for folder in folders:
        for path in folder.glob("*.jsonl"):
            days.setdefault(path.name, []).append(path)
    shown = Shown.in_store(store)  # forgotten: without its content; a credential: redacted (docs/forgetting.md)
    for name in sorted(days):
        found = []
        for path in sorted(days[name]):
            relpath = path.relative_to(store).as_posix()
            done = promoted_ids(store, relpath) if pending else set()
            found += [r for r in read_jsonl(path, relpath)
                      if r["id"] not in done and not (pending and r["id"] in shown)]  # promotion skips them
        found.sort(key=lambda r: (r["created_at"], r["id"]))
        yield from shown.records(found)


def nest(store: Path, file: Path, agent: str, now: Any,
         anchors: list[dict[str, Any]] | None = None) -> tuple[dict[str, Any], bool]:
    """A human-filed document enters intake at tier verified, confidence 1.0; returns the record and whether
    it was there already: the same text filed under the same file name before (by any agent) is not filed
    again, and nothing is written."""
    text = limits.read_input(store, file, "FILE")  # bounded: a device or an endless pipe is refused
    headings = [line[2:].strip() for line in text.splitlines() if line.startswith("# ")]
    record = make_record(agent=agent, content=text, created_at=now, title=headings[0] if headings else file.name,
                         source=f"nest:{file.name}", tier="verified", confidence=1.0, tags=["nest"], anchors=anchors)
    for filed in each_record(store):
        if filed["source"] == record["source"] and filed["content"] == record["content"] and "nest" in filed["tags"]:
            return filed, True
    write(store, record)
    return record, False
