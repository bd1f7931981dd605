"""I3 and the Binder's documents: what is sealed never changes; a new handoff is complete and in its
agent's folder; a filed document is UTF-8 text named by its SHA-256."""

import hashlib

from memstack.base.clock import Clock
from memstack.base.errors import MemstackError
from memstack.base.layout import Place
from memstack.base.times import day
from memstack.handoff import sealed as handoff_module
from memstack.integrity.rules.text import text
from memstack.integrity.violations import Violation

I3_FIX = "restore the sealed handoff ({restore}) and write a new one instead (`memstack handoff write`)"


def handoff(path: str, place: Place, data: bytes, most: int, now: Clock | None = None) -> list[Violation]:
    """A new handoff: at most `most` bytes (limits.handoff_bytes), complete (front matter, open threads,
    capability table), in its agent's folder, and dated no later than `handoff write` allows by the check's
    clock `now`."""
    if len(data) > most:
        return [Violation(path, 0, "I3", f"{len(data):,} bytes, more than the {most:,} a handoff may hold"
                                         " (limits.handoff_bytes in memstack.yaml)",
                          "seal a shorter handoff (the open threads and capabilities, not the session's log)")]
    found = text(path, data)
    if found:
        return found
    fix = "complete it (front matter agent/date/session, a non-empty '## Open threads', a '## Capability table')"
    try:
        parsed = handoff_module.parse(data.decode("utf-8"), path)
    except MemstackError as exc:
        what = exc.message
        for prefix in (f"{path}: I3 ", f"{path}: ", "handoff: "):
            what = what.removeprefix(prefix)
        return [Violation(path, 0, "I3", what, fix)]
    if parsed.front.get("agent") != place.agent:
        found.append(Violation(path, 0, "I3", f"front matter agent {parsed.front.get('agent')!r} is not the folder's"
                                              f" agent {place.agent!r}", "seal it in its own agent's folder"))
    if str(parsed.front.get("date")) != place.date:
        found.append(Violation(path, 0, "I3", f"front matter date {parsed.front.get('date')!r} is not the file"
                                              f" name's date {place.date}", "name the file after its date"))
    elif now is not None and handoff_module.dated_ahead(place.date, now):
        found.append(Violation(path, 0, "I3", f"date {place.date} " + handoff_module.AHEAD.format(today=day(now.now)),
                               "seal it with `memstack handoff write`, which dates it today"))
    return found


def binder_file(path: str, data: bytes) -> list[Violation]:
    """A document filed in the Binder: UTF-8 text whose SHA-256 is its name (kb/files/<sha256>[.ext])."""
    fix = "file documents with `memstack binder file PATH`, which names the copy by its content"
    try:
        data.decode("utf-8")
    except UnicodeDecodeError as exc:
        return [Violation(path, 0, "I7", f"is not UTF-8 (byte 0x{data[exc.start]:02x})", fix)]
    digest = hashlib.sha256(data).hexdigest()
    if not path.split("/")[-1].startswith(digest):
        return [Violation(path, 0, "I5", f"its content's SHA-256 is {digest}, not its name", fix)]
    return []


def filed_document(path: str, deleted: bool, restore: str) -> Violation:
    what = "deleted or renamed" if deleted else "edited"
    return Violation(path, 0, "I1", f"a document filed in the Binder was {what}: the Binder is append-only",
                     f"restore it ({restore}); file a new version with `memstack binder file`")


def sealed_handoff(path: str, deleted: bool, restore: str) -> Violation:
    what = "sealed handoff deleted or renamed" if deleted else "sealed handoff edited"
    return Violation(path, 0, "I3", what, I3_FIX.format(restore=restore))
