"""Successors a check has yet to find: the `superseded_by` ids that closings name outside their own file.

A closing's successor must be a fact of the state checked (I2). The check finds most of them in
the file that holds the closing; the rest wait here, grouped by the one fact file their id is bound
to (memstack/base/ids.py: the month of its time, the agent folder whose tag it carries), and are looked
for at the end of the step, one bound file read at a time. Nothing keeps the ids of the facts a
step adds: in an audit that would be every fact of the store (1,480,000 ids, over 120 MiB, in a
promoted store of a million records). A waiting successor costs its id's bytes and two integers.
"""

from array import array
from collections.abc import Callable, Iterable

from memstack.base import ids
from memstack.base.times import month
from memstack.kb.facts import MAX_MS

# Where a fact of a given id can be: (agent tag, month) for a bound id ("" as the month when its time
# is impossible: nowhere), ("", month) for an id of no bound form whose head reads as a time, ("", "") else.
Bound = tuple[str, str]


class _Group:
    __slots__ = ("names", "ends", "where")

    def __init__(self) -> None:
        self.names = bytearray()  # the successors' ids, UTF-8, one after the other
        self.ends = array("Q")  # where each id ends in `names`
        self.where = array("Q")  # for each: (number of the closing's file) << 32 | its line


class Unresolved:
    """The successors named by a step's closings that the closing's own file does not hold."""

    def __init__(self) -> None:
        self.groups: dict[Bound, _Group] = {}
        self.paths: dict[str, int] = {}  # the closings' files, numbered

    def __bool__(self) -> bool:
        return bool(self.groups)

    def add(self, successor: str, path: str, number: int) -> None:
        key = bound(successor)
        group = self.groups.get(key)
        if group is None:
            group = self.groups[key] = _Group()
        group.names += successor.encode("utf-8", "surrogatepass")
        group.ends.append(len(group.names))
        group.where.append(self.paths.setdefault(path, len(self.paths)) << 32 | number)

    def resolve(self, agents: Iterable[str], ids_of: Callable[[str], set[str]],
                names_in: Callable[[str], Iterable[str]]) -> list[tuple[str, int, str]]:
        """The (path, line, successor) of each successor that no fact of the state holds, and forget them.
        `agents` are the state's fact folders; `ids_of(path)` the ids of one fact file of the state
        (empty if there is none); `names_in(agent)` the names in an agent's fact folder. A bound id is
        looked for in its one file; an id of no bound form in the month of its time of every agent, then,
        if not there, in every fact file (O(store): ids written before ids were bound, documented)."""
        agents = sorted(agents)
        by_tag: dict[str, list[str]] = {}
        for agent in agents:
            by_tag.setdefault(ids.agent_tag(agent), []).append(agent)
        paths = list(self.paths)
        missing: list[tuple[str, int, str]] = []
        legacy: list[tuple[str, int, str]] = []
        for (tag, when), group in sorted(self.groups.items()):
            owners = (by_tag.get(tag, []) if tag else agents) if when else []
            present: set[str] = set()
            for agent in owners:
                present |= ids_of(f"kb/facts/{agent}/{when}.jsonl")
            start = 0
            for end, where in zip(group.ends, group.where, strict=True):
                successor = group.names[start:end].decode("utf-8", "surrogatepass")
                start = end
                if successor not in present:
                    (legacy if not tag else missing).append((paths[where >> 32], where & 0xFFFFFFFF, successor))
        if legacy:
            wanted = {successor for _, _, successor in legacy}
            for path in (f"kb/facts/{agent}/{name}" for agent in agents for name in names_in(agent)):
                wanted -= ids_of(path)
                if not wanted:
                    break
            missing += [entry for entry in legacy if entry[2] in wanted]
        self.groups, self.paths = {}, {}
        return missing


def bound(successor: str) -> Bound:
    match = ids.ID.match(successor)
    if match:
        ms = int(match.group(1), 16)
        return match.group(3), month(ms) if ms <= MAX_MS else ""
    head = successor[:12]
    if len(head) == 12 and all(c in "0123456789abcdef" for c in head) and int(head, 16) <= MAX_MS:
        return "", month(int(head, 16))
    return "", ""
