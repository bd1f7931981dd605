"""What kind of memory file a store-relative path is (SPEC section 1)."""

import re

_KINDS = (
    ("intake", re.compile(r"intake/[^/]+/\d{4}-\d{2}-\d{2}\.jsonl")),
    ("ledger", re.compile(r"kb/(promotions|binder)\.jsonl")),
    ("facts", re.compile(r"kb/facts/[^/]+/\d{4}-\d{2}\.jsonl")),
    ("view", re.compile(r"kb/[^/]+\.json")),
    ("anchor", re.compile(r"session_anchor_[^/]+\.json")),
    ("willow", re.compile(r"willow\.md")),
    ("soil", re.compile(r"store/[^/]+/[^/]+\.json")),
    ("handoff", re.compile(r"handoffs/[^/]+/session_handoff-[^/]+\.md")),
    ("identity", re.compile(r"identity/[^/]+\.md")),
    ("config", re.compile(r"memstack\.yaml")),
)

APPEND_ONLY = frozenset({"intake", "ledger"})
DERIVED = frozenset({"view", "anchor", "willow"})


def kind(relpath: str) -> str | None:
    """The kind of memory file at `relpath` by its shape alone, or None for any other file."""
    for name, pattern in _KINDS:
        if pattern.fullmatch(relpath):
            return name
    return None
