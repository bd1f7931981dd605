"""What a new user notices in the first ten minutes: counts in words, reruns that say what they did,
and no silent answers."""

import json
import shutil
from pathlib import Path

from helpers import git, memstack
from memstack.base.output import plural
from memstack.intake import log as intake

NOW = "2026-03-01T00:00:00Z"


def write(store: Path, **fields: object) -> dict:
    record = intake.make_record(**{"agent": "alice", "content": "c", "created_at": "2026-01-01T00:00:00Z",
                                   **fields})  # type: ignore[arg-type]
    intake.write(store, record)
    return record


def promote(store: Path) -> str:
    proc = memstack("promote", "--now-ts", NOW, cwd=store)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def test_plural_words() -> None:
    assert [plural(n, "record") for n in (0, 1, 2)] == ["0 records", "1 record", "2 records"]
    assert plural(1, "entry", "entries") == "1 entry" and plural(3, "entry", "entries") == "3 entries"


def test_one_record_routed_is_said_in_the_singular(store: Path) -> None:
    write(store, tier="verified", confidence=0.9)
    out = promote(store)
    assert out.startswith("memstack promote: 1 record routed\n"), out
    assert git(store, "log", "-1", "--format=%s").stdout.strip() == "memstack promote: 1 record routed"
    write(store, content="d", created_at="2026-01-02T00:00:00Z")
    dry = memstack("promote", "--dry-run", cwd=store)
    assert dry.stdout.splitlines()[0] == "1 record would be routed: binder 1 (dry run: nothing written)", dry.stdout


def test_a_promotion_of_a_ratified_record_says_so_first(store: Path) -> None:
    waiting = write(store, content="maybe tabs?")
    git(store, "add", "-A")
    git(store, "commit", "-qm", "intake")
    assert "1 record routed" in promote(store)
    assert memstack("binder", "ratify", waiting["id"], "--by", "ada", cwd=store).returncode == 0
    out = promote(store)
    head = out.splitlines()[0]
    assert head == "memstack promote: 1 ratified record made knowledge", out
    assert "0 records routed" not in out and "ratified in the Binder, now knowledge: 1" in out
    message = git(store, "log", "-1", "--format=%B").stdout  # the trailers scripts read: unchanged
    assert "Memstack-Routed: 0" in message and "Memstack-Ratified: 1" in message


def test_install_twice_says_what_was_already_in_place(store: Path) -> None:
    # The fixture's store was installed by init in this process, whose interpreter path may be spelled
    # apart from the command's (`python` or `python3` in one venv): one install makes them agree.
    assert memstack("install", cwd=store).returncode == 0
    first = memstack("install", cwd=store)
    assert first.returncode == 0, first.stderr
    assert "installed" not in first.stdout and first.stdout.startswith("already in place: ")
    assert ".git/hooks/pre-commit" in first.stdout and "git config merge.memstack.driver" in first.stdout
    git(store, "config", "--unset", "merge.memstack.driver")
    (store / ".git" / "hooks" / "pre-push").unlink()
    again = json.loads(memstack("install", "--json", cwd=store).stdout)
    assert again["installed"] == [".git/hooks/pre-push", "git config merge.memstack.driver"]
    assert ".git/hooks/pre-commit" in again["already"] and "git config memstack.python" in again["already"]
    assert (store / ".git" / "hooks" / "pre-push").is_file()


def test_init_on_a_finished_store_says_which_agent_it_did_not_add(store: Path) -> None:
    head = git(store, "rev-parse", "HEAD").stdout
    config = (store / "memstack.yaml").read_bytes()
    proc = memstack("init", str(store), "--agent", "alice", "--agent", "carol")
    assert proc.returncode == 0, proc.stderr
    assert "already a memstack store; nothing changed" in proc.stdout
    assert "not added: agent carol" in proc.stdout and "alice" not in proc.stdout.split("not added:")[1]
    assert (store / "memstack.yaml").read_bytes() == config and not (store / "identity" / "carol.md").exists()
    assert git(store, "rev-parse", "HEAD").stdout == head and git(store, "status", "--porcelain").stdout == ""
    document = json.loads(memstack("init", str(store), "--agent", "carol", "--json").stdout)
    assert document["created"] is False and document["agents_not_added"] == ["carol"]
    quiet = memstack("init", str(store), "--agent", "bob")  # already an agent: nothing to say about it
    assert "not added" not in quiet.stdout


def test_init_takes_the_store_from_store_and_refuses_two_places(tmp_path: Path) -> None:
    proc = memstack("init", "--store", str(tmp_path / "mem"), "--agent", "claude", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert (tmp_path / "mem" / "memstack.yaml").is_file() and not (tmp_path / "memstack.yaml").exists()
    both = memstack("init", str(tmp_path / "a"), "--store", str(tmp_path / "b"), cwd=tmp_path)
    assert both.returncode == 2 and both.stderr.startswith("memstack: bad --store")
    assert not (tmp_path / "a").exists() and not (tmp_path / "b").exists()
    shutil.rmtree(tmp_path / "mem")


def test_recall_without_a_store_answers_empty_and_says_why_on_stderr(tmp_path: Path) -> None:
    proc = memstack("recall", "--subject", "deploys", cwd=tmp_path)
    assert proc.returncode == 0
    assert proc.stdout == "nothing recalled about 'deploys'\n"
    assert "no memstack store here" in proc.stderr
    document = memstack("recall", "--subject", "deploys", "--json", cwd=tmp_path)
    assert json.loads(document.stdout)["items"] == [] and "no memstack store here" in document.stderr


def test_recall_in_a_store_says_nothing_on_stderr(store: Path) -> None:
    proc = memstack("recall", "--subject", "deploys", cwd=store)
    assert proc.returncode == 0 and proc.stderr == ""
