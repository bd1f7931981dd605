"""A commit's blobs written ahead by git on another core (repo/pathcommit.written_ahead): each file that exists is
in the object database after, as `git add` would write it; a missing path or one with a line break is passed by."""

import subprocess
from pathlib import Path

from helpers import git
from memstack.repo import pathcommit


def _in_objects(repo: Path, relpath: str) -> bool:
    blob = git(repo, "hash-object", relpath).stdout.strip()  # its id, nothing written
    return subprocess.run(["git", "cat-file", "-e", blob], cwd=repo).returncode == 0


def test_the_blobs_of_the_files_named_are_written_and_the_rest_passed_by(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    git(repo, "init", "-q")
    (repo / "kb").mkdir()
    named = {"kb/a.jsonl": b'{"a":1}\n', "kb/b c.jsonl": b'{"b":2}\n' * 1000, "top.md": b"top\n"}
    for relpath, data in named.items():
        (repo / relpath).write_bytes(data)
    (repo / "kb" / "line\nbreak.jsonl").write_bytes(b'{"c":3}\n')
    (repo / "left.md").write_bytes(b"not named\n")
    assert not any(_in_objects(repo, relpath) for relpath in named)

    pathcommit.written_ahead(repo, [*named, "kb/gone.jsonl", "kb/line\nbreak.jsonl"])()

    assert all(_in_objects(repo, relpath) for relpath in named)
    assert not _in_objects(repo, "left.md") and not _in_objects(repo, "kb/line\nbreak.jsonl")
    assert git(repo, "ls-files", "--stage").stdout == ""  # nothing staged: only objects written
