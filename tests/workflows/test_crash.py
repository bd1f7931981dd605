"""Crashes never block the next run: promote and capture killed (SIGKILL) at every write step.

`MEMSTACK_TEST_KILL_AT=N` makes memstack kill itself at its Nth write step (memstack/base/files.py,
`crash_point`: before each append, once a temporary file is written, after each rename, before
promote's commit). Each test kills a real `memstack` process at step 1, 2, 3, ... until a run
gets through, reruns, and compares with a run that was never interrupted.
"""

import json
import shutil
import signal
from pathlib import Path

import pytest

from helpers import git, items, memstack

NOW = "2026-03-01T00:00:00Z"


def killed_at(step: int, *args: str, cwd: Path) -> bool:
    """Run memstack killed at its `step`th write step; True if it was killed, False if it finished."""
    result = memstack(*args, cwd=cwd, env={"MEMSTACK_TEST_KILL_AT": str(step)})
    if result.returncode == -signal.SIGKILL:
        return True
    assert result.returncode == 0, result.stderr
    return False


def no_temporaries_beside_memory(store: Path) -> None:
    strays = [p for p in store.rglob("*.tmp") if ".memstack" not in p.parts and ".git" not in p.parts]
    assert not strays


def made_once(store: Path, template: Path) -> Path:
    """`store` replaced by a copy of `template` (a module fixture: a state made once for the module)."""
    shutil.rmtree(store)
    shutil.copytree(template, store, symlinks=True)
    return store


@pytest.fixture(scope="module")
def _pending(_store_template: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("pending") / "store"
    shutil.copytree(_store_template, root, symlinks=True)
    return make_pending(root)


@pytest.fixture
def pending(store: Path, _pending: Path) -> Path:
    """A store with intake waiting: facts that supersede each other, a citation, a binder record (`make_pending`,
    made once for the module)."""
    return made_once(store, _pending)


def make_pending(store: Path) -> Path:
    writes = [
        ("--tier", "verified", "--confidence", "0.9", "--subject", "build", "--predicate", "uses",
         "--object", "make", "--created-at", "2026-01-01T00:00:00Z"),
        ("--tier", "verified", "--confidence", "0.9", "--subject", "build", "--predicate", "uses",
         "--object", "ninja", "--created-at", "2026-01-05T00:00:00Z"),
        ("--source", "https://example.org/a", "--relevance-score", "0.7", "--title", "cited",
         "--created-at", "2026-01-02T00:00:00Z"),
        ("--content", "maybe tabs?", "--created-at", "2026-02-03T00:00:00Z"),
        ("--agent", "bob", "--tier", "verified", "--confidence", "1", "--subject", "style", "--predicate",
         "prefers", "--object", "spaces", "--created-at", "2026-02-04T00:00:00Z"),
    ]
    for extra in writes:
        args = ["intake", "write", *extra] + ([] if "--content" in extra else ["--content", "c"])
        assert memstack(*args, cwd=store).returncode == 0
    git(store, "add", "-A")
    git(store, "commit", "-q", "-m", "intake")
    return store


@pytest.mark.slow
def test_a_promotion_killed_at_any_step_is_finished_by_the_next_run(pending: Path, tmp_path: Path) -> None:
    reference = tmp_path / "reference"
    shutil.copytree(pending, reference, symlinks=True)
    assert memstack("promote", "--now-ts", NOW, cwd=reference).returncode == 0
    expected_tree = git(reference, "rev-parse", "HEAD^{tree}").stdout
    base = git(pending, "rev-parse", "HEAD").stdout.strip()
    step = 0
    while True:
        step += 1
        run = tmp_path / f"run{step}"
        shutil.copytree(pending, run, symlinks=True)
        if not killed_at(step, "promote", "--now-ts", NOW, cwd=run):
            break
        no_temporaries_beside_memory(run)
        rerun = memstack("promote", "--now-ts", NOW, cwd=run)
        assert rerun.returncode == 0, (step, rerun.stderr)
        # The same tree as a run never interrupted, committed through the hooks, nothing left over.
        assert git(run, "rev-parse", "HEAD^{tree}").stdout == expected_tree, step
        assert git(run, "status", "--porcelain").stdout == "", step
        checked = memstack("check", "--range", f"{base}..HEAD", cwd=run)
        assert checked.returncode == 0, (step, checked.stdout, checked.stderr)
        shutil.rmtree(run)
    assert step > 10  # every append, temporary file, rename and the commit was a kill point


def test_a_promotion_killed_in_its_commit_leaves_a_lock_the_rerun_names(pending: Path) -> None:
    lock = pending / ".git" / "index.lock"
    lock.write_bytes(b"")  # what git leaves when it is killed while it commits
    before = git(pending, "status", "--porcelain").stdout
    refused = memstack("promote", "--now-ts", NOW, cwd=pending)
    assert refused.returncode == 2
    assert str(lock) in refused.stderr and "remove" in refused.stderr and "Traceback" not in refused.stderr
    assert len(refused.stderr.strip().splitlines()) == 1
    assert git(pending, "status", "--porcelain").stdout == before  # refused before writing anything
    lock.unlink()
    assert memstack("promote", "--now-ts", NOW, cwd=pending).returncode == 0
    assert git(pending, "status", "--porcelain").stdout == ""


def test_git_s_lock_appearing_during_a_git_command_is_a_clear_error(store: Path) -> None:
    from memstack.base.errors import MemstackError
    from memstack.repo import git as gitlayer

    (store / "new.txt").write_text("x\n")
    (store / ".git" / "index.lock").write_bytes(b"")
    with pytest.raises(MemstackError, match=r"git is locked: .*index\.lock exists .* remove"):
        gitlayer.run(store, "add", "new.txt")


def history(store: Path, subject: str) -> list[dict]:
    result = memstack("fact", "history", "--subject", subject, "--json", cwd=store)
    assert result.returncode == 0, result.stderr
    return items(json.loads(result.stdout))


def shape(facts: list[dict]) -> list[tuple]:
    """The facts without their ids: object, window, closing, and whom each is superseded by (as an object)."""
    objects = {f["id"]: f["object"] for f in facts}
    return sorted((f["object"], f["valid_from"], f["valid_to"], f["recorded_at"], f["expired_at"],
                   objects.get(f["superseded_by"], f["superseded_by"])) for f in facts)


CAPTURE = ("capture", "--subject", "db", "--predicate", "decided", "--object", "postgres", "--valid-from",
           "2026-02-01T00:00:00Z", "--recorded-at", "2026-02-01T00:00:00Z", "--contradicts")


@pytest.fixture(scope="module")
def _decided(_store_template: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("decided") / "store"
    shutil.copytree(_store_template, root, symlinks=True)
    return make_decided(root)


@pytest.fixture
def decided(store: Path, _decided: Path) -> Path:
    """A store with one decision committed (`make_decided`, made once for the module)."""
    return made_once(store, _decided)


def make_decided(store: Path) -> Path:
    first = memstack("capture", "--subject", "db", "--predicate", "decided", "--object", "sqlite",
                     "--valid-from", "2026-01-01T00:00:00Z", "--recorded-at", "2026-01-01T00:00:00Z", cwd=store)
    assert first.returncode == 0
    # The prior in another month's file than its successor: two files change.
    git(store, "add", "-A")
    git(store, "commit", "-q", "-m", "a decision")
    return store


def test_a_capture_killed_at_any_step_never_leaves_a_dangling_closing(decided: Path, tmp_path: Path) -> None:
    reference = tmp_path / "reference"
    shutil.copytree(decided, reference, symlinks=True)
    assert memstack(*CAPTURE, cwd=reference).returncode == 0
    done, untouched = shape(history(reference, "db")), shape(history(decided, "db"))
    outcomes = set()
    step = 0
    while True:
        step += 1
        run = tmp_path / f"run{step}"
        shutil.copytree(decided, run, symlinks=True)
        if not killed_at(step, *CAPTURE, cwd=run):
            break
        no_temporaries_beside_memory(run)
        # The next write finishes the capture, or finds it never happened.
        assert memstack("fact", "add", "--subject", "other", "--predicate", "p", "--object", "o",
                        "--valid-from", NOW, "--recorded-at", NOW, cwd=run).returncode == 0
        found = history(run, "db")
        ids = {f["id"] for f in found}
        assert all(f["superseded_by"] in ids for f in found if f["superseded_by"])
        assert shape(found) in (done, untouched), step
        outcomes.add("done" if shape(found) == done else "untouched")
        if shape(found) == untouched:  # the user runs it again
            assert memstack(*CAPTURE, cwd=run).returncode == 0
            assert shape(history(run, "db")) == done
        git(run, "add", "-A")
        committed = git(run, "commit", "-q", "-m", "after a crash", check=False)  # through the hooks
        assert committed.returncode == 0, (step, committed.stdout, committed.stderr)
        shutil.rmtree(run)
    assert step > 4 and outcomes == {"done", "untouched"}


def test_temporaries_a_killed_run_left_never_reach_a_commit_and_are_cleaned(store: Path) -> None:
    killed = memstack("soil", "put", "notes", "k", "--value", "1", cwd=store, env={"MEMSTACK_TEST_KILL_AT": "1"})
    assert killed.returncode == -signal.SIGKILL
    left = list((store / ".memstack" / "tmp").iterdir())
    assert len(left) == 1 and not (store / "store" / "notes" / "k.json").exists()
    assert git(store, "status", "--porcelain").stdout == ""  # git-ignored
    assert memstack("soil", "put", "notes", "k", "--value", "2", cwd=store).returncode == 0
    assert not left[0].exists()  # its process is gone: the next write removed it
    git(store, "add", "-A")
    assert git(store, "commit", "-q", "-m", "soil", check=False).returncode == 0


def test_capture_s_default_transaction_time_is_taken_once_it_holds_the_lock(decided: Path) -> None:
    """A capture waiting for another on the same subject+predicate must not record a time from before it waited."""
    import subprocess
    import time

    from helpers import MEMSTACK
    from memstack.base import files, times
    from memstack.kb import factstore

    args = ("capture", "--subject", "db", "--predicate", "decided", "--object", "postgres",
            "--valid-from", "2026-02-01T00:00:00Z", "--contradicts", "--json")
    with files.locked(decided, factstore.key_lock("db", "decided")):
        waiting = subprocess.Popen([MEMSTACK, *args], cwd=decided, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                   text=True)
        time.sleep(1.0)  # it starts, validates, and waits for the lock
        released = times.now_ms()
    out, err = waiting.communicate(timeout=60)
    assert waiting.returncode == 0, err
    new, closed = json.loads(out)
    assert new["recorded_at"] >= released and closed["expired_at"] == new["recorded_at"]
