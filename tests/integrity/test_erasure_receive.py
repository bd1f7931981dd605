"""A guarded remote (hooks/pre-receive) accepts the force push of an excise, with its receipt, and nothing
else that rewrites a branch: a forged receipt, a receipt with a wrong map, a rewrite that changed one other
byte. After the server's documented clean-up it holds no byte of the excised content."""

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from excise_support import SECRETS, Forgotten, commit, every_object, ok

from check_support import guarded_bare
from helpers import git, memstack


@pytest.fixture
def remote(bare: Path) -> Path:
    """The guarded remote: a bare repository with memstack's pre-receive hook (check_support.bare)."""
    return bare


def push(store: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return git(store, "push", "--no-verify", *args, check=False)


@pytest.fixture(scope="module")
def _excised(_forgotten_template: Forgotten, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict]:
    """The folder of `excised`, made once for the module: `store` (its forgotten history pushed to the guarded
    `remote.git`, then excised here, not pushed yet); and the excise's receipt."""
    folder = tmp_path_factory.mktemp("excised")
    store = folder / "store"
    shutil.copytree(_forgotten_template[0], store, symlinks=True)
    git(store, "remote", "add", "origin", str(guarded_bare(folder / "remote.git")))
    pushed = push(store, "origin", "main")
    assert pushed.returncode == 0, pushed.stderr
    done = ok(store, "excise")
    return folder, done["receipt"]


@pytest.fixture
def excised(_excised: tuple[Path, dict], tmp_path: Path) -> tuple[Path, dict, Path]:
    """A store whose forgotten history was pushed to the guarded remote, then excised here (not pushed yet):
    a copy of `_excised`. Returns (the store, the receipt, the remote)."""
    folder, receipt = _excised
    shutil.copytree(folder, tmp_path, symlinks=True, dirs_exist_ok=True)
    git(tmp_path / "store", "remote", "set-url", "origin", str(tmp_path / "remote.git"))
    return tmp_path / "store", receipt, tmp_path / "remote.git"


def remote_head(remote: Path) -> str:
    return git(remote, "rev-parse", "main").stdout.strip()


def refused(store: Path, remote: Path, source: str, *expected: str) -> None:
    before = remote_head(remote)
    said = push(store, "--force", "origin", f"{source}:main")
    assert said.returncode != 0, said.stderr
    for text in expected:
        assert text in said.stderr, said.stderr
    assert remote_head(remote) == before


def commit_receipt(store: Path, base: str, receipt: dict) -> str:
    """A commit on `base` appending `receipt` to kb/erasures.jsonl (past the hook), on branch `forged`."""
    git(store, "checkout", "-q", "-B", "forged", base)
    log = store / "kb/erasures.jsonl"
    with log.open("a") as out:
        out.write(json.dumps(receipt, sort_keys=True, separators=(",", ":")) + "\n")
    git(store, "add", "-A")
    git(store, "commit", "-q", "--no-verify", "-m", "memstack excise: receipt")
    return git(store, "rev-parse", "HEAD").stdout.strip()


def test_the_excise_is_accepted_and_the_server_clean_up_leaves_no_byte(excised: tuple[Path, dict, Path]) -> None:
    store, receipt, remote = excised
    old = receipt["heads"]["refs/heads/main"]["old"]
    assert remote_head(remote) == old
    said = push(store, f"--force-with-lease=main:{old}", "origin", "main")
    assert said.returncode == 0, said.stderr
    assert remote_head(remote) == git(store, "rev-parse", "main").stdout.strip()
    # the documented clean-up on the server (docs/forgetting.md, Excise)
    git(remote, "reflog", "expire", "--expire=now", "--all")
    git(remote, "gc", "--prune=now", "--quiet")
    everything = every_object(remote) + subprocess.run(["git", "cat-file", "--batch-all-objects", "--batch"],
                                                       cwd=remote, capture_output=True, check=True).stdout
    assert not [text for text in SECRETS if text.encode() in everything]


def test_a_forged_receipt_on_a_hand_made_rewrite_is_refused(excised: tuple[Path, dict, Path]) -> None:
    store, receipt, remote = excised
    old = receipt["heads"]["refs/heads/main"]["old"]
    # a rewrite by hand: the old history's last commit made again without the tombstones
    git(store, "fetch", "-q", "origin")
    git(store, "checkout", "-q", "-B", "hand", f"{old}~1")
    (store / "store/notes/kept.json").write_text(json.dumps({"tampered": True}) + "\n")
    git(store, "add", "-A")
    git(store, "commit", "-q", "--no-verify", "-m", "forget")
    hand = git(store, "rev-parse", "HEAD").stdout.strip()
    forged = commit_receipt(store, hand, {**receipt, "heads": {"refs/heads/main": {"old": old, "new": hand}}})
    refused(store, remote, forged, "is not the one receipt", "does not keep")


def test_a_receipt_with_a_wrong_map_is_refused(excised: tuple[Path, dict, Path]) -> None:
    store, receipt, remote = excised
    new = receipt["heads"]["refs/heads/main"]["new"]
    other = git(store, "rev-parse", f"{new}~1").stdout.strip()
    wrong = commit_receipt(store, "main", {**receipt, "id": receipt["id"][:-8] + "00000000",
                                           "heads": {"refs/heads/main": {"old": other, "new": new}}})
    refused(store, remote, wrong, "its map does not move refs/heads/main")
    unmapped = commit_receipt(store, "main", {**receipt, "heads": {"refs/heads/other": receipt["heads"]
                                                                   ["refs/heads/main"]}})
    refused(store, remote, unmapped, "its map does not move refs/heads/main")


def test_a_rewrite_that_changed_one_other_byte_is_refused(excised: tuple[Path, dict, Path]) -> None:
    store, receipt, remote = excised
    heads = receipt["heads"]["refs/heads/main"]
    git(store, "branch", "-f", "tamper", heads["new"])
    script = ("import git_filter_repo as g\n"
              "def cb(blob, _):\n    blob.data = blob.data.replace(b'\"visible\"', b'\"visiblE\"')\n"
              "g.RepoFilter(g.FilteringOptions.parse_args(['--force', '--quiet', '--refs', 'refs/heads/tamper',"
              " '--preserve-commit-hashes', '--prune-empty', 'never']), blob_callback=cb).run()\n")
    done = subprocess.run([sys.executable, "-c", script], cwd=store, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    tampered = git(store, "rev-parse", "tamper").stdout.strip()
    assert tampered != heads["new"]
    forged = commit_receipt(store, tampered, {**receipt, "heads": {"refs/heads/main": {**heads, "new": tampered}}})
    refused(store, remote, forged, "store/notes/kept.json changed beyond the excised records' content")
    # and the rewrite pushed without any receipt is refused as any force push is
    refused(store, remote, tampered, "force push")
    assert memstack("check", "--range", "main", cwd=store).returncode == 0


def test_a_fact_willow_showed_is_excised_and_the_guarded_remote_takes_the_rewrite(store: Path, remote: Path) -> None:
    """willow.md shows a fact by its line, without its id: that line is excised in every commit that showed it,
    as a rebuild of the excised commit would make it, and the remote's verification agrees."""
    [fact] = ok(store, "capture", "--subject", "Quaxwillowsubject", "--predicate", "phone", "--object",
                "Quaxwillowobject")
    assert memstack("rebuild", cwd=store).returncode == 0
    assert "Quaxwillowobject" in (store / "willow.md").read_text()
    commit(store, "a fact willow shows")
    git(store, "remote", "add", "origin", str(remote))
    assert push(store, "origin", "main").returncode == 0
    ok(store, "forget", fact["id"], "--reason", "erasure request")
    commit(store, "forget")
    assert push(store, "origin", "main").returncode == 0

    done = memstack("excise", cwd=store)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "willow.md: 1 version(s)" in done.stdout
    assert b"Quaxwillow" not in every_object(store)
    shown = git(store, "show", "main~2:willow.md").stdout  # the commit that showed the fact, rewritten
    assert "- **[excised sha256:" in shown and "Quaxwillow" not in shown
    pushed = push(store, "--force", "origin", "main")
    assert pushed.returncode == 0, pushed.stderr
    assert remote_head(remote) == git(store, "rev-parse", "main").stdout.strip()


def test_a_second_excise_is_accepted_after_one_whose_record_had_a_fact(excised: tuple[Path, dict, Path]) -> None:
    """The first excise's record was promoted, and its forget closed the fact: the commits before the forget
    add the fact's line open, the branch holds it closed. A second excise rewrites those commits again
    (their ids change): its push is not history from before the first rewrite, and is accepted."""
    store, receipt, remote = excised
    old = receipt["heads"]["refs/heads/main"]["old"]
    assert push(store, f"--force-with-lease=main:{old}", "origin", "main").returncode == 0
    listed = ok(store, "intake", "list", "--agent", "alice")["items"]
    [other] = [r["id"] for r in listed if r.get("content") == "an unrelated note that stays"]
    ok(store, "forget", other, "--reason", "a second request")
    head = commit(store, "forget another")
    assert push(store, "origin", "main").returncode == 0
    done = ok(store, "excise", "--reason", "a second request")
    assert done["push"] == [f"git push --force-with-lease=refs/heads/main:{head} <remote> refs/heads/main"]
    said = push(store, f"--force-with-lease=main:{head}", "origin", "main")
    assert said.returncode == 0, said.stderr
    assert remote_head(remote) == git(store, "rev-parse", "main").stdout.strip()
