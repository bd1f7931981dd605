"""Gates with a gap: attacks that passed a gate, each refused now by every gate, naming its rule.

Every attack is made as a user or a careless script would: real `git commit` through the installed
pre-commit hook, `memstack check --range`, a real `git push` through the clone's pre-push hook to a
plain remote and `git push --no-verify` to a bare remote guarded by hooks/pre-receive, `memstack sync`
between two clones.
"""

import json
from pathlib import Path

import pytest

from check_support import (
    append,
    committed,
    fact,
    head,
    intake,
    jsonl,
    publish,
    push,
    refused,
    refused_everywhere,
    run_check,
    sneak,
    with_remotes,
    write,
)
from helpers import code_with_memory, git, memstack, tree_snapshot
from memstack.base.ids import new_id
from memstack.base.times import day, iso, now_ms
from team_support import clone

LOG = "intake/alice/2026-01-01.jsonl"
HOUR = 3_600_000


@pytest.fixture
def store(repo: Path, bare: Path, tmp_path: Path) -> Path:  # noqa: F811
    """The store with two remotes: `guarded` (hooks/pre-receive) and `plain` (check_support.with_remotes)."""
    return with_remotes(repo, bare, tmp_path)


def remote_tip(remote: Path, ref: str = "refs/heads/main") -> str:
    return git(remote, "rev-parse", "--verify", "-q", ref, check=False).stdout.strip()


def future_record(ahead_ms: int) -> tuple[str, bytes]:
    """An intake record `ahead_ms` after now (its id bound to that time, as memstack's writer binds it)."""
    later = now_ms() + ahead_ms
    record = {**intake(1, day=day(later)), "created_at": iso(later), "id": new_id(later, "alice")}
    return f"intake/alice/{day(later)}.jsonl", jsonl(record)


def with_skew(root: Path, seconds: int) -> None:
    config = (root / "memstack.yaml").read_text()
    assert "max_skew_seconds: 300" in config
    write(root, "memstack.yaml", config.replace("max_skew_seconds: 300", f"max_skew_seconds: {seconds}"))


# ---- a commit that loosens the clock and uses it --------------------------------------------------

def test_one_commit_cannot_loosen_the_clock_skew_and_add_a_record_only_the_new_skew_allows(store: Path) -> None:
    publish(store)
    with_skew(store, 86_400)
    path, record = future_record(23 * HOUR)
    write(store, path, record)
    refused_everywhere(store, f"{path}:1: I5 created_at", "lies in the future", "the 300 s clock skew of"
                              " memstack.yaml before this change")


def test_loosening_the_clock_alone_then_using_it_is_accepted(store: Path) -> None:
    with_skew(store, 86_400)
    committed(store, "a wider clock skew, reviewable on its own")
    path, record = future_record(23 * HOUR)
    write(store, path, record)
    tip = committed(store, "a record from a clock a day ahead")
    assert run_check(store, "--range", f"{tip}~2..{tip}").returncode == 0


def test_tightening_the_clock_in_the_commit_that_uses_it_is_judged_by_the_new_skew(store: Path) -> None:
    with_skew(store, 86_400)
    committed(store, "a wide skew")
    config = (store / "memstack.yaml").read_text()
    write(store, "memstack.yaml", config.replace("max_skew_seconds: 86400", "max_skew_seconds: 600"))
    path, record = future_record(2 * HOUR)
    write(store, path, record)
    refused(store, f"{path}:1: I5 created_at", "plus the 600 s clock skew allowed")


# ---- sync checks what it pulls ----------------------------------------------------------------------

def fresh(repo: Path) -> None:
    """The derived files rebuilt and committed, so a sync of a clone has nothing of its own to commit."""
    assert memstack("rebuild", cwd=repo).returncode == 0
    if git(repo, "status", "--porcelain").stdout:  # a new store of format 2 is fresh as made: nothing to commit
        committed(repo, "the derived files, fresh")


def test_sync_refuses_to_merge_a_remote_that_holds_a_bad_record(repo: Path, tmp_path: Path) -> None:  # noqa: F811
    """A remote without pre-receive (a plain host) took a future-dated record pushed with --no-verify."""
    remote = tmp_path / "plain.git"
    git(tmp_path, "init", "-q", "--bare", "-b", "main", str(remote))
    git(repo, "remote", "add", "origin", str(remote))
    fresh(repo)
    assert push(repo, "origin", "main")[0] == 0
    a, b = clone(remote, tmp_path / "a"), clone(remote, tmp_path / "b")
    path, record = future_record(30 * 24 * HOUR)
    write(a, path, record)
    bad = sneak(a, "a record from a month ahead")
    assert push(a, "origin", "main")[0] == 0  # --no-verify, and the remote has no guard
    mine = head(b)
    files = tree_snapshot(b)
    result = memstack("sync", cwd=b)
    assert result.returncode == 2, result.stdout + result.stderr
    said = result.stderr
    assert "Traceback" not in said and len(said.strip().splitlines()) == 1, said
    assert "origin/main" in said and "nothing was merged" in said
    assert f"commit {bad[:12]}" in said and f"{path}:1: I5 created_at" in said and "lies in the future" in said
    assert head(b) == mine and tree_snapshot(b) == files
    assert git(b, "status", "--porcelain").stdout == "" and not (b / ".git/MERGE_HEAD").exists()
    assert remote_tip(remote) == bad  # nothing pushed on top of it
    assert not (b / path).exists()


def test_the_mcp_sync_tool_refuses_the_same_pull(repo: Path, tmp_path: Path) -> None:  # noqa: F811
    from mcp_support import refused as tool_refused
    from mcp_support import run, server

    remote = tmp_path / "plain.git"
    git(tmp_path, "init", "-q", "--bare", "-b", "main", str(remote))
    git(repo, "remote", "add", "origin", str(remote))
    fresh(repo)
    assert push(repo, "origin", "main")[0] == 0
    a, b = clone(remote, tmp_path / "a"), clone(remote, tmp_path / "b")
    write(a, LOG, jsonl(intake(1), intake(2)))
    committed(a, "two records")
    write(a, LOG, jsonl(intake(2)))  # the first removed: an I1 edit of a pushed log
    bad = sneak(a, "drop a record")
    assert push(a, "origin", "main")[0] == 0
    mine = head(b)

    async def session() -> None:
        async with server("--store", str(b), cwd=b) as client:
            message = await tool_refused(client, "sync")
            assert f"commit {bad[:12]}" in message and f"{LOG}:1: I1" in message, message

    run(session)
    assert head(b) == mine and git(b, "status", "--porcelain").stdout == ""


def test_sync_still_merges_a_clean_remote(repo: Path, tmp_path: Path) -> None:  # noqa: F811
    remote = tmp_path / "plain.git"
    git(tmp_path, "init", "-q", "--bare", "-b", "main", str(remote))
    git(repo, "remote", "add", "origin", str(remote))
    assert push(repo, "origin", "main")[0] == 0
    a, b = clone(remote, tmp_path / "a"), clone(remote, tmp_path / "b")
    assert memstack("intake", "write", "--content", "from a", cwd=a).returncode == 0
    assert memstack("sync", cwd=a).returncode == 0
    done = memstack("sync", "--json", cwd=b)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["pulls"][0]["merged"] is True
    assert any("from a" in p.read_text() for p in (b / "intake").rglob("*.jsonl"))


# ---- a store's deletion is a violation at every gate ----------------------------------------------

def test_deleting_memstack_yaml_with_an_intake_edit_is_refused_by_every_gate(store: Path) -> None:
    write(store, LOG, jsonl(intake(1), intake(2)))
    committed(store, "two records")
    publish(store)
    (store / "memstack.yaml").unlink()
    write(store, LOG, jsonl(intake(2)))
    refused_everywhere(store, "memstack.yaml: I5 memstack.yaml deleted", f"{LOG}:1: I1")


def test_deleting_memstack_yaml_with_a_sealed_handoff_is_refused_by_every_gate(store: Path) -> None:
    from check_support import handoff_text

    sealed = "handoffs/alice/session_handoff-2026-01-02_alice.md"
    write(store, sealed, handoff_text())
    committed(store, "a handoff")
    publish(store)
    (store / "memstack.yaml").unlink()
    (store / sealed).unlink()
    refused_everywhere(store, "memstack.yaml: I5 memstack.yaml deleted", f"{sealed}: I3 sealed handoff deleted")


def test_the_range_check_names_a_deleted_store_also_with_store_dot(store: Path) -> None:
    """As the CI workflow runs it: `memstack --store . check --range BASE..HEAD`."""
    base = head(store)
    (store / "memstack.yaml").unlink()
    sneak(store, "no config")
    for args in (["check", "--range", f"{base}..HEAD"], ["--store", ".", "check", "--range", f"{base}..HEAD"],
                 ["check", "--range", "HEAD"]):
        proc = memstack(*args, cwd=store)
        assert proc.returncode == 1, (args, proc.stdout + proc.stderr)
        assert "memstack.yaml: I5 memstack.yaml deleted" in proc.stdout, (args, proc.stdout)


def test_a_new_branch_that_deletes_the_store_is_refused_at_pre_receive(store: Path, bare: Path) -> None:
    publish(store)
    git(store, "checkout", "-q", "-b", "topic")
    (store / "memstack.yaml").unlink()
    write(store, LOG, jsonl(intake(1)))
    sneak(store, "a new branch without a config")
    code, out = push(store, "guarded", "topic")
    assert code != 0, out
    assert "memstack.yaml: I5 memstack.yaml deleted" in out
    assert remote_tip(bare, "refs/heads/topic") == ""


def test_a_store_in_a_folder_deleted_whole_is_refused_by_range_and_pre_push(tmp_path: Path) -> None:
    top = code_with_memory(tmp_path / "project", {"README.md": "code\n"})
    write(top, f".memory/{LOG}", jsonl(intake(1)))
    committed(top, "a record")
    plain = tmp_path / "plain.git"
    git(tmp_path, "init", "-q", "--bare", "-b", "main", str(plain))
    git(top, "remote", "add", "origin", str(plain))
    assert push(top, "origin", "main", verify=True)[0] == 0
    base = head(top)
    git(top, "rm", "-rq", ".memory")
    sneak(top, "drop the store")
    proc = run_check(top, "--range", f"{base}..HEAD")
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert ".memory/memstack.yaml: I5 memstack.yaml deleted" in proc.stdout
    assert f".memory/{LOG}: I1 append-only log deleted" in proc.stdout
    code, out = push(top, "origin", "main", verify=True)
    assert code != 0 and ".memory/memstack.yaml: I5 memstack.yaml deleted" in out, out
    assert remote_tip(plain) == base


# ---- CR in memory files, and the store's .gitattributes ---------------------------------------------

def test_a_crlf_intake_line_after_deleting_gitattributes_is_refused_by_every_gate(store: Path) -> None:
    write(store, LOG, jsonl(intake(1)))
    committed(store, "a record")
    publish(store)
    (store / ".gitattributes").unlink()
    append(store, LOG, jsonl(intake(2)).replace(b"\n", b"\r\n"))
    refused_everywhere(store, f"{LOG}:2: I7 holds a carriage return", ".gitattributes: I7 .gitattributes deleted")


def test_a_crlf_line_is_refused_even_where_gitattributes_is_gone(store: Path, bare: Path) -> None:
    (store / ".gitattributes").unlink()
    sneak(store, "a store without .gitattributes")
    git(bare, "config", "core.hooksPath", str(bare / "no-hooks"))  # the remote took it before it had the hook
    publish(store)
    git(bare, "config", "--unset", "core.hooksPath")
    day_file = "intake/alice/2026-01-02.jsonl"
    write(store, day_file, jsonl(intake(1, day="2026-01-02"), intake(2, day="2026-01-02")).replace(b"\n", b"\r\n"))
    refused_everywhere(store, f"{day_file}:1: I7 holds a carriage return", f"{day_file}:2: I7 holds a carriage")


@pytest.mark.parametrize("path", ["handoffs/alice/session_handoff-2026-01-02_alice.md", "identity/alice.md",
                                  "kb/facts/alice/2026-01.jsonl", "store/notes/todo.json"])
def test_cr_is_refused_in_every_kind_of_memory_file(repo: Path, path: str) -> None:  # noqa: F811
    (repo / ".gitattributes").unlink()
    sneak(repo, "no .gitattributes")
    from check_support import handoff_text

    body = {"handoffs": handoff_text(), "identity": "# alice\n\nreviewer\n",
            "kb": jsonl(fact("one")).decode(),
            "store": '{"collection":"notes","key":"todo","value":1,"created_at":"2026-01-01T00:00:00.000Z",'
                     '"updated_at":"2026-01-01T00:00:00.000Z","expires_at":null}\n'}
    text = body[path.split("/")[0]]
    write(repo, path, text.replace("\n", "\r\n"))
    refused(repo, f"{path}:1: I7 holds a carriage return")


def test_removing_memstacks_lines_from_gitattributes_is_refused(store: Path) -> None:
    publish(store)
    attributes = (store / ".gitattributes").read_text()
    line = "intake/*/*.jsonl merge=memstack diff=memstack text eol=lf"
    assert line in attributes
    write(store, ".gitattributes", attributes.replace(line, "intake/*/*.jsonl -text"))
    refused_everywhere(store, ".gitattributes:4: I7 memstack's line `intake/*/*.jsonl merge=memstack diff=memstack"
                              " text eol=lf` was removed")


def test_a_gitattributes_line_that_turns_conversion_off_lets_no_cr_in(store: Path) -> None:
    """Beyond the issue: memstack's lines kept, a later line overriding them (and a clone's own
    .git/info/attributes, which no commit shows): the CR itself is refused."""
    write(store, LOG, jsonl(intake(1)))
    committed(store, "a record")
    publish(store)
    append(store, ".gitattributes", b"intake/** -text\n")
    write(store, ".git/info/attributes", "kb/** -text\n")
    append(store, LOG, jsonl(intake(2)).replace(b"\n", b"\r\n"))
    append(store, "kb/facts/alice/2026-01.jsonl", jsonl(fact("crlf")).replace(b"\n", b"\r\n"))
    refused_everywhere(store, f"{LOG}:2: I7 holds a carriage return", "kb/facts/alice/2026-01.jsonl:1: I7 holds a")


def test_a_lone_cr_inside_a_line_is_refused(repo: Path) -> None:  # noqa: F811
    """Beyond the issue: a CR that is no line ending (JSON whitespace between fields) is refused too."""
    (repo / ".gitattributes").unlink()
    sneak(repo, "no .gitattributes")
    write(repo, LOG, jsonl(intake(1)).replace(b',"source"', b',\r"source"'))
    refused(repo, f"{LOG}:1: I7 holds a carriage return")


def test_a_handoff_written_with_crlf_is_sealed_with_lf(repo: Path) -> None:  # noqa: F811
    """Memstack's writers never write a CR: a handoff given with CRLF line endings is sealed with LF."""
    from helpers import HANDOFF

    proc = memstack("handoff", "write", "--agent", "alice", cwd=repo, input=HANDOFF.replace("\n", "\r\n"))
    assert proc.returncode == 0, proc.stderr
    [sealed] = (repo / "handoffs/alice").iterdir()
    assert b"\r" not in sealed.read_bytes() and b"## Open threads\n" in sealed.read_bytes()
    assert run_check(repo).returncode == 0
    committed(repo, "a handoff")


def test_adding_lines_to_gitattributes_is_accepted(repo: Path) -> None:  # noqa: F811
    append(repo, ".gitattributes", b"*.png binary\n")
    committed(repo, "a line of the project's own")


def test_restoring_gitattributes_after_a_sneaked_deletion_is_accepted(repo: Path) -> None:  # noqa: F811
    kept = (repo / ".gitattributes").read_bytes()
    (repo / ".gitattributes").unlink()
    sneak(repo)
    write(repo, ".gitattributes", kept)
    committed(repo, "restored")


def test_moving_the_store_to_another_folder_is_refused_by_the_range_check(store: Path) -> None:
    """Beyond the issue: a store moved whole (`git mv`) is a deletion where it was."""
    write(store, LOG, jsonl(intake(1)))
    committed(store, "a record")
    base = head(store)
    (store / "moved").mkdir()
    for name in ("memstack.yaml", "intake"):
        git(store, "mv", name, f"moved/{name}")
    sneak(store, "the store moves")
    proc = run_check(store, "--range", f"{base}..HEAD")
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "memstack.yaml: I5 memstack.yaml deleted" in proc.stdout
    assert f"{LOG}: I1 append-only log deleted" in proc.stdout


# ---- a re-created branch keeps the deleted tip's records --------------------------------------------

def test_a_branch_deleted_and_re_created_without_a_record_is_refused(store: Path, bare: Path) -> None:
    publish(store)
    old_main = head(store)
    git(store, "checkout", "-q", "-b", "agent-x")
    write(store, LOG, jsonl(intake(1)))
    tip = committed(store, "record A")
    assert push(store, "guarded", "agent-x")[0] == 0
    git(store, "checkout", "-q", "main")
    git(store, "merge", "-q", "--ff-only", "agent-x")
    assert push(store, "guarded", "main")[0] == 0  # A is on main too
    code, out = push(store, "guarded", ":agent-x")  # allowed: main keeps its memory
    assert code == 0, out
    assert remote_tip(bare, "refs/memstack/deleted/heads/agent-x") == tip
    refs = git(bare, "for-each-ref").stdout
    code, out = push(store, "guarded", f"{old_main}:refs/heads/agent-x")  # re-created without A
    assert code != 0, out
    assert "re-created branch: the memory of the deleted branch of that name must survive in it" in out
    assert f"{LOG}: I1 append-only log deleted or renamed" in out
    assert git(bare, "for-each-ref").stdout == refs
    code, out = push(store, "guarded", "main:refs/heads/agent-x")  # re-created from a tip that holds A
    assert code == 0, out
    assert remote_tip(bare, "refs/heads/agent-x") == tip


def test_a_tag_deleted_and_re_created_without_a_record_is_refused(store: Path, bare: Path) -> None:
    """Beyond the issue: a tag is a ref like a branch."""
    publish(store)
    old_main = head(store)
    write(store, LOG, jsonl(intake(1)))
    committed(store, "record A")
    publish(store)
    git(store, "tag", "-a", "-m", "release", "v1")
    assert push(store, "guarded", "v1")[0] == 0
    code, out = push(store, "guarded", ":refs/tags/v1")
    assert code == 0, out
    code, out = push(store, "guarded", f"{old_main}:refs/tags/v1")
    assert code != 0, out
    assert "re-created branch" in out and f"{LOG}: I1 append-only log deleted or renamed" in out
    assert remote_tip(bare, "refs/tags/v1") == ""
