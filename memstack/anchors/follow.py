"""Whether one code anchor still holds, against a `CodeTree` (the work tree or a revision):

- fresh: its lines are there unchanged (whitespace aside), maybe shifted by edits elsewhere in the file;
- moved: its file was renamed (git's rename detection from the anchor's commit), or its lines now stand in
  another file that changed since that commit;
- drifted: its lines changed (old and new lines given, where the new ones are);
- orphaned: its file or its lines are gone (deleted, a symbolic link or a binary file now).
"""

from typing import Any

from memstack.anchors import lines
from memstack.repo.codetree import CodeTree, Entry

STATUSES = ("fresh", "moved", "drifted", "orphaned")  # from best to worst: a record is as bad as its worst
RANK = {status: n for n, status in enumerate(STATUSES)}
SHOWN_LINES = 50  # the most old or new lines a drifted anchor shows

Anchor = dict[str, Any]


def worst(followed: list[dict[str, Any]]) -> str:
    """A record's status: its worst anchor's (fresh when it has none)."""
    return STATUSES[max((RANK[a["status"]] for a in followed), default=0)]


def cache_key(anchor: Anchor, blob_now: str) -> str:
    """What an anchor's place in a changed file depends on: its lines (hash, range) and the file's blob now."""
    return f"{anchor['blob']}:{anchor['start']}-{anchor['end']}:{anchor['lines_sha256']}:{blob_now}"


def place(path: str, start: int | None, end: int | None) -> dict[str, Any]:
    return {"path": path, "start": start, "end": end}


def result(anchor: Anchor, status: str, now: dict[str, Any] | None = None, **more: Any) -> dict[str, Any]:
    found = {"path": anchor["path"], "start": anchor["start"], "end": anchor["end"], "commit": anchor["commit"],
             "status": status, "now": now}  # a literal: ten thousand of them on each run of `anchors`
    if more:
        found.update(more)
    return found


class Follower:
    """Follows anchors into one CodeTree; `entries` says what each anchored path is there now."""

    def __init__(self, tree: CodeTree, entries: dict[str, Entry], known: dict[str, Any] | None = None) -> None:
        """`known`: what earlier runs found of anchors in a changed file, by `cache_key` (the anchor's lines
        and blob, the file's blob now): the start of its lines there; `learned` is what this run used and
        found, for the next."""
        self.tree, self.entries = tree, entries
        self.known = known or {}
        self.learned: dict[str, Any] = {}
        self._texts: dict[str, list[str] | None] = {}
        self._keys: dict[str, list[str]] = {}
        self._old: dict[str, list[str] | None] = {}

    def text(self, path: str) -> list[str] | None:
        """The lines of file `path` now (None: no such text file)."""
        if path not in self._texts:
            data = self.tree.read(path)
            self._texts[path] = None if data is None else lines.text_lines(data)
        return self._texts[path]

    def keys(self, path: str, text: list[str]) -> list[str]:
        """The lines of file `path` (`text`) normalised, as `lines.find` looks through them."""
        if path not in self._keys:
            self._keys[path] = [lines.normalised(line) for line in text]
        return self._keys[path]

    def first(self, anchor: Anchor) -> str | None:
        """The anchored lines' first line normalised, when the anchored blob is here to say it."""
        old = self.old(anchor["blob"])
        start = anchor["start"]
        return None if old is None or start is None or start > len(old) else lines.normalised(old[start - 1])

    def old(self, blob: str) -> list[str] | None:
        if blob not in self._old:
            data = self.tree.blob(blob)
            self._old[blob] = None if data is None else lines.text_lines(data)
        return self._old[blob]

    def follow(self, anchor: Anchor) -> dict[str, Any]:
        path = anchor["path"]
        entry = self.entries.get(path)
        if entry is not None and entry.kind == "file" and entry.blob == anchor["blob"]:
            return result(anchor, "fresh", place(path, anchor["start"], anchor["end"]))
        if entry is not None and entry.kind == "file":
            key = cache_key(anchor, entry.blob or "")
            if key in self.known:
                self.learned[key] = self.known[key]
                start = self.known[key]
                count = None if start is None else anchor["end"] - anchor["start"]
                return result(anchor, "fresh", place(path, start, None if start is None else start + count))
        if entry is None or entry.kind != "file":
            change = self.tree.changes(anchor["commit"]).get(path)
            if entry is None and change is not None and change.status == "R" and change.new is not None:
                found = self.in_file(anchor, change.new)
                if found["status"] == "fresh":
                    return {**found, "status": "moved"}
                return found
            elsewhere = self.elsewhere(anchor)
            if elsewhere is not None:
                return elsewhere
            reason = ("deleted" if entry is None else "a symbolic link now" if entry.kind == "symlink"
                      else "not a file now")
            return result(anchor, "orphaned", reason=reason)
        found = self.in_file(anchor, path)
        if found["status"] == "fresh" and found["now"]["path"] == path:
            self.learned[cache_key(anchor, entry.blob or "")] = found["now"]["start"]
        return found

    def in_file(self, anchor: Anchor, path: str) -> dict[str, Any]:
        """The anchor followed in the file `path` (its own, or the one it was renamed to)."""
        now = self.text(path)
        if now is None:
            return result(anchor, "orphaned", reason="a binary file now")
        start, end = anchor["start"], anchor["end"]
        if start is None or end is None:
            if lines.sha256(now) == anchor["lines_sha256"]:
                return result(anchor, "fresh", place(path, None, None))
            return self.drifted(anchor, path, None, now)
        count = end - start + 1
        at = lines.find(self.keys(path, now), anchor["lines_sha256"], count, start, self.first(anchor))
        if at is not None:
            return result(anchor, "fresh", place(path, at, at + count - 1))
        elsewhere = self.elsewhere(anchor, skip=path)
        if elsewhere is not None:
            return elsewhere
        old = self.old(anchor["blob"])
        span = lines.follow_range(old, now, start, end) if old is not None and len(old) >= end \
            else ((start, min(end, len(now))) if start <= len(now) else None)
        if span is None:
            return result(anchor, "orphaned", reason="lines deleted")
        return self.drifted(anchor, path, span, now)

    def drifted(self, anchor: Anchor, path: str, span: tuple[int, int] | None, now: list[str]) -> dict[str, Any]:
        old = self.old(anchor["blob"])
        start, end = anchor["start"], anchor["end"]
        was = None if old is None else old if start is None else old[start - 1:end]
        new = now if span is None else now[span[0] - 1:span[1]]
        return result(anchor, "drifted", place(path, *(span or (None, None))),
                      old_lines=None if was is None else was[:SHOWN_LINES], new_lines=new[:SHOWN_LINES],
                      truncated=max(len(was or ()), len(new)) > SHOWN_LINES)

    def elsewhere(self, anchor: Anchor, skip: str | None = None) -> dict[str, Any] | None:
        """The anchor's lines, unchanged, in another file that changed since its commit: moved there."""
        start, end = anchor["start"], anchor["end"]
        count = None if start is None or end is None else end - start + 1
        for path, change in sorted(self.tree.changes(anchor["commit"]).items()):
            if path == skip or path == anchor["path"] or change.new != path:
                continue
            entry = self.entries.get(path)
            if entry is not None and entry.kind != "file":
                continue
            text = self.text(path)
            if text is None:
                continue
            if count is None:
                if lines.sha256(text) == anchor["lines_sha256"]:
                    return result(anchor, "moved", place(path, None, None))
                continue
            at = lines.find(self.keys(path, text), anchor["lines_sha256"], count, start or 1, self.first(anchor))
            if at is not None:
                return result(anchor, "moved", place(path, at, at + count - 1))
        return None
