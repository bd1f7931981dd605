"""Record ids, bound to the file that holds them.

An id is `TTTTTTTTTTTT RRRRRRRRRRRR AAAAAAAA[-s]` (no spaces): 12 hex of the record's
transaction time in ms (a fact's `recorded_at`, an intake record's `created_at`),
48 random bits, and 8 hex of the writing agent's name (`agent_tag`), optionally
followed by a short suffix (`-f`, `-r`: a fact promotion derived from an intake id).

The binding is what keeps the uniqueness check O(change): an id can only be
valid in the one file whose agent folder matches its tag and whose month (facts)
or day (intake) holds its time, so no id can be reused in another file, and a
check needs to look for duplicates only inside the file a change touches.
"""

import hashlib
import secrets
from functools import lru_cache
from typing import Any

from memstack.base.errors import bad
from memstack.base.patterns import lazy

ID = lazy(r"^([0-9a-f]{12})([0-9a-f]{12})([0-9a-f]{8})(?:-([a-z0-9]{1,8}))?$")
SHAPE = lazy(r"^[a-z0-9][a-z0-9_-]{7,127}$")  # the id pattern of schemas/fact and schemas/intake


def checked(record_id: Any) -> str:
    """`record_id` when it has the shape of a fact's or an intake record's id, else refused (exit 2)."""
    if not isinstance(record_id, str) or not SHAPE.fullmatch(record_id):
        raise bad("ID", repr(record_id), "not a fact or intake id (lower-case letters, digits, '_' and '-',"
                  " 8 to 128 of them, as `{verb:memstack fact history}` and `{verb:memstack intake list}` show)")
    return record_id


@lru_cache(maxsize=4096)  # a check of a promotion asks it for every line; agents are few
def agent_tag(agent: str) -> str:
    return hashlib.sha256(agent.encode("utf-8")).hexdigest()[:8]


def new_id(ms: int, agent: str) -> str:
    """A fresh id for a record written by `agent` at transaction time `ms`."""
    return f"{ms:012x}{secrets.token_hex(6)}{agent_tag(agent)}"


def derived(base: str, suffix: str, ms: int, agent: str | None = None) -> str:
    """The id of a record made from `base` (deterministic): its time part is `ms`, the new record's own time,
    its tag `agent`'s (by default the base's own tag)."""
    match = ID.match(base)
    if match is None:  # a record written before ids were bound: still deterministic, bound to the new time
        digest = hashlib.sha256(base.encode("utf-8")).hexdigest()
        return f"{ms:012x}{digest[:12]}{digest[12:20] if agent is None else agent_tag(agent)}-{suffix}"
    return f"{ms:012x}{match.group(2)}{match.group(3) if agent is None else agent_tag(agent)}-{suffix}"


def made_from(fact_id: str, intake_id: str) -> bool:
    """Whether `fact_id` is an id `derived` from `intake_id` by promotion (`-f`, or `-r` when ratified)."""
    match = ID.match(intake_id)
    middle = match.group(2) if match else hashlib.sha256(intake_id.encode("utf-8")).hexdigest()[:12]
    return fact_id.endswith(("-f", "-r")) and fact_id[12:24] == middle


def from_content(ms: int, agent: str, content: bytes) -> str:
    """The id of a record whose identity is its content (an imported fact): the same content, time and
    agent always give the same id, so an import done twice finds its records; bound to its file like any."""
    return f"{ms:012x}{hashlib.sha256(content).hexdigest()[:12]}{agent_tag(agent)}"


def problem(record_id: object, ms: int, agent: str) -> str | None:
    """Why `record_id` cannot belong to a record of `agent` at time `ms`, or None when it can."""
    if not isinstance(record_id, str):
        return "the id is not text"
    match = ID.match(record_id)
    if match is None:
        return (f"id {record_id!r} is not of the form <12 hex time><12 hex random><8 hex agent tag>[-suffix]"
                " — write records with memstack, which makes ids bound to their file")
    if int(match.group(1), 16) != ms:
        return (f"id {record_id!r} does not carry the record's transaction time ({ms:012x})"
                " — ids are bound to their record")
    if match.group(3) != agent_tag(agent):
        return (f"id {record_id!r} does not carry agent {agent!r}'s tag ({agent_tag(agent)})"
                " — ids are bound to their agent's files")
    return None
