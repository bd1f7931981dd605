"""`memstack sync` and the MCP tool `sync`: real clones, a real bare remote guarded by hooks/pre-receive."""

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from helpers import MEMSTACK, git, memstack, tree_snapshot
from team_support import check_history, clone, guarded_remote


@pytest.fixture(scope="module")
def _remote(_store_template: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The template store pushed to a guarded remote, once for the module."""
    folder = tmp_path_factory.mktemp("guarded")
    store = folder / "store"
    shutil.copytree(_store_template, store, symlinks=True)
    return guarded_remote(store, folder)


@pytest.fixture
def remote(store: Path, tmp_path: Path, _remote: Path) -> Path:
    """The store's main branch on a bare remote guarded by hooks/pre-receive, its `origin` (as
    team_support.guarded_remote leaves it: a copy of `_remote`, fetched)."""
    copied = tmp_path / "remote.git"
    shutil.copytree(_remote, copied, symlinks=True)
    git(store, "remote", "add", "origin", str(copied))
    git(store, "fetch", "-q", "origin")
    assert git(store, "rev-parse", "HEAD").stdout == git(store, "rev-parse", "origin/main").stdout
    return copied


def sync(repo: Path) -> dict:
    result = memstack("sync", "--json", cwd=repo)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


def remote_file(remote: Path, relpath: str) -> str:
    return git(remote, "show", f"main:{relpath}").stdout


def test_sync_commits_with_a_message_listing_the_memory_then_pushes(remote: Path, tmp_path: Path) -> None:
    a = clone(remote, tmp_path / "a")
    assert memstack("intake", "write", "--agent", "alice", "--content", "the build is green", "--created-at",
                    "2026-11-02T10:00:00Z", cwd=a).returncode == 0
    assert memstack("capture", "--agent", "alice", "--subject", "ci", "--predicate", "chose", "--object", "make",
                    "--valid-from", "2026-11-02T00:00:00Z", "--recorded-at", "2026-11-02T10:00:00Z",
                    cwd=a).returncode == 0
    done = sync(a)
    message = done["committed"]["message"]
    assert message.startswith("memstack sync: 1 intake record, 1 fact\n")
    [rebuilt] = done["rebuilt"]  # then the derived files of what it committed, in a commit of their own
    assert rebuilt["message"].startswith("memstack sync: ") and "kb/knowledge/alice/2026-11.json: derived, rebuilt" \
        in rebuilt["message"]
    assert git(a, "rev-parse", "HEAD~1").stdout.strip() == done["committed"]["commit"]
    assert "intake/alice/2026-11-02.jsonl: +1 intake record" in message and "records" not in message
    assert done["pushed"] == git(remote, "rev-parse", "main").stdout.strip()
    assert "the build is green" in remote_file(remote, "intake/alice/2026-11-02.jsonl")
    assert git(a, "status", "--porcelain").stdout == ""
    again = sync(a)  # nothing to do: no commit, no push
    assert again["committed"] is None and again["pushed"] is None
    assert "nothing to do" in memstack("sync", cwd=a).stdout


def test_sync_merges_the_remote_rebuilds_the_views_and_pushes(remote: Path, tmp_path: Path) -> None:
    a, b = clone(remote, tmp_path / "a"), clone(remote, tmp_path / "b")
    for repo, agent, obj in ((a, "alice", "make"), (b, "bob", "ninja")):
        assert memstack("capture", "--agent", agent, "--subject", f"{agent}-build", "--predicate", "chose",
                        "--object", obj, "--valid-from", "2026-11-02T00:00:00Z", "--recorded-at",
                        "2026-11-02T10:00:00Z", cwd=repo).returncode == 0
    sync(a)
    done = sync(b)  # b's commit, then a merge with a's, then the views rebuilt, then one push
    assert [p["merged"] for p in done["pulls"]] == [True] and done["pulls"][0]["sources_changed"]
    assert done["rebuilt"] and done["pushed"]
    assert memstack("rebuild", "--check", cwd=b).returncode == 0
    knowledge = [f for agent in ("alice", "bob")
                 for f in json.loads(remote_file(remote, f"kb/knowledge/{agent}/2026-11.json"))]
    assert sorted(f["object"] for f in knowledge) == ["make", "ninja"]
    check_history(b)
    again = sync(a)
    assert again["pulls"][0]["to"] == done["pushed"] and again["pulls"][0]["fast_forward"]  # to b's push
    assert again["committed"] is None and again["pushed"] is None
    assert status(a)["stale"] == [] and status(b)["stale"] == []  # neither clone lags what it holds
    said = memstack("sync", cwd=b).stdout
    assert said.strip() == "in sync with origin/main: nothing to do"


def status(repo: Path) -> dict:
    result = memstack("status", "--json", cwd=repo)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


@pytest.mark.parametrize("write", ["capture", "fact add", "intake write"])
def test_what_sync_pushes_is_never_stale(remote: Path, tmp_path: Path, write: str) -> None:
    a = clone(remote, tmp_path / "a")
    fact = ["--subject", "ci", "--predicate", "chose", "--object", "make", "--valid-from", "2026-11-02T00:00:00Z",
            "--recorded-at", "2026-11-02T10:00:00Z"]
    args = fact if write != "intake write" else ["--content", "the build is green", "--created-at",
                                                 "2026-11-02T10:00:00Z"]
    assert memstack(*write.split(), "--agent", "alice", *args, cwd=a).returncode == 0
    assert bool(status(a)["stale"]) == (write != "intake write")  # a fact makes its shard lag; a pending record none
    done = sync(a)
    if write != "intake write":
        assert done["pushed"] == done["rebuilt"][0]["commit"]  # the rebuild follows the commit, before the push
    assert status(a)["stale"] == [] and memstack("rebuild", "--check", cwd=a).returncode == 0
    assert git(a, "status", "--porcelain").stdout == ""
    shards = git(a, "ls-tree", "-r", "--name-only", "origin/main", "kb/knowledge").stdout.split()
    pushed = [f for path in shards for f in json.loads(git(a, "show", f"origin/main:{path}").stdout)]
    if write == "intake write":
        assert pushed == []
    else:
        assert [(f["subject"], f["object"]) for f in pushed] == [("ci", "make")]
    b = clone(remote, tmp_path / "b")  # what another agent gets is fresh too, before any rebuild of its own
    assert status(b)["stale"] == [] and git(b, "status", "--porcelain").stdout == ""
    check_history(a)


def test_a_soil_conflict_says_what_was_committed_and_that_nothing_was_merged_or_pushed(
        remote: Path, tmp_path: Path) -> None:
    a, b = clone(remote, tmp_path / "a"), clone(remote, tmp_path / "b")
    for repo, value in ((a, '{"owner": "alice"}'), (b, '{"owner": "bob"}')):
        assert memstack("soil", "put", "notes", "release", "--value", value, cwd=repo).returncode == 0
    assert memstack("capture", "--agent", "bob", "--subject", "ci", "--predicate", "chose", "--object", "make",
                    "--valid-from", "2026-11-02T00:00:00Z", "--recorded-at", "2026-11-02T10:00:00Z",
                    cwd=b).returncode == 0
    sync(a)
    before = git(b, "rev-parse", "HEAD").stdout.strip()
    result = memstack("sync", cwd=b)
    assert result.returncode == 2 and result.stdout == "" and "Traceback" not in result.stderr
    head = git(b, "rev-parse", "HEAD").stdout.strip()
    said = result.stderr
    assert "conflict" in said and "store/notes/release.json" in said
    assert "nothing changed" not in said and "merge was undone" in said
    assert f"Committed here {head[:12]} (memstack sync: 1 fact, 1 SOIL record)" in said
    assert f"nothing merged; nothing pushed; HEAD is {head[:12]}; no memory left uncommitted" in said
    # and so it is: b's own commit was made on its old HEAD, nothing of a's merged, nothing pushed
    assert git(b, "rev-parse", "HEAD~1").stdout.strip() == before != head
    assert not (b / ".git/MERGE_HEAD").exists() and git(b, "status", "--porcelain").stdout == ""
    assert json.loads((b / "store/notes/release.json").read_text())["value"] == {"owner": "bob"}
    assert git(remote, "rev-parse", "main").stdout.strip() == git(a, "rev-parse", "HEAD").stdout.strip()
    assert git(b, "merge-base", "--is-ancestor", "origin/main", "HEAD", check=False).returncode == 1


def test_no_remote_is_exit_2_and_nothing_is_committed(store: Path) -> None:
    assert memstack("intake", "write", "--content", "kept", cwd=store).returncode == 0
    head = git(store, "rev-parse", "HEAD").stdout
    result = memstack("sync", cwd=store)
    assert result.returncode == 2 and "no remote" in result.stderr and "Traceback" not in result.stderr
    assert git(store, "rev-parse", "HEAD").stdout == head
    assert git(store, "status", "--porcelain").stdout.strip().startswith("?? intake/")


def test_a_push_refused_by_the_server_guard_is_exit_2_with_its_reason(remote: Path, tmp_path: Path) -> None:
    a = clone(remote, tmp_path / "a")
    (a / ".git/hooks/pre-push").unlink()  # so the server's pre-receive is the guard that decides
    assert memstack("intake", "write", "--content", "first", "--created-at", "2026-11-02T10:00:00Z",
                    cwd=a).returncode == 0
    sync(a)
    day = a / "intake/alice/2026-11-02.jsonl"
    day.write_text(day.read_text().replace("first", "rewritten"))
    git(a, "commit", "-qam", "edit a log", "--no-verify")
    tip, before = git(remote, "rev-parse", "main").stdout, git(a, "rev-parse", "HEAD").stdout.strip()
    result = memstack("sync", "--json", cwd=a)
    assert result.returncode == 2, result.stdout
    assert "refused" in result.stderr and "I1" in result.stderr and result.stdout == ""
    head = git(a, "rev-parse", "HEAD").stdout.strip()  # sync's own commit of the rebuilt views, if any
    made = "Nothing committed" if head == before else f"Committed here {head[:12]}"
    assert made in result.stderr and f"nothing pushed; HEAD is {head[:12]}" in result.stderr
    assert git(remote, "rev-parse", "main").stdout == tip


def test_a_commit_refused_by_the_hook_leaves_nothing_staged(remote: Path, tmp_path: Path) -> None:
    a = clone(remote, tmp_path / "a")
    stray = a / "kb/notes.txt"
    stray.write_text("not memory\n")
    assert memstack("capture", "--agent", "alice", "--subject", "ci", "--predicate", "chose", "--object", "make",
                    "--valid-from", "2026-11-02T00:00:00Z", "--recorded-at", "2026-11-02T10:00:00Z",
                    cwd=a).returncode == 0
    files = tree_snapshot(a)
    result = memstack("sync", cwd=a)
    assert result.returncode == 2 and "I5" in result.stderr and "refused" in result.stderr
    assert "Nothing committed; nothing merged; nothing pushed" in result.stderr
    assert "memory left uncommitted" in result.stderr and "Traceback" not in result.stderr
    assert git(a, "diff", "--cached", "--name-only").stdout == "" and tree_snapshot(a) == files  # nothing rebuilt


def test_a_conflict_the_driver_cannot_resolve_aborts_the_merge(remote: Path, tmp_path: Path) -> None:
    a, b = clone(remote, tmp_path / "a"), clone(remote, tmp_path / "b")
    assert memstack("fact", "add", "--subject", "db", "--predicate", "uses", "--object", "postgres",
                    "--valid-from", "2026-11-01T00:00:00Z", "--recorded-at", "2026-11-01T00:00:00Z",
                    cwd=a).returncode == 0
    sync(a)
    sync(b)
    for repo, when in ((a, "2026-11-05T00:00:00Z"), (b, "2026-11-07T00:00:00Z")):  # no successor: no rule
        assert memstack("fact", "invalidate", "--subject", "db", "--predicate", "uses", "--valid-to", when,
                        "--recorded-at", when, cwd=repo).returncode == 0
    sync(a)
    mine = git(b, "rev-parse", "HEAD").stdout
    result = memstack("sync", cwd=b)
    assert result.returncode == 2 and "conflict" in result.stderr and "kb/facts/alice/2026-11.jsonl" in result.stderr
    assert git(b, "status", "--porcelain").stdout == ""
    assert not (b / ".git/MERGE_HEAD").exists()
    assert git(b, "rev-parse", "HEAD").stdout != mine  # its own memory was committed before the pull
    assert git(b, "rev-parse", "HEAD~1").stdout == mine


def test_the_mcp_tool_returns_the_document_sync_prints(remote: Path, tmp_path: Path) -> None:
    import anyio
    from mcp import Client, StdioServerParameters

    a = clone(remote, tmp_path / "a")

    async def session() -> dict:
        params = StdioServerParameters(command=MEMSTACK, args=["mcp", "--store", str(a)], cwd=a,
                                       env=dict(os.environ))
        async with Client(params) as client:
            assert (await client.call_tool("intake_write", {"content": "over mcp"})).is_error is False
            result = await client.call_tool("sync", {})
            assert not result.is_error, result.content[0].text
            return json.loads(result.content[0].text)

    done = anyio.run(session)
    assert set(done) == {"ok", "remote", "branch", "committed", "also_committed", "pulls", "rebuilt", "pushed",
                         "attempts"}
    assert done["committed"]["message"].startswith("memstack sync: 1 intake record")
    assert done["pushed"] == git(remote, "rev-parse", "main").stdout.strip()


AGENT_LOOP = """
set -e
for round in 1 2 3; do
  memstack intake write --agent "$AGENT" --content "$AGENT$TAG round $round" >/dev/null
  memstack capture --agent "$AGENT" --subject "$AGENT$TAG-plan" --predicate decided --object "round $round" \\
      --valid-from "$(date +%s%3N)" --contradicts >/dev/null
  # Every clone contradicts the team's plan: the clones disagree, and the merges resolve it (docs/merge.md).
  # (Two processes of one clone would race on it: the time is taken before capture's lock.)
  [ -n "$TAG" ] || memstack capture --agent "$AGENT" --subject team-plan --predicate decided \\
      --object "$AGENT round $round" --valid-from "$(date +%s%3N)" --contradicts >/dev/null
  memstack sync --json > "$OUT/sync-$AGENT$TAG-$round.json"
done
"""


@pytest.mark.slow
def test_agents_syncing_at_once_converge_with_nothing_lost(store: Path, remote: Path, tmp_path: Path) -> None:
    assert memstack("agent", "add", "carol", cwd=store).returncode == 0  # a third agent joins the team
    git(store, "add", "-A")
    git(store, "commit", "-q", "-m", "agent carol")
    git(store, "push", "-q", "origin", "main")
    agents = {"alice": clone(remote, tmp_path / "alice"), "bob": clone(remote, tmp_path / "bob"),
              "carol": clone(remote, tmp_path / "carol")}
    runs = [(agent, repo, "") for agent, repo in agents.items()]
    runs.append(("alice", agents["alice"], "-2"))  # a second process in one clone
    out_dir = tmp_path / "out"
    out_dir.mkdir()
    procs = [subprocess.Popen(["bash", "-c", AGENT_LOOP], cwd=repo,
                              env={**os.environ, "AGENT": agent, "TAG": tag, "OUT": str(out_dir)},
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for agent, repo, tag in runs]
    for proc in procs:
        out, err = proc.communicate(timeout=600)
        assert proc.returncode == 0, err
    reports = [json.loads(p.read_text()) for p in sorted(out_dir.iterdir())]
    assert len(reports) == 12 and all(r["pushed"] or r["attempts"] for r in reports)
    assert any(p["merged"] for r in reports for p in r["pulls"])  # they did meet
    print("sync attempts:", sorted(r["attempts"] for r in reports))
    for repo in agents.values():  # one more round each, so every clone holds everything
        sync(repo)
    final = clone(remote, tmp_path / "final")
    contents = set()
    for path in (final / "intake").rglob("*.jsonl"):
        contents |= {json.loads(line)["content"] for line in path.read_text().splitlines()}
    assert contents == {f"{a}{t} round {r}" for a, _, t in runs for r in (1, 2, 3)}
    facts = [json.loads(line) for p in (final / "kb/facts").rglob("*.jsonl") for line in p.read_text().splitlines()]
    assert sorted(f["object"] for f in facts if f["subject"] == "team-plan") == sorted(
        f"{a} round {r}" for a in agents for r in (1, 2, 3))
    for agent, _, tag in runs:
        mine = [f for f in facts if f["subject"] == f"{agent}{tag}-plan"]
        assert sorted(f["object"] for f in mine) == ["round 1", "round 2", "round 3"]
        assert [f["object"] for f in mine if f["valid_to"] is None] == ["round 3"]
    check_history(final)
    for repo in agents.values():
        assert git(repo, "status", "--porcelain").stdout == ""


def test_the_commit_title_counts_every_log_it_holds_and_a_hand_written_receipt_is_refused_not_a_crash(
        remote: Path, tmp_path: Path) -> None:
    """A tombstone is named in the title (it was only in the body), and a line written by hand into the
    erasure receipts' log is the hook's refusal, not a traceback."""
    a = clone(remote, tmp_path / "a")
    written = memstack("intake", "write", "--agent", "alice", "--content", "a number to forget", "--created-at",
                       "2026-11-02T10:00:00Z", "--json", cwd=a)
    assert written.returncode == 0, written.stderr
    sync(a)
    forgot = memstack("forget", json.loads(written.stdout)["record"]["id"], "--reason", "asked to", cwd=a)
    assert forgot.returncode == 0, forgot.stderr
    assert sync(a)["committed"]["message"].startswith("memstack sync: 1 tombstone\n")
    with open(a / "kb" / "erasures.jsonl", "a") as log:
        log.write('{"id": "made up"}\n')
    refused = memstack("sync", cwd=a)
    assert refused.returncode == 2 and "Traceback" not in refused.stderr, refused.stderr
    assert "kb/erasures.jsonl" in refused.stderr, refused.stderr


def test_binder_decisions_taken_in_two_clones_merge_and_sync_on(remote: Path, tmp_path: Path) -> None:
    """Alice decides one record, Bob another, each in a clone: the merged decisions log holds both sides' lines,
    so the last fresh commit's is no prefix of it; sync, status and promote read what was added, go on."""
    a, b = clone(remote, tmp_path / "a"), clone(remote, tmp_path / "b")
    for text in ("the cache may leak", "the queue may stall"):
        assert memstack("intake", "write", "--agent", "alice", "--content", text, cwd=a).returncode == 0
    assert memstack("promote", cwd=a).returncode == 0
    sync(a), sync(b)
    listed = json.loads(memstack("binder", "list", "--json", cwd=a).stdout)["items"]
    first, second = (item["id"] for item in listed)
    assert memstack("binder", "ratify", first, "--by", "Alice", cwd=a).returncode == 0
    assert memstack("binder", "reject", second, "--by", "Bob", "--note", "not true", cwd=b).returncode == 0
    sync(a)
    merged = sync(b)  # merges alice's decision, pushes bob's
    assert merged["pushed"], merged
    for repo in (a, b):
        sync(repo)
        for args in (["status"], ["promote"], ["binder", "list"], ["check", "--all"]):
            done = memstack(*args, cwd=repo)
            assert done.returncode == 0, (args, done.stderr)
    assert memstack("binder", "list", "--json", cwd=b).stdout == memstack("binder", "list", "--json", cwd=a).stdout
    assert tree_snapshot(a) == tree_snapshot(b)
    check_history(b)


def test_sync_in_the_middle_of_a_merge_refuses_and_keeps_the_resolution(remote: Path, tmp_path: Path) -> None:
    """A user who resolved a conflict by hand and runs sync before `git commit`: sync does nothing (it would commit
    the staged resolution without the merge) and says how to conclude; the resolution stays staged."""
    a, b = clone(remote, tmp_path / "a"), clone(remote, tmp_path / "b")
    for repo, value in ((a, '{"v": 2}'), (b, '{"v": 3}')):
        assert memstack("soil", "put", "notes", "release", "--value", value, cwd=repo).returncode == 0
        git(repo, "add", "-A")
        git(repo, "commit", "-q", "-m", f"release {value}")
    pushed = git(a, "push", "-q", "origin", "HEAD", check=False)
    assert pushed.returncode == 0, pushed.stderr
    git(b, "fetch", "-q", "origin")
    assert git(b, "merge", "origin/main", check=False).returncode != 0  # the two values conflict
    git(b, "checkout", "--theirs", "store/notes/release.json")
    git(b, "add", "store/notes/release.json")
    staged = git(b, "diff", "--cached", "--binary").stdout
    refused = memstack("sync", cwd=b)
    assert refused.returncode == 2, refused.stdout + refused.stderr
    assert refused.stderr.strip().splitlines() == [
        "memstack: sync: a merge is in progress in this clone; conclude it with `git commit` (once the resolved"
        " files are added) or `git merge --abort`, then sync again (nothing was done)"]
    assert git(b, "diff", "--cached", "--binary").stdout == staged
    assert git(b, "rev-parse", "-q", "--verify", "MERGE_HEAD", check=False).returncode == 0
    git(b, "commit", "-q", "--no-edit")
    sync(b)
    sync(a)
    got = json.loads(memstack("soil", "get", "notes", "release", "--json", cwd=a).stdout)
    assert got["value"] == {"v": 2}, got


HANDOFF = ("---\nagent: alice\ndate: 2026-11-02\nsession: s1\n---\n\n# Session\n\nThe lexer.\n\n## Open threads\n\n"
           "- the parser\n\n## Capability table\n\n| capability | status |\n|---|---|\n| lexing | ok |\n")


def test_a_boot_file_deleted_on_one_side_and_rebuilt_on_the_other_is_made_again(remote: Path, tmp_path: Path) -> None:
    """Alice's only handoff forgotten in one clone: her boot anchor goes, and sync commits its deletion (it was left
    uncommitted). Facts promoted in the other clone meanwhile rebuilt the anchor there: git gives no driver a
    modify/delete conflict; a derived file is made again from the merged sources and the merge goes on."""
    a, b = clone(remote, tmp_path / "a"), clone(remote, tmp_path / "b")
    assert memstack("handoff", "write", "--agent", "alice", "-", input=HANDOFF, cwd=a).returncode == 0
    sync(a), sync(b)
    [handoff] = (a / "handoffs" / "alice").iterdir()
    forgot = memstack("forget", f"handoffs/alice/{handoff.name}", "--reason", "private", cwd=a)
    assert forgot.returncode == 0, forgot.stderr
    assert not (a / "session_anchor_alice.json").exists()
    sync(a)
    assert git(a, "status", "--porcelain").stdout == ""  # the deletion committed and pushed
    assert memstack("intake", "write", "--agent", "alice", "--content", "we build with make", "--subject", "ci",
                    "--predicate", "chose", "--object", "make", "--tier", "verified", "--confidence", "0.9",
                    cwd=b).returncode == 0
    assert memstack("promote", cwd=b).returncode == 0  # commits the anchor rebuilt on b's side
    merged = sync(b)
    assert merged["pulls"][0]["merged"], merged
    sync(a)
    assert tree_snapshot(a) == tree_snapshot(b)
    assert git(a, "status", "--porcelain").stdout == "" and git(b, "status", "--porcelain").stdout == ""
    check_history(b)
