"""I8: no credential in a memory file. What a change adds is scanned (base/secrets.py); a violation
names the kind and the field, never the value, and no message of a check quotes one."""

from collections.abc import Callable
from dataclasses import replace

from memstack.base import layout
from memstack.base.layout import Place
from memstack.base.secrets import DEFAULT, Policy, added, redact, triggered
from memstack.integrity.violations import Violation

I8_FIX = ("remove it (keep a reference: the variable's or the vault entry's name) and rotate the credential;"
          " once committed it stays in the history: see README, Secrets; or mark a deliberate exception with"
          " `pragma: allowlist secret` on its line")


TEXT_KINDS = (layout.HANDOFF, layout.IDENTITY, layout.WILLOW_KIND, layout.BINDER_FILE, layout.CONFIG_KIND)


def secrets(path: str, place: Place, new: bytes, old: Callable[[], bytes | None],
            policy: Policy | None = None) -> list[Violation]:
    """I8 on the lines `new` adds to a memory file (`old` reads the base's version, when needed), with
    a store's `secrets:` block: each credential's kind and field, never its value."""
    json_lines = place.kind not in TEXT_KINDS and not path.endswith(".md")
    return [Violation(path, number, "I8", f"{finding.kind} in {finding.field}", I8_FIX)
            for number, finding in added(new, old, json_lines, policy or DEFAULT)]


def redacted(found: list[Violation]) -> list[Violation]:
    """The violations, with any message that quotes a credential (a schema error quoting a bad value)
    redacted: a check never prints one."""
    return [replace(v, what=redact(v.what)) if triggered(v.what) else v for v in found]
