"""A write never appends to a file that is not valid JSONL where the append would continue it: git
conflict markers left by a merge (memstack's merge driver leaves them for a fact it cannot settle), or a
last line that is not a JSON object. The write is exit 2, one line naming the file and the line, and
nothing is written. The check reads at most the file's last megabyte (logfiles.check_appendable).
"""

from pathlib import Path

import pytest

from check_support import dumps, fact, intake
from helpers import git, memstack, tree_snapshot

FACTS = "kb/facts/alice/2026-01.jsonl"
LOG = "intake/alice/2026-01-01.jsonl"
FACT_ADD = ("fact", "add", "--subject", "deploys", "--predicate", "happen", "--object", "monday",
            "--valid-from", "2026-01-01T00:00:00Z", "--recorded-at", "2026-01-02T00:00:00Z")
INTAKE_WRITE = ("intake", "write", "--content", "an observation", "--created-at", "2026-01-01T12:00:00Z")


def conflict(ours: bytes, theirs: bytes) -> bytes:
    """A block as git leaves it in a file it could not merge."""
    return b"<<<<<<< HEAD\n" + ours + b"=======\n" + theirs + b">>>>>>> agent-b\n"


def committed_with(store: Path, relpath: str, data: bytes) -> None:
    """`relpath` holds `data` in the work tree, its valid first line committed (a merge left the rest)."""
    path = store / relpath
    path.parent.mkdir(parents=True, exist_ok=True)
    first = data[:data.index(b"\n") + 1]
    path.write_bytes(first)
    git(store, "add", "-A")
    git(store, "commit", "-q", "--no-verify", "--allow-empty", "-m", "one record")
    path.write_bytes(data)


def assert_refused(store: Path, args: tuple[str, ...], expected: str) -> None:
    before, status = tree_snapshot(store), git(store, "status", "--porcelain").stdout
    proc = memstack(*args, "--store", str(store))
    assert proc.returncode == 2, proc.stdout + proc.stderr
    line = proc.stderr.strip()
    assert "\n" not in line and "Traceback" not in line, line
    assert expected in line, line
    assert tree_snapshot(store) == before
    assert git(store, "status", "--porcelain").stdout == status


def test_fact_add_after_conflict_markers_at_the_end_is_refused(store: Path) -> None:
    one, two, three = (dumps(fact(name, recorded_at=1767225600000 + n)) for n, name in enumerate("abc"))
    committed_with(store, FACTS, one + conflict(two, three))
    assert_refused(store, FACT_ADD, f"{FACTS}:2: I5 a git conflict marker (<<<<<<<)")


def test_fact_add_after_conflict_markers_between_valid_lines_is_refused(store: Path) -> None:
    """memstack's merge driver leaves the block where the fact is, valid facts after it."""
    one, two, three, four = (dumps(fact(name, recorded_at=1767225600000 + n)) for n, name in enumerate("abcd"))
    committed_with(store, FACTS, one + conflict(two, three) + four)
    assert_refused(store, FACT_ADD, f"{FACTS}:2: I5 a git conflict marker (<<<<<<<)")


def test_fact_invalidate_of_a_file_with_conflict_markers_is_refused(store: Path) -> None:
    assert memstack(*FACT_ADD, "--store", str(store)).returncode == 0
    path = store / FACTS
    path.write_bytes(path.read_bytes() + conflict(dumps(fact("b")), dumps(fact("c"))))
    assert_refused(store, ("fact", "invalidate", "--subject", "deploys", "--predicate", "happen",
                           "--valid-to", "2026-01-03T00:00:00Z", "--recorded-at", "2026-01-03T00:00:00Z"),
                   "I5")


@pytest.mark.parametrize("marker", [b"=======", b">>>>>>> theirs", b"||||||| base"])
def test_intake_write_after_any_conflict_marker_is_refused(store: Path, marker: bytes) -> None:
    committed_with(store, LOG, dumps(intake(1)) + marker + b"\n" + dumps(intake(2)))
    assert_refused(store, INTAKE_WRITE, f"{LOG}:2: I5 a git conflict marker ({marker[:7].decode()})")


@pytest.mark.parametrize("last", [b'{"id": "cut short', b"[1, 2]", b"", b"not json at all"],
                         ids=["torn JSON", "an array", "an empty line", "text"])
def test_intake_write_after_a_malformed_last_line_is_refused(store: Path, last: bytes) -> None:
    committed_with(store, LOG, dumps(intake(1)) + dumps(intake(2)) + last + b"\n")
    assert_refused(store, INTAKE_WRITE, f"{LOG}:3: I5 the last line is not")


def test_a_binder_edge_after_a_malformed_last_line_is_refused(store: Path) -> None:
    edge = b'{"by":"ann","decided_at":1767225600000,"from":"a","kind":"edge","relation":"r","to":"b"}\n'
    committed_with(store, "kb/binder.jsonl", edge + b"<<<<<<< HEAD\n")
    assert_refused(store, ("binder", "edge", "--from", "parser", "--to", "lexer", "--relation", "uses"),
                   "kb/binder.jsonl:2: I5")  # the edge reads the log first: its reader names the line


def test_an_append_reads_only_the_end_of_a_long_file(store: Path) -> None:
    """A marker more than a megabyte before the end is not looked for (the readers and checks name it);
    one within it is, and the line it names is counted in the whole file."""
    filler = b"".join(dumps(intake(n)) for n in range(3, 3 + 6000))  # about 1.6 MB
    assert len(filler) > 1 << 20
    committed_with(store, LOG, dumps(intake(1)) + b"=======\n" + filler)
    proc = memstack(*INTAKE_WRITE, "--store", str(store))
    assert proc.returncode == 0, proc.stderr
    committed_with(store, LOG, dumps(intake(1)) + filler + b"=======\n" + dumps(intake(2)))
    assert_refused(store, INTAKE_WRITE, f"{LOG}:6002: I5 a git conflict marker (=======)")


def test_a_valid_file_still_takes_appends(store: Path) -> None:
    committed_with(store, LOG, dumps(intake(1)) + dumps(intake(2)))
    assert memstack(*INTAKE_WRITE, "--store", str(store)).returncode == 0
    assert (store / LOG).read_bytes().count(b"\n") == 3
