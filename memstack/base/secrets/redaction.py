"""What read verbs show of a value that holds a credential past the checks: each string that holds one
replaced by `[redacted: <kind>]`, every detector on (a report redacts more than a write refuses)."""

from typing import Any

import orjson

from memstack.base.secrets.detect import DEFAULT, Policy
from memstack.base.secrets.scan import flagged, scan_text


def redact(value: Any, policy: Policy = DEFAULT) -> Any:
    """`value` with each string that holds a credential replaced by `[redacted: <kind>]` (with the
    extra patterns of `policy`; every detector, whatever it switches off: a report redacts more).

    A long list (a review's 100,000 facts) is screened as one JSON line per item by the byte
    prefilter; only the items it hits are walked."""
    policy = Policy(frozenset(), policy.extra)
    if isinstance(value, str):
        found = scan_text(value, "text", policy)
        return f"[redacted: {', '.join(sorted({f.kind for f in found}))}]" if found else value
    if isinstance(value, dict):
        return {redact(k, policy) if isinstance(k, str) else k: redact(v, policy) for k, v in value.items()}
    if isinstance(value, list):
        if len(value) < 64:
            return [redact(item, policy) for item in value]
        hit = flagged([orjson.dumps(item) for item in value], policy)
        return [redact(item, policy) if index in hit else item for index, item in enumerate(value)]
    return value
