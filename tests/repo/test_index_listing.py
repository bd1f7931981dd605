"""A staged check lists the index's folders (the knowledge view, then each agent's folder of it) from one
`git ls-files` of the first folder listed, not one git process a folder; the names are what git lists."""

import subprocess
from pathlib import Path

from memstack.repo import objects
from memstack.repo.sources import GitSource


def test_the_folders_of_a_listed_folder_come_from_one_git_process(tmp_path: Path, monkeypatch) -> None:
    repo = tmp_path / "repo"
    for path in ("kb/knowledge/alice/2026-01.json", "kb/knowledge/alice/2026-02.json", "kb/knowledge/bob/2026-01.json",
                 "kb/knowledge/carol/deeper/x.json", "intake/alice/2026-01-01.jsonl"):
        (repo / path).parent.mkdir(parents=True, exist_ok=True)
        (repo / path).write_text("[]\n")
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    subprocess.run(["git", "add", "-A"], cwd=repo, check=True)
    (repo / "kb/knowledge/dave").mkdir()  # in the work tree only: not in the index
    (repo / "kb/knowledge/dave/2026-01.json").write_text("[]\n")
    trace = tmp_path / "trace"
    monkeypatch.setenv("GIT_TRACE", str(trace))
    with objects.CatFile(repo) as cat:
        source = GitSource(repo, cat, None)
        listed = {folder: source.listdir(folder) for folder in (
            "kb/knowledge", "kb/knowledge/alice", "kb/knowledge/bob/", "kb/knowledge/carol",
            "kb/knowledge/carol/deeper", "kb/knowledge/dave", "kb/knowledge/alice/2026-01.json")}
    assert listed == {"kb/knowledge": ["alice", "bob", "carol"], "kb/knowledge/alice": ["2026-01.json", "2026-02.json"],
                      "kb/knowledge/bob/": ["2026-01.json"], "kb/knowledge/carol": ["deeper"],
                      "kb/knowledge/carol/deeper": ["x.json"], "kb/knowledge/dave": [],
                      "kb/knowledge/alice/2026-01.json": []}
    assert trace.read_text().count("ls-files") == 1
