"""What `memstack sync` commits (the memory's paths in a store) and the message that says what it holds."""

from collections import Counter
from pathlib import Path

from memstack.base import layout
from memstack.base.output import plural
from memstack.repo import git


def memory_paths(store: Path) -> list[str]:
    """The store-relative paths `sync` commits: the layer folders and the boot files that exist or are
    committed (one gone: its deletion, as a forget of an agent's last handoff leaves it)."""
    found = [name for name in layout.LAYERS if (store / name).is_dir()]
    boot = {p.name for p in store.glob("session_anchor_*.json")} | ({layout.WILLOW} if (store / layout.WILLOW).exists()
                                                                     else set())
    boot |= set(git.out(store, "ls-files", "--", "session_anchor_*.json", layout.WILLOW).split())
    return found + sorted(boot)


# What a line of each append-only log is, in a commit message (every kind of layout.LOGS).
_LOG_ENTRIES = {layout.INTAKE: "intake records", layout.PROMOTIONS: "ledger lines", layout.BINDER: "Binder decisions",
                layout.TOMBSTONES: "tombstones", layout.ERASURES: "erasure receipts"}


def describe(numstat: str) -> tuple[str, list[str]]:
    """The commit message's title and body from `git diff --cached --numstat` of the memory paths."""
    counts: Counter[str] = Counter()
    body = []
    for row in numstat.splitlines():
        added, removed, path = row.split("\t", 2)
        plus, minus = (int(added), int(removed)) if added.isdigit() and removed.isdigit() else (0, 0)
        kind = layout.classify(path).kind
        if kind in layout.LOGS:
            what = _LOG_ENTRIES[kind]
            counts[what] += plus
            body.append(f"{path}: +{plural(plus, what[:-1])}")
        elif kind == layout.FACTS:
            counts["facts"] += plus - minus
            counts["closings"] += minus
            body.append(f"{path}: +{plural(plus - minus, 'fact')}" + (f", {minus} closed" if minus else ""))
        elif kind == layout.HANDOFF:
            counts["handoffs"] += 1
            body.append(f"{path}: sealed handoff")
        elif kind == layout.SOIL:
            counts["SOIL records"] += 1
            body.append(f"{path}: SOIL record")
        elif kind in layout.DERIVED:
            counts["rebuilt derived files"] += 1
            body.append(f"{path}: derived, rebuilt")
        else:
            counts["other files"] += 1
            body.append(f"{path}: changed")
    order = ("intake records", "facts", "closings", "handoffs", "SOIL records", "Binder decisions", "tombstones",
             "erasure receipts", "ledger lines", "other files", "rebuilt derived files")
    title = ", ".join(f"{counts[k]} {k if counts[k] != 1 else k.rstrip('s')}" for k in order if counts[k])
    return title, body
