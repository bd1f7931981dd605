"""Many records screened at once: which of them `scan` may find a credential in (a promotion's
200,000 pending records, of which it walks only these).

`scan` answers most records from one look at their JSON: no detector's word in it (lower-cased), no
base64 run, and no word cut between two of the record's top-level strings. The screen asks the same of
a whole list with one search: each record's JSON and its strings joined (both ways) put one after the
other, a line each, and each of the detectors' words searched once over all of them. A record none of whose
lines the search hits, or whose only hits are links with no user and password before an @, is one `scan`
would pass; every other one is left to `scan`. The screen may keep more than `scan` finds (a record with
extra patterns is always kept), never less.
"""

from bisect import bisect_right
from collections.abc import Sequence
from typing import Any

import orjson

from memstack.base.secrets.detect import DEFAULT, USER_AT, Policy, encoded_runs, word_and_link_starts


def suspects(values: Sequence[Any], policy: Policy = DEFAULT) -> set[int]:
    """The indexes of the `values` (records, or any JSON values) in which `scan(value, "", policy)` may
    find a credential; `scan` finds none in the others."""
    if policy.extra:  # an extra pattern can match anything: every record is walked, as `scan` does
        return set(range(len(values)))
    kept: set[int] = set()
    lows: list[str] = []
    jsons: list[str] = []  # each record's JSON, lower-cased: where `scan` looks for base64 runs
    for index, value in enumerate(values):
        try:
            low = orjson.dumps(value).decode("utf-8").lower()  # each on its own, as `scan` lowers it
        except TypeError:  # not plain JSON: `scan` reads it field by field
            kept.add(index)
            low = ""
        jsons.append(low)
        if isinstance(value, dict):  # a word cut between two fields, read as `scan` reads it
            strings = [item for item in value.values() if isinstance(item, str)]
            if len(strings) > 1:
                low += ("\n" + "".join(strings) + "\n" + "".join(reversed(strings))).lower()
        lows.append(low)
    starts, at = [], 0
    for low in lows:  # where each record's lines start (lower() may change a text's length: counted after it)
        starts.append(at)
        at += len(low) + 1
    joined = "\n".join(lows)  # no word holds a line break: a hit is within one record's lines
    words, links = word_and_link_starts(joined)
    kept |= {bisect_right(starts, start) - 1 for start in words}
    # A record whose only words are links (the commonest case: a source URL) is one `scan` passes unless a link
    # carries a user and a password before an @, whose shape its JSON then holds (scan.py, `_only_links`).
    linked = {bisect_right(starts, start) - 1 for start in links} - kept
    kept |= {index for index in linked if USER_AT.search(lows[index])}
    if encoded_runs("\n".join(jsons).encode("utf-8", "surrogateescape")):  # rare: then each record is asked alone
        kept |= {index for index, low in enumerate(jsons) if encoded_runs(low.encode("utf-8", "surrogateescape"))}
    return kept
