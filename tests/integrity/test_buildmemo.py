"""The promotion commit's check takes promote's own full build of the views (buildmemo.py): real
stores, promote run in this process (its commit's check runs in the same process, as it does for
`memstack promote`), `views.build` counted by the source it is given."""

import shutil
from pathlib import Path

import pytest

from helpers import git, memstack
from memstack.base.errors import MemstackError
from memstack.intake import log as intake
from memstack.integrity import buildmemo
from memstack.kb import views
from memstack.workflows import promote
from memstack.workflows.promote import commit

NOW_MS = 1_780_272_000_000  # 2026-06-01T00:00:00Z: after every record written here
VIEWS = 4  # kb/knowledge.json, jeles_atoms.json, opus_atoms.json, binder_queue.json


def write(store: Path) -> None:
    """Records for knowledge and for the binder: the first promotion of a store with no view
    committed builds the views from every fact file."""
    for n in range(5):
        intake.write(store, intake.make_record(agent="alice", content=f"record {n}", tier="verified", confidence=0.9,
                                               created_at=f"2026-02-{n + 1:02d}T00:00:00Z", subject=f"s{n}",
                                               predicate="decided", object="x"))
    intake.write(store, intake.make_record(agent="alice", content="maybe", title="maybe",
                                           created_at="2026-02-09T00:00:00Z"))


@pytest.fixture
def builds(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The sources views.build is called with in this process, by their type's name."""
    calls: list[str] = []
    real = views.build

    def counted(source):  # type: ignore[no-untyped-def]
        calls.append(type(source).__name__)
        return real(source)

    monkeypatch.setattr(views, "build", counted)
    return calls


def audited(store: Path) -> None:
    rebuilt = memstack("rebuild", "--check", cwd=store)
    assert rebuilt.returncode == 0, rebuilt.stdout + rebuilt.stderr
    audit = memstack("check", "--all", cwd=store)
    assert audit.returncode == 0 and "stale" not in audit.stdout, audit.stdout + audit.stderr


def test_the_commit_check_takes_promotes_build_and_lands_the_same_commit(
        store: Path, tmp_path: Path, builds: list[str], monkeypatch: pytest.MonkeyPatch) -> None:
    write(store)
    other = tmp_path / "other"
    shutil.copytree(store, other, symlinks=True)
    used = buildmemo.used
    assert promote.promote(store, NOW_MS)["commit"]
    assert buildmemo.used - used == VIEWS  # every view, new in this commit, taken from the memo
    assert builds == ["_Recorder"]  # one build, promote's: the check built nothing
    # The same promotion, its check building the views of the index as it did before the memo.
    monkeypatch.setattr(buildmemo, "accepted", lambda *args: set())
    builds.clear()
    assert promote.promote(other, NOW_MS)["commit"]
    assert builds == ["_Recorder", "GitSource"]
    assert git(store, "rev-parse", "HEAD^{tree}").stdout == git(other, "rev-parse", "HEAD^{tree}").stdout
    assert git(store, "status", "--porcelain").stdout == ""
    audited(store)
    assert buildmemo.held() is None  # forgotten once promote is done


def test_only_promote_records_its_build(store: Path, builds: list[str]) -> None:
    write(store)
    assert promote.promote(store, NOW_MS, commit=False)["changed"]
    promote.rebuild(store, patched=True)  # as `sync` rebuilds: a whole build (no view committed), not recorded
    assert promote.stale(store, patched=True) == []  # as `status` asks
    assert builds == ["_Recorder", "WorktreeSource", "WorktreeSource"]
    assert buildmemo.held() is None


@pytest.mark.parametrize("edit", ["fact file", "view"])
def test_a_change_after_the_build_is_checked_without_the_memo(
        store: Path, builds: list[str], monkeypatch: pytest.MonkeyPatch, edit: str) -> None:
    """A fact file edited and staged between promote's build and its check makes the memo miss (the
    staged view, as promote built it, no longer follows from the sources); a view edited by hand is
    one the memo does not know. Either way the check builds, and refuses the view (I4)."""
    write(store)
    real = commit.check_here

    def edited_then_checked(top: Path, folder: str) -> None:
        path = next((store / "kb/facts/alice").glob("*.jsonl")) if edit == "fact file" else store / "kb/knowledge.json"
        path.write_bytes(path.read_bytes().replace(b'"object":"x"', b'"object":"y"', 1))
        git(store, "add", "-A", "kb")
        real(top, folder)

    monkeypatch.setattr(commit, "check_here", edited_then_checked)
    used = buildmemo.used
    with pytest.raises(MemstackError) as refused:
        promote.promote(store, NOW_MS)
    assert "kb/knowledge.json:2: I4 differs from what a rebuild makes" in refused.value.message
    assert builds == ["_Recorder", "GitSource"]
    # the memo missed; a hand-edited view: the three others were taken from it
    assert buildmemo.used - used == (0 if edit == "fact file" else VIEWS - 1)


def test_a_store_in_a_folder_of_a_code_repository(tmp_path: Path, builds: list[str]) -> None:
    repo = tmp_path / "code"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    (repo / "README.md").write_text("# a project\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "code")
    assert memstack("init", ".memory", "--agent", "alice", cwd=repo).returncode == 0
    store = repo / ".memory"
    write(store)
    (repo / "app.py").write_text("print('work in progress')\n")  # not the store's: left out of the commit
    used = buildmemo.used
    assert promote.promote(store, NOW_MS)["commit"]
    assert buildmemo.used - used == VIEWS and builds == ["_Recorder"]
    assert git(repo, "status", "--porcelain").stdout == "?? app.py\n"
    audited(store)
