"""willow.md's "To re-verify": the open facts whose anchored lines are no longer at their path in the code of the
commit it is built in, through real commits and the installed hooks: drifted, gone (moved or deleted), shifted
lines that still hold, a re-check, a forgotten fact, `check --range`, a guarded remote, two clones that meet
by a merge and by `memstack sync`, and an excise."""

import json
from pathlib import Path

from anchors_support import capture, edit

from check_support import committed, head, refused
from helpers import git, memstack
from team_support import check_history, clone, guarded_remote, pushed

MEMORY = ".memory"
HEADING = "## To re-verify"


def _willow(code: Path) -> str:
    return (code / MEMORY / "willow.md").read_text()


def _listed(code: Path) -> list[str]:
    """The entries of willow.md's To re-verify section (none when it has no such section)."""
    text = _willow(code)
    if HEADING not in text:
        return []
    section = text.split(HEADING, 1)[1].split("\n## ", 1)[0]
    return [line for line in section.splitlines() if line.startswith("- ")]


def _ok(code: Path, *args: str) -> str:
    result = memstack(*args, cwd=code)
    assert result.returncode == 0, result.stdout + result.stderr
    return result.stdout


def _promoted(code: Path) -> None:
    """`memstack promote`: it rebuilds the boot files and commits them through the hook."""
    _ok(code, "promote")


def test_a_fact_whose_anchored_lines_changed_is_listed_once_the_code_is_committed_and_leaves_when_rechecked(
        code: Path) -> None:
    day = capture(code, "deploys", "monday", "app.py:4-5")
    kept = capture(code, "imports", "os", "app.py:1")
    committed(code, "memory about the code")
    _promoted(code)
    assert HEADING not in _willow(code)  # nothing to re-verify: no section, willow.md as it always was

    edit(code, "app.py", "return 'monday'", "return 'friday'")
    committed(code, "deploy on fridays")  # the code alone: the hook has nothing of the store to check
    assert HEADING not in _willow(code)  # a snapshot as of its last rebuild...
    stale = memstack("rebuild", "--check", cwd=code)
    assert stale.returncode == 1 and "willow.md" in stale.stdout + stale.stderr  # ...which is said to be stale
    _promoted(code)
    [entry] = _listed(code)
    assert entry == f"- drifted: **deploys** decided monday (fact `{day}`): `app.py:4-5` changed"
    assert kept not in _willow(code).split(HEADING)[1].split("## Knowledge")[0]

    edit(code, "app.py", "import os\n", "import os\nimport sys\n")  # shifts the lines of the other anchors
    committed(code, "an import")
    _ok(code, "boot", "rebuild")
    assert _listed(code) == [entry]  # app.py:1 still holds (still line 1); the drifted anchor is named as taken

    _ok(code, "anchors", "reverify", day, "--by", "ada")
    _ok(code, "boot", "rebuild")
    assert _listed(code) == []  # re-checked at its new lines: it holds there
    committed(code, "re-checked")

    git(code, "mv", "app.py", "release.py")
    committed(code, "renamed")
    _promoted(code)
    gone = "not at its path: moved or deleted; `memstack anchors` tells which"
    assert _listed(code) == [f"- gone: **imports** decided os (fact `{kept}`): `app.py:1` {gone}",  # the later
                             f"- gone: **deploys** decided monday (fact `{day}`): `app.py:5-6` {gone}"]
    check_history(code)


def test_a_deleted_file_a_symlink_and_a_binary_file_are_gone_and_the_history_passes_every_gate(
        code: Path, tmp_path: Path) -> None:
    remote = guarded_remote(code, tmp_path)
    helper = capture(code, "helpers", "small", "lib/util.py")
    day = capture(code, "deploys", "monday", "app.py:4-5")
    committed(code, "memory")
    git(code, "rm", "-q", "lib/util.py")
    (code / "app.py").unlink()
    (code / "app.py").symlink_to("lib")
    committed(code, "no helpers; app.py a link")
    _promoted(code)
    listed = _listed(code)
    assert len(listed) == 2 and all(line.startswith("- gone: ") for line in listed)
    assert {helper, day} == {line.split("(fact `")[1].split("`")[0] for line in listed}
    (code / "app.py").unlink()
    (code / "app.py").write_bytes(b"\0binary\0")
    git(code, "rm", "-q", "--cached", "app.py")
    committed(code, "app.py binary")
    _promoted(code)
    assert any(f"`{day}`): `app.py:4-5` not at its path" in line for line in _listed(code))
    check_history(code)
    pushed(code)  # through the remote's pre-receive
    assert git(remote, "rev-parse", "main").stdout.strip() == head(code)


def _drifted(code: Path, day: str) -> str:
    """A promoted fact anchored to the deploy day's lines, whose code is then changed and committed:
    listed as drifted (the promotion is after the edit). Its id."""
    fact = capture(code, "deploys", day, "app.py:4-5")
    committed(code, "memory")
    edit(code, "app.py", "return 'monday'", "return 'friday'")
    committed(code, "fridays")
    _promoted(code)
    return fact


def test_a_forgotten_fact_is_not_listed(code: Path) -> None:
    day = _drifted(code, "monday")
    assert len(_listed(code)) == 1
    _ok(code, "forget", day, "--reason", "wrong all along")
    _ok(code, "boot", "rebuild")
    assert _listed(code) == [] and "monday" not in _willow(code).split("## Knowledge")[0]
    committed(code, "forgotten")
    check_history(code)


def _two_clones(code: Path, tmp_path: Path) -> tuple[str, Path, Path, Path]:
    """A promoted fact anchored to the deploy day, pushed to a guarded remote; alice's and bob's clones of it."""
    day = capture(code, "deploys", "monday", "app.py:4-5")
    committed(code, "memory")
    _promoted(code)
    remote = guarded_remote(code, tmp_path)
    alice = clone(remote, tmp_path / "alice")
    bob = clone(remote, tmp_path / "bob")
    for who in (alice, bob):
        git(who, "config", "user.name", who.name)
        git(who, "config", "user.email", f"{who.name}@example.com")
    return day, remote, alice, bob


def test_two_clones_meet_by_a_merge_and_by_sync_and_every_gate_passes(code: Path, tmp_path: Path) -> None:
    day, remote, alice, bob = _two_clones(code, tmp_path)

    edit(alice, "app.py", "return 'monday'", "return 'friday'")
    committed(alice, "alice: fridays")  # code alone
    capture(bob, "regions", "eu", "app.py:8-9")
    _promoted(bob)  # bob's willow.md: built against bob's code, where the deploy day still holds
    assert _listed(bob) == []
    pushed(bob)

    merged = git(alice, "pull", "-q", "--no-rebase", "--no-edit", "origin", "main", check=False)
    assert merged.returncode == 0, merged.stdout + merged.stderr
    check_history(alice)  # the merge holds bob's willow.md, taken from the commit that built it
    _ok(alice / MEMORY, "sync")  # rebuilds against the merged code, commits through the hook, pushes
    assert [line.split("(fact `")[1].split("`")[0] for line in _listed(alice)] == [day]
    check_history(alice)
    assert git(remote, "rev-parse", "main").stdout.strip() == head(alice)

    pulled = git(bob, "pull", "-q", "--no-rebase", "--no-edit", "origin", "main", check=False)
    assert pulled.returncode == 0, pulled.stdout + pulled.stderr
    assert _listed(bob) == _listed(alice)
    check_history(bob)


def test_excise_marks_a_listed_fact_as_every_other_copy_and_every_commit_still_passes(code: Path) -> None:
    day = _drifted(code, "quaxelsecret")
    assert "quaxelsecret" in _listed(code)[0]
    _ok(code, "forget", day, "--reason", "erasure request")
    _promoted(code)
    done = json.loads(_ok(code, "excise", "--json", "--by", "Grace Hopper", "--reason", "erasure"))
    assert day in done["receipt"]["records"]
    everything = git(code, "log", "--all", "-p", "--format=%H").stdout
    assert "quaxelsecret" not in everything
    assert "(fact `" + day + "`)" in everything and "[excised sha256:" in everything
    check_history(code)


def test_a_promotion_rebased_onto_changed_code_lags_and_passes_every_gate_until_a_rebuild(
        code: Path, tmp_path: Path) -> None:
    _, remote, alice, bob = _two_clones(code, tmp_path)
    edit(alice, "app.py", "return 'monday'", "return 'friday'")
    committed(alice, "alice: fridays")
    pushed(alice)
    capture(bob, "regions", "eu", "app.py:8-9")
    _promoted(bob)
    rebased = git(bob, "pull", "-q", "--rebase", "origin", "main", check=False)
    assert rebased.returncode == 0, rebased.stdout + rebased.stderr
    assert _listed(bob) == []  # replayed onto alice's code, built against bob's: it lags
    check_history(bob)
    pushed(bob)  # pre-push and the remote's pre-receive
    assert memstack("rebuild", "--check", cwd=bob / MEMORY).returncode == 1
    _promoted(bob)
    assert len(_listed(bob)) == 1
    check_history(bob)
    pushed(bob)


def test_a_hand_edit_of_the_section_is_refused(code: Path) -> None:
    day = _drifted(code, "monday")
    willow = code / MEMORY / "willow.md"
    text = willow.read_text()
    willow.write_text(text.replace("decided monday (fact", "decided tuesday (fact"))
    refused(code, "willow.md", "I4")
    willow.write_text(text.replace(f"`{day}`", "`01a23c837ed41e099a3b044a2bd806c9`"))
    refused(code, "willow.md", "I4")
    willow.write_text(text.replace("## To re-verify", "## To re-verify\n\nall is well"))
    refused(code, "willow.md", "I4")


def test_a_store_whose_code_is_not_in_its_commits_has_no_section(store: Path, code: Path) -> None:
    """A store that is a repository of its own (anchors taken with --repo), and a store in a folder of a
    repository that names another one with code.repo: their commits hold no code to read the anchors in."""
    _ok(store, "capture", "--subject", "x", "--predicate", "decided", "--object", "y", "--anchor", "app.py:4-5",
        "--repo", str(code), "--valid-from", "now", "--recorded-at", "now")
    edit(code, "app.py", "return 'monday'", "return 'friday'")
    committed(code, "fridays")
    _ok(store, "boot", "rebuild")
    assert HEADING not in (store / "willow.md").read_text()

    day = capture(code, "deploys", "tuesday", "app.py:4-5")
    committed(code, "memory")
    edit(code, "app.py", "return 'friday'", "return 'sunday'")
    committed(code, "sundays")
    _promoted(code)
    assert [line.split("(fact `")[1][:len(day)] for line in _listed(code)] == [day]
    with (code / MEMORY / "memstack.yaml").open("a") as config:
        config.write(f"code:\n  repo: {code}\n")
    _ok(code, "boot", "rebuild")
    assert HEADING not in _willow(code)
    committed(code, "code.repo named")
    check_history(code)


def test_the_list_is_the_same_with_the_cache_warm_cold_or_unwritable(code: Path) -> None:
    _drifted(code, "monday")
    listed = _listed(code)
    cache = code / MEMORY / ".memstack" / "boot" / "anchored.json"
    assert len(listed) == 1 and cache.is_file()
    cache.write_text('{"facts": {}, "found": {"not": "a status"}}')  # a stale or broken cache is only a cache
    _ok(code, "boot", "rebuild")
    assert _listed(code) == listed
    for kept in cache.parent.iterdir():  # anchored.json, and the knowledge shards' recent facts (recent.json)
        kept.unlink()
    cache.parent.rmdir()
    cache.parent.write_text("not a folder")  # the caches cannot be kept: the list is read all the same
    (code / MEMORY / "willow.md").unlink()
    _ok(code, "boot", "rebuild")
    assert _listed(code) == listed
