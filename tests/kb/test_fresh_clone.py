"""The first query on a fresh clone: no fact index yet and more fact files than a query indexes itself
(kb/index/build.BUILD_BUDGET), so the files answer (`git grep` narrows the files, a byte search finds the
lines, only those are parsed) while a detached build catches the index up. Every answer must be the one
the index gives once built, for any spelling of a subject a fact file may hold."""

import json
import time
from pathlib import Path
from typing import Any

from helpers import git, memstack
from memstack.base import files, jsonio, locks
from memstack.kb import facts
from memstack.kb.index import build

JAN = 1_767_225_600_000  # 2026-01-01T00:00:00Z
DEC = 1_764_547_200_000  # 2025-12-01T00:00:00Z
LATER = JAN + 10**9  # every query asks about this instant
SUBJECTS = ['say "hi"', "C:\\path\\to\\file", "café ☕ 日本", "a/b", "é", "plain", "tab\there", "x" * 3]


def fact(subject: str, n: int, recorded_at: int = JAN, agent: str = "alice") -> dict[str, Any]:
    return facts.make(subject=subject, predicate=("decided", "prefers", "owns")[n % 3], object=f"value {n}",
                      valid_from=n, recorded_at=recorded_at + n, agent=agent)


def write(root: Path, relpath: str, lines: list[bytes]) -> None:
    path = root / relpath
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "ab") as handle:
        handle.write(b"".join(lines))


def escaped(value: Any) -> str:
    """A line as another tool may write it: spaces after separators, every non-ASCII character as
    `\\uXXXX`, a slash as `\\/`, and ASCII letters of the subject escaped too (`\\u0061` for a)."""
    text = json.dumps(value, ensure_ascii=True).replace("/", "\\/")
    subject = json.dumps(value["subject"], ensure_ascii=True).replace("/", "\\/")
    spelled = subject.replace("a", "\\u0061").replace("i", "\\u0069")
    return text.replace(f'"subject": {subject}', f'"subject": {spelled}')


def make_store(root: Path) -> dict[str, int]:
    """The store: memstack's own lines for every subject, lines written by another tool for some, and
    filler beyond the budget (one fact of a subject at its very end); returns how many facts each subject has."""
    count: dict[str, int] = {s: 0 for s in SUBJECTS}
    mine = []
    for n, subject in enumerate(SUBJECTS * 2):
        mine.append(jsonio.dumps_line(fact(subject, n)))
        count[subject] += 1
    write(root, "kb/facts/alice/2026-01.jsonl", mine)
    theirs = []
    for n, subject in enumerate(SUBJECTS[:6], start=100):
        line = escaped(fact(subject, n, agent="bob"))
        assert jsonio.dumps_line(subject)[:-1] not in line.encode()  # found only through an escape
        theirs.append((line + "\n").encode())
        count[subject] += 1
    assert '"\\u00e9"' in theirs[4].decode()  # é
    write(root, "kb/facts/bob/2026-01.jsonl", theirs)
    filler, size, n = [], 0, 0
    while size <= build.BUILD_BUDGET + 2**20:
        line = jsonio.dumps_line({**fact(f"filler {n}", n, recorded_at=DEC), "object": "f" * 4000})
        filler.append(line)
        size, n = size + len(line), n + 1
    filler.append(jsonio.dumps_line(fact(SUBJECTS[0], 7, recorded_at=DEC)))
    count[SUBJECTS[0]] += 1
    write(root, "kb/facts/alice/2025-12.jsonl", filler)
    return count


def answers(clone: Path) -> dict[str, Any]:
    """What the command line answers about every subject: facts valid now, the history, the recall."""
    found = {}
    for subject in SUBJECTS:
        for verb in (("fact", "get-valid-at", "--subject", subject, "--ts", str(LATER)),
                     ("fact", "history", "--subject", subject),
                     ("recall", "--subject", subject, "--now-ts", str(LATER))):
            ran = memstack(*verb, "--limit", "1000", "--json", cwd=clone)
            assert ran.returncode == 0, ran.stderr
            found[f"{verb[:2]} {subject}"] = json.loads(ran.stdout)
    return found


def test_a_fresh_clone_answers_from_the_files_as_the_index_does(store: Path, tmp_path: Path) -> None:
    count = make_store(store)
    git(store, "add", "-A")
    git(store, "commit", "-q", "--no-verify", "-m", "facts, some written by another tool")
    clone = tmp_path / "clone"
    git(tmp_path, "clone", "-q", "--local", str(store), str(clone))
    assert not (clone / ".memstack").exists()

    # A build already under way (its lock held), so the queries cannot start one: every answer below comes
    # from the files, and the index stays as far behind as the clone left it.
    with locks.acquire(str(files.local_dir(clone, "locks") / "facts-index-build.lock")):
        from_files = answers(clone)
        behind = build.freshness(clone)
        assert not behind["fresh"] and behind["bytes_behind"] > build.BUILD_BUDGET

    for subject in SUBJECTS:
        assert len(from_files[f"('fact', 'history') {subject}"]["items"]) == count[subject], subject
    assert {f["agent"] for f in from_files["('fact', 'history') é"]["items"]} == {"alice", "bob"}  # both spellings

    # The next query starts the detached build; the answers, once it is done, come from the index.
    assert memstack("recall", "--subject", "plain", "--json", cwd=clone).returncode == 0
    deadline = time.monotonic() + 300
    while not build.freshness(clone)["fresh"] or build.building(clone):
        assert time.monotonic() < deadline, "the background index build never finished"
        time.sleep(0.1)
    assert answers(clone) == from_files


def test_a_value_is_found_however_a_line_spells_it(tmp_path: Path) -> None:
    """The byte search's exact rule: a line is read when it holds the value as memstack writes it or an escape."""
    from memstack.kb import factfiles

    subject = "a/é"
    ours = fact(subject, 1)
    theirs = {**fact(subject, 2), "subject": "a/\u00e9"}
    write(tmp_path, "kb/facts/alice/2026-01.jsonl", [jsonio.dumps_line(ours)])
    write(tmp_path, "kb/facts/bob/2026-01.jsonl",
          [(json.dumps(theirs).replace("/", "\\/") + "\n").encode()])  # `a\/\u00e9`: neither byte of it as ours
    write(tmp_path, "kb/facts/carol/2026-01.jsonl", [jsonio.dumps_line(fact("other", 3))])
    assert jsonio.dumps_line(subject)[:-1] not in (tmp_path / "kb/facts/bob/2026-01.jsonl").read_bytes()
    found = [(rel, f["id"]) for rel, _, f in factfiles.scan_for(tmp_path, [subject]) if f["subject"] == subject]
    assert found == [("kb/facts/alice/2026-01.jsonl", ours["id"]), ("kb/facts/bob/2026-01.jsonl", theirs["id"])]


def test_an_answer_from_the_files_is_reused_only_while_the_files_are_unchanged(tmp_path: Path) -> None:
    """One process asking twice about a subject (recall, then what it holds besides) searches the files once;
    a fact written in between changes a file, so the next answer searches again and holds it."""
    from memstack.kb import factstore

    make_store(tmp_path)
    with locks.acquire(str(files.local_dir(tmp_path, "locks") / "facts-index-build.lock")):  # no build meanwhile
        before = factstore.history(tmp_path, "plain")
        assert factstore.history(tmp_path, "plain") == before and len(before) == 3
        added = factstore.add(tmp_path, subject="plain", predicate="decided", object="new", valid_from=5,
                              recorded_at=JAN + 50, agent="alice")
        assert factstore.history(tmp_path, "plain") == sorted(
            [*before, added], key=lambda f: (f["valid_from"], f["recorded_at"], f["id"]))
        assert not build.freshness(tmp_path)["fresh"]  # all of it answered from the files


def test_a_store_inside_a_repository_whose_git_grep_prints_full_names(tmp_path: Path) -> None:
    """`grep.fullName` would print paths from the repository's top: the search asks for them from the store."""
    from memstack.kb import factstore

    git(tmp_path, "init", "-q")
    git(tmp_path, "config", "grep.fullName", "true")
    root = tmp_path / "memory"
    count = make_store(root)
    with locks.acquire(str(files.local_dir(root, "locks") / "facts-index-build.lock")):
        for subject in SUBJECTS:
            assert len(factstore.history(root, subject)) == count[subject], subject
        assert not build.freshness(root)["fresh"]


def test_many_values_are_found_in_one_pass_as_one_at_a_time(tmp_path: Path) -> None:
    """From factfiles.MANY values on, the files are read once, not once per value: the same lines, numbers and
    facts as asking for each value alone (a line that spells one with an escape included)."""
    from memstack.kb import factfiles

    facts = [fact(f"subject-{n % 40}", n) for n in range(400)]
    escaped = {**fact("a/é", 400), "subject": "a/\u00e9"}
    lines = [jsonio.dumps_line(f) for f in facts] + [(json.dumps(escaped).replace("/", "\\/") + "\n").encode()]
    write(tmp_path, "kb/facts/alice/2026-01.jsonl", lines)
    asked = [f"subject-{n}" for n in range(0, 40, 3)] + [facts[7]["id"], "a/é", "nobody"]
    assert len(asked) >= factfiles.MANY
    alone = sorted({(rel, number, f["id"]) for value in asked for rel, number, f in factfiles.scan_for(tmp_path,
                                                                                                       [value])})
    together = [(rel, number, f["id"]) for rel, number, f in factfiles.scan_for(tmp_path, asked)]
    assert together == alone and len(together) == 14 * 10 + 1 + 1
    assert together[-1] == ("kb/facts/alice/2026-01.jsonl", 401, escaped["id"])
