"""A forgotten fact in a listing of every subject (`fact get-valid-at` without `--subject`): placed by what the
read shows as its subject, its `[forgotten: …]` marker, as the replica holds it; no page, no order and no
cursor gives away the subject it forgot."""

import base64
import json
from pathlib import Path
from typing import Any

from helpers import git, memstack, ok

T0, T1 = "2026-03-01T10:00:00Z", "2026-03-02T10:00:00Z"
HIDDEN = "zed-secret-name"
SUBJECTS = [HIDDEN, "alpha", "mid", "zzz-last", "Zulu"]  # '[' sorts after "Zulu" and before "alpha"
GONE = "[forgotten: erasure request]"


def with_forgotten_fact(store: Path) -> str:
    """One fact about each of SUBJECTS, committed; the one about HIDDEN forgotten, committed; its id."""
    for subject in SUBJECTS:
        ok(store, "fact", "add", "--subject", subject, "--predicate", "decided", "--object", f"{subject} value",
           "--valid-from", T0, "--recorded-at", T0)
    git(store, "add", "-A")
    git(store, "commit", "-q", "-m", "facts")
    [fact] = ok(store, "fact", "history", "--subject", HIDDEN)["items"]
    ok(store, "forget", fact["id"], "--reason", "erasure request")
    git(store, "add", "-A")
    git(store, "commit", "-q", "-m", "forget")
    return str(fact["id"])


def walk(store: Path, limit: int, *extra: str) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Every page of `fact get-valid-at --ts T1 --limit LIMIT` (and `extra`): (the pages, their items)."""
    pages, cursor = [], None
    while True:
        page = ok(store, "fact", "get-valid-at", "--ts", T1, "--limit", str(limit), *extra,
                  *(["--cursor", cursor] if cursor else []))
        pages.append(page)
        cursor = page["next_cursor"]
        if cursor is None:
            return pages, [item for page in pages for item in page["items"]]


def decoded(cursor: str) -> str:
    return base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)).decode()


def test_a_forgotten_fact_is_listed_by_its_marker_and_no_cursor_holds_its_subject(store: Path) -> None:
    forgotten_id = with_forgotten_fact(store)
    whole = ok(store, "fact", "get-valid-at", "--ts", T1)["items"]  # the whole answer, streamed
    assert [f["subject"] for f in whole] == ["Zulu", GONE, "alpha", "mid", "zzz-last"]
    assert whole[1]["id"] == forgotten_id
    text = memstack("fact", "get-valid-at", "--ts", T1, cwd=store).stdout
    assert text.index("Zulu") < text.index(GONE) < text.index("alpha") and HIDDEN not in text
    for limit in range(1, len(SUBJECTS) + 1):
        pages, listed = walk(store, limit)
        assert listed == whole, limit  # every page in the same order, nothing twice, nothing left out
        for page in pages:
            assert HIDDEN not in json.dumps(page)
            assert page["next_cursor"] is None or HIDDEN not in decoded(page["next_cursor"]), limit
    [first, second] = walk(store, 2)[0][:2]  # the first page ends on the forgotten fact: its cursor is the marker's
    assert first["items"][-1]["id"] == forgotten_id and GONE in decoded(first["next_cursor"])
    assert [f["subject"] for f in second["items"]] == ["alpha", "mid"]
    as_of, _ = walk(store, 2, "--as-of", T1)
    assert as_of[0]["items"][-1]["id"] == forgotten_id and HIDDEN not in decoded(as_of[0]["next_cursor"])
