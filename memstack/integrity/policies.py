"""What memstack.yaml puts in force for a step, and the rules that follow from it.

- the clock: transaction times may lie no further in the future than this state's `clock.max_skew_seconds`,
  and, where the step changes memstack.yaml, than the base's (a commit cannot widen the skew and use it);
- I5 on memstack.yaml itself (it validates; deleting it is a violation);
- I6: identity files against the forbidden patterns of this same state, and, where the step changes
  memstack.yaml, against the patterns in force before it too (a commit cannot loosen the patterns and
  add what they forbade);
- I8's `secrets:` block: this state's, and where the step changes memstack.yaml the base's too (a
  detector on in either is on), so one commit cannot switch a detector off and add what it finds.

memstack.yaml is read only when needed, and its policy once a step.
"""

import dataclasses
import functools
import re

from memstack.base import clock, config, layout, limits, schemas, secrets
from memstack.base.errors import MemstackError
from memstack.base.patterns import lazy
from memstack.integrity import identity, rules
from memstack.integrity.blobs import Blobs
from memstack.integrity.report import Step
from memstack.integrity.violations import Violation
from memstack.repo.diffs import Change

# A line of memstack.yaml that may hold the `secrets:` key: not a whole-line comment, and the word
# or a double-quoted escape (which could spell it).
MENTIONS_SECRETS = lazy(rb'^[ \t]*(?=[^#\s])[^\n]*(?:secrets|"[^"\n]*\\)', re.MULTILINE)

Patterns = identity.Patterns


def config_change(step: Step) -> Change | None:
    """The step's change of memstack.yaml, if it has one (found once a step: several rules ask, some per file)."""
    if "config" not in step.memo:
        step.memo["config"] = next((c for c in step.changes if layout.classify(c.path).kind == layout.CONFIG_KIND),
                                   None)
    found: Change | None = step.memo["config"]
    return found


def clock_for(step: Step, now: int, blobs: Blobs) -> clock.Clock:
    """The check's clock, with the skew of this state's memstack.yaml, or of the base's where the step
    changes it and the base's is smaller (read only if a time exceeds now)."""

    def skew() -> int:
        seconds = skew_of(step.source.read(layout.CONFIG))
        old = blobs.old(config_change(step))
        if old is not None and skew_of(old) < seconds:
            made.allowed = ("of memstack.yaml before this change (a commit may not widen the skew and use it:"
                            " commit the new skew alone first)")
            return skew_of(old)
        return seconds

    made = clock.Clock(now, skew)
    return made


def binder_people(step: Step, blobs: Blobs) -> tuple[frozenset[str] | None, str]:
    """Who may write Binder lines in this step (None: anyone) and which memstack.yaml says so: this
    state's `binder.people`, and where the step changes memstack.yaml, only those the base lists too."""
    people = people_of(step.source.read(layout.CONFIG))
    change = config_change(step)
    before = people_of(blobs.old(change)) if change is not None else None
    if before is None:
        return people, "memstack.yaml"
    return (before if people is None else people & before), "memstack.yaml before and after this change"


def binder_signing(step: Step, blobs: Blobs) -> tuple[bool, dict[str, str], str]:
    """`binder.require_signed` in force in this step (on in this state's memstack.yaml or, where the step
    changes it, in the base's), the signers of the base ({key: name}: a commit cannot add its own signer), and
    which memstack.yaml they come from."""
    change = config_change(step)
    now = signing_of(step.source.read(layout.CONFIG))
    if change is None:
        return now[0], now[1], "memstack.yaml"
    before = signing_of(blobs.old(change))
    return now[0] or before[0], before[1], "memstack.yaml before this change"


@dataclasses.dataclass(frozen=True)
class BinderPolicy:
    """The `binder` policy of one memstack.yaml: `require_signed`, `signers` ((key, name) pairs) and `people`."""

    required: bool
    signers: tuple[tuple[str, str], ...]
    people: frozenset[str] | None

    def keys(self) -> dict[str, str]:
        return dict(self.signers)


@functools.lru_cache(maxsize=64)
def binder_policy(data: bytes | None) -> BinderPolicy:
    """The `binder` policy of one memstack.yaml (each distinct file parsed once a process)."""
    required, keys = signing_of(data)
    return BinderPolicy(required, tuple(sorted(keys.items())), people_of(data))


def signing_of(data: bytes | None) -> tuple[bool, dict[str, str]]:
    """`binder.require_signed` and `binder.signers` of one memstack.yaml (off and none when it is absent or
    broken: I5 reports a broken one)."""
    if not data or (b"require_signed" not in data and b"signers" not in data):
        return False, {}  # no YAML parser started
    try:
        return config.binder_signing(config.parse(data.decode("utf-8"), layout.CONFIG))
    except (MemstackError, UnicodeDecodeError):
        return False, {}


def people_of(data: bytes | None) -> frozenset[str] | None:
    """`binder.people` of one memstack.yaml (None when absent, or the file broken: I5 reports that)."""
    if not data or b"people" not in data:
        return None  # no YAML parser started
    try:
        return config.binder_people(config.parse(data.decode("utf-8"), layout.CONFIG))
    except (MemstackError, UnicodeDecodeError):
        return None


def skew_of(data: bytes | None) -> int:
    """The clock skew one memstack.yaml allows (the default when it is absent, says nothing or is broken)."""
    try:
        return config.skew_seconds(config.parse(data.decode("utf-8"), layout.CONFIG)) if data else \
            config.DEFAULT_SKEW_SECONDS
    except (MemstackError, UnicodeDecodeError):
        return config.DEFAULT_SKEW_SECONDS


def handoff_bytes(step: Step, blobs: Blobs) -> int:
    """`limits.handoff_bytes` of this state's memstack.yaml, or of the base's where the step changes it and the
    base's is smaller (a commit may not raise the limit and use it at once; a step that adds memstack.yaml, a
    store's first commit or `check --all`, has no base's); read once a step."""
    if "handoff_bytes" not in step.memo:
        now = handoff_bytes_of(step.source.read(layout.CONFIG))
        old = blobs.old(config_change(step))
        step.memo["handoff_bytes"] = now if old is None else min(now, handoff_bytes_of(old))
    most: int = step.memo["handoff_bytes"]
    return most


def handoff_bytes_of(data: bytes | None) -> int:
    """The handoff limit one memstack.yaml sets (the default when it is absent, says nothing or is broken)."""
    if not data or b"handoff_bytes" not in data:
        return limits.DEFAULTS["handoff_bytes"]  # no YAML parser started
    try:
        return limits.limit_of(config.parse(data.decode("utf-8"), layout.CONFIG), "handoff_bytes")
    except (MemstackError, UnicodeDecodeError):
        return limits.DEFAULTS["handoff_bytes"]


class Secrets:
    """I8's policy in force, one parse per distinct memstack.yaml of a check."""

    def __init__(self) -> None:
        self.parsed: dict[bytes, secrets.Policy] = {}

    def in_force(self, step: Step, blobs: Blobs) -> secrets.Policy:
        policy = self.of(step.source.read(layout.CONFIG))
        change = config_change(step)
        return policy if change is None else policy.both(self.of(blobs.old(change)))

    def of(self, data: bytes | None) -> secrets.Policy:
        """The `secrets:` block of one memstack.yaml; all detectors and no extras when it has none or is
        broken (I5 reports a broken one)."""
        if not data or not MENTIONS_SECRETS.search(data):
            return secrets.DEFAULT  # no `secrets:` key can be there: no YAML parser started (~0.1 s)
        if data not in self.parsed:
            try:
                document = config.parse(data.decode("utf-8"), layout.CONFIG)
                policy = secrets.DEFAULT if schemas.errors("config", document) else rules.secrets_policy(document)
            except (MemstackError, UnicodeDecodeError):
                policy = secrets.DEFAULT
            self.parsed[data] = policy
        return self.parsed[data]


def config_file(new: bytes | None, path: str, restore: str) -> tuple[list[Violation], Patterns | None]:
    """I5 on a changed memstack.yaml; its forbidden patterns (None when it is broken)."""
    if new is None:
        return [Violation(path, 0, "I5", "memstack.yaml deleted: a store needs its config", restore)], None
    return rules.config(path, new)


def identities(step: Step, paths: list[str], patterns: Patterns | None, config_changed: bool) -> list[Violation]:
    """I6 (and I7) on the identity files, with the forbidden patterns of this same state."""
    if patterns is None:
        if config_changed:
            return []  # memstack.yaml is broken: reported as I5 already
        data = step.source.read(layout.CONFIG)
        found, patterns = rules.config(layout.CONFIG, data) if data is not None else ([], [])
        if found or patterns is None:
            return [Violation(layout.CONFIG, 0, "I5", f"cannot read the forbidden patterns: {v.what}", v.fix)
                    for v in found]
    found = []
    budget = identity.Budget()  # shared by every file
    for path in paths:
        data = step.source.read(path)
        if data is None:
            continue
        problems = rules.text(path, data)
        found += problems or identity.violations_in(path, data.decode("utf-8"), patterns, budget)
    return found


def identities_before(step: Step, paths: list[str], blobs: Blobs) -> list[Violation]:
    """The identity files a step changes, against the patterns in force before its memstack.yaml change."""
    old = blobs.old(config_change(step))
    if old is None:
        return []
    problems, before = rules.config(layout.CONFIG, old)
    if problems or not before:
        return []
    found = []
    budget = identity.Budget()  # shared by every file
    for path in paths:
        data = step.source.read(path)
        if data is None or rules.text(path, data):
            continue
        for violation in identity.violations_in(path, data.decode("utf-8"), before, budget):
            found.append(dataclasses.replace(
                violation, what=f"{violation.what} (a pattern of memstack.yaml before this change)",
                fix="a change may not loosen identity.forbidden_patterns and add what they forbade: commit the"
                    " new patterns alone first (a reviewable change), then the identity"))
    return found
