"""A team on one memory, end to end: a bare remote guarded by memstack's pre-receive hook and three clones.
Agent alice works on the command line, agent bob over MCP through the official SDK client, and one person,
Pat, whose SSH key memstack.yaml lists under binder.signers (binder.require_signed: true), settles their
disagreement in a signed commit. Every commit is a real one through the installed hooks, every push goes
through the clone's pre-push hook and the remote's pre-receive hook.

Checked: the gates pass what they should and refuse what they should (bob's own ratification over MCP never
lands, whichever gate it meets); nothing either agent wrote is lost; every clone ends at the remote's tip,
clean and fresh; both agents' boot context and recall agree in every clone, and recall answers the side Pat
ratified."""

import json
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from helpers import git, memstack
from mcp_support import ok, refused, run, server

pytestmark = [pytest.mark.skipif(shutil.which("ssh-keygen") is None, reason="ssh-keygen is not installed: the"
                                 " person signs the ratification with an SSH key made here"),
              pytest.mark.slow]
SUBJECT = "deploys"


def cli(store: Path, *args: str) -> str:
    proc = memstack("--store", str(store), *args)
    assert proc.returncode == 0, (args, proc.stdout, proc.stderr)
    return proc.stdout


def ssh_key(tmp_path: Path, name: str) -> Path:
    """A new ed25519 key pair without a passphrase; the private key's path (the .pub beside it)."""
    path = tmp_path / "keys" / name
    path.parent.mkdir(exist_ok=True)
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", f"{name}@example.com", "-f", str(path)],
                   check=True)
    return path


def tip(remote: Path) -> str:
    return git(remote, "rev-parse", "main").stdout.strip()


def records(repo: Path, rev: str, folder: str) -> dict[str, dict]:
    """Every JSON line under `folder` in commit `rev`, by id."""
    names = git(repo, "ls-tree", "-r", "--name-only", rev, "--", folder).stdout.split()
    lines = (line for name in names for line in git(repo, "show", f"{rev}:{name}").stdout.splitlines())
    return {record["id"]: record for record in map(json.loads, lines)}


def refused_at_every_gate(bob: Path, remote: Path) -> None:
    """bob's ratification over MCP (a `via: mcp` line) is refused by the pre-commit hook (a commit of its
    own, and sync's), by the pre-push hook and by the remote's pre-receive hook; then bob discards it."""
    before = tip(remote)
    head = git(bob, "rev-parse", "HEAD").stdout.strip()
    synced = memstack("--store", str(bob), "sync")
    assert synced.returncode != 0 and "pre-commit" in synced.stderr, synced.stdout + synced.stderr
    git(bob, "add", "kb/binder.jsonl")
    committed = git(bob, "commit", "-qm", "bob ratifies friday", check=False)
    assert committed.returncode != 0 and "made over MCP (via: mcp)" in committed.stdout + committed.stderr
    git(bob, "commit", "-qm", "bob ratifies friday", "--no-verify")
    audit = memstack("--store", str(bob), "check", "--range", f"{head}..HEAD")
    assert audit.returncode == 1 and "made over MCP (via: mcp)" in audit.stdout, audit.stdout + audit.stderr
    pushed = git(bob, "push", "-q", "origin", "main", check=False)
    assert pushed.returncode != 0 and "made over MCP (via: mcp)" in pushed.stdout + pushed.stderr  # pre-push
    forced = git(bob, "push", "-q", "--no-verify", "origin", "main", check=False)
    assert forced.returncode != 0 and "pre-receive hook declined" in forced.stderr, forced.stderr
    assert "made over MCP (via: mcp)" in forced.stderr
    assert tip(remote) == before
    git(bob, "reset", "-q", "--hard", head)  # bob drops its own decision: a person decides
    assert git(bob, "status", "--porcelain").stdout == ""


def unsigned_refused(pat: Path, remote: Path) -> None:
    """Pat's decision staged, committed without his signature: the pre-commit hook refuses it where the clone
    does not sign, and a commit that skipped the hook is refused by the pre-push and pre-receive hooks (which
    verify signatures); Pat takes the commit back, his decision staged again."""
    before = tip(remote)
    unset = git(pat, "-c", "commit.gpgsign=false", "commit", "-qm", "Pat ratifies, unsigned", check=False)
    assert unset.returncode != 0 and "does not sign its commits" in unset.stdout + unset.stderr, unset.stdout
    git(pat, "commit", "-qm", "Pat ratifies, unsigned", "--no-verify", "--no-gpg-sign")
    pushed = git(pat, "push", "-q", "origin", "main", check=False)
    assert pushed.returncode != 0 and "is not signed (binder.require_signed)" in pushed.stdout + pushed.stderr
    forced = git(pat, "push", "-q", "--no-verify", "origin", "main", check=False)
    assert forced.returncode != 0 and "is not signed (binder.require_signed)" in forced.stderr, forced.stderr
    assert tip(remote) == before
    git(pat, "reset", "-q", "--soft", "HEAD~1")


def the_team_plays(tmp_path: Path, pat_key: Path) -> dict[str, Any]:
    """The whole scenario; returns what the checks need."""
    remote, alice, bob, pat = (tmp_path / name for name in ("remote.git", "alice", "bob", "pat"))
    git(tmp_path, "init", "-q", "--bare", "-b", "main", str(remote))
    cli(remote, "install")
    assert memstack("init", str(alice), "--agent", "alice", "--agent", "bob").returncode == 0
    git(alice, "remote", "add", "origin", str(remote))
    git(alice, "push", "-q", "-u", "origin", "main")
    for clone in (bob, pat):
        git(tmp_path, "clone", "-q", str(remote), str(clone))
        cli(clone, "install")
    for key, value in (("user.name", "Pat"), ("user.email", "pat@example.com"), ("gpg.format", "ssh"),
                       ("user.signingkey", str(pat_key.with_suffix(".pub"))), ("commit.gpgsign", "true")):
        git(pat, "config", key, value)

    # Pat lists his key in a commit of its own (a commit never lists its own signer), pushed through the gates
    config = pat / "memstack.yaml"
    config.write_text(config.read_text() + "binder:\n  require_signed: true\n  signers:\n    - name: Pat\n"
                      f"      key: {pat_key.with_suffix('.pub').read_text().strip()}\n")
    git(pat, "commit", "-qam", "Pat signs the Binder's decisions")
    git(pat, "push", "-q", "origin", "main")
    start = tip(remote)

    # alice, on the command line
    cli(alice, "sync")
    cli(alice, "capture", "--agent", "alice", "--subject", SUBJECT, "--predicate", "decided", "--object", "tuesday")
    written = [re.findall(r"^wrote ([0-9a-f]{32})\b", cli(alice, "intake", "write", "--agent", "alice", *more),
                          re.M)[0]
               for more in (("--content", "The staging database is rebuilt nightly", "--tier", "verified",
                             "--confidence", "0.9"),
                            ("--content", "The release train leaves on wednesdays"))]
    cli(alice, "sync")

    # bob, over MCP in one session; alice decides wednesday meanwhile, bob friday: the merge keeps both
    friday: dict[str, Any] = {}

    async def bob_works() -> None:
        async with server("--agent", "bob", cwd=bob) as client:
            await ok(client, "sync")
            for content in ("test_upload times out on CI", "The CI runners were moved to the new cluster"):
                written.append((await ok(client, "intake_write", content=content))["record"]["id"])
            cli(alice, "capture", "--agent", "alice", "--subject", SUBJECT, "--predicate", "decided", "--object",
                "wednesday", "--contradicts")
            friday.update((await ok(client, "capture", subject=SUBJECT, predicate="decided", object="friday",
                                     contradicts=True))[0])
            assert friday["agent"] == "bob"
            cli(alice, "sync")
            await ok(client, "sync")
            # bob would ratify its own side: under require_signed refused up front, nothing written
            told = await refused(client, "binder_ratify", id=friday["id"], note="friday suits CI")
            assert "binder.require_signed is on" in told and "nothing written" in told, told

    run(bob_works)
    assert git(bob, "status", "--porcelain").stdout == ""
    # the line an older memstack would have written (by bob, via mcp), appended by hand: no gate lets it land
    line = {"by": "bob", "decided_at": 1767312000000, "decision": "ratify", "fact_id": friday["id"], "via": "mcp"}
    with (bob / "kb" / "binder.jsonl").open("a", encoding="utf-8") as log:
        log.write(json.dumps(line, sort_keys=True, separators=(",", ":")) + "\n")
    refused_at_every_gate(bob, remote)

    # Pat reviews what the agents pushed, then ratifies wednesday in a signed commit
    git(pat, "fetch", "-q")
    review = cli(pat, "review", "main..origin/main")
    assert "wednesday" in review and "friday" in review, review
    cli(pat, "sync")
    before = git(pat, "rev-parse", "HEAD").stdout.strip()
    recalled = json.loads(cli(pat, "recall", "--subject", SUBJECT, "--json"))["items"]
    wednesday = next(f["id"] for f in recalled if f["object"] == "wednesday")
    cli(pat, "binder", "ratify", wednesday, "--by", "Pat", "--note", "the release train leaves on wednesday")
    git(pat, "add", "-A")
    unsigned_refused(pat, remote)
    git(pat, "commit", "-qm", "Pat ratifies wednesday")  # the pre-commit hook: Pat's clone signs with his key
    signed = git(pat, "rev-parse", "HEAD").stdout.strip()
    git(pat, "push", "-q", "origin", "main")  # pre-push, then the remote's pre-receive, verify the signature
    assert tip(remote) == signed
    decided = cli(pat, "review", f"{before}..HEAD")
    assert "Pat" in decided and "wednesday" in decided, decided

    # alice seals a handoff on the command line, bob over MCP; alice's clone promotes; everyone syncs
    memstack_handoff(alice, "## Open threads\n- move the deploy job to wednesday\n\n## Capability table\n"
                            "| capability | status |\n|---|---|\n| deploy | waiting |\n")

    async def bob_seals() -> None:
        async with server("--agent", "bob", cwd=bob) as client:
            await ok(client, "handoff_write", text="## Open threads\n- fix test_upload\n\n## Capability table\n"
                                                      "| capability | status |\n|---|---|\n| ci | flaky |\n")
            await ok(client, "sync")

    run(bob_seals)
    cli(alice, "sync")
    cli(alice, "promote")
    cli(alice, "sync")

    async def bob_syncs() -> None:
        async with server("--agent", "bob", cwd=bob) as client:
            await ok(client, "sync")

    run(bob_syncs)
    cli(pat, "sync")
    return {"remote": remote, "clones": (alice, bob, pat), "written": written, "start": start,
            "signed": signed, "wednesday": wednesday, "friday": friday["id"]}


def memstack_handoff(store: Path, text: str) -> None:
    proc = memstack("--store", str(store), "handoff", "write", "--agent", "alice", input=text)
    assert proc.returncode == 0, proc.stderr


def session_start(clone: Path, agent: str) -> str:
    """The boot context `memstack hook session-start` gives Claude Code, without the clone's own path."""
    event = json.dumps({"hook_event_name": "SessionStart", "session_id": f"{agent}-1", "source": "startup"})
    proc = memstack("--store", str(clone), "hook", "session-start", "--agent", agent, input=event)
    assert proc.returncode == 0, proc.stderr
    context = json.loads(proc.stdout)["hookSpecificOutput"]["additionalContext"]
    assert str(clone) in context
    return context.replace(str(clone), "STORE")


def test_two_agents_and_a_person_share_one_signed_memory(tmp_path: Path) -> None:
    pat_key = ssh_key(tmp_path, "pat")
    team = the_team_plays(tmp_path, pat_key)
    remote, clones = team["remote"], team["clones"]

    # every clone is at the remote's tip, clean and fresh; the whole history passes check --range
    head = tip(remote)
    for clone in clones:
        assert git(clone, "rev-parse", "HEAD").stdout.strip() == head, clone.name
        assert git(clone, "status", "--porcelain").stdout == "", clone.name
        fresh = memstack("--store", str(clone), "rebuild", "--check")
        assert fresh.returncode == 0, (clone.name, fresh.stdout, fresh.stderr)
    root = git(clones[0], "rev-list", "--max-parents=0", "HEAD").stdout.split()[0]
    audit = memstack("--store", str(clones[0]), "check", "--range", f"{root}..main")
    assert audit.returncode == 0, audit.stdout + audit.stderr

    # nothing lost: every intake record either agent wrote is on the remote, under its agent
    intake = records(remote, "main", "intake")
    assert len(team["written"]) == 4 and set(team["written"]) <= set(intake)
    assert [intake[i]["agent"] for i in team["written"]] == ["alice", "alice", "bob", "bob"]

    # the one decision on the remote is Pat's, in the commit his key signed, verifiable with the listed key
    decisions = [json.loads(line) for line in git(remote, "show", "main:kb/binder.jsonl").stdout.splitlines()]
    assert [(d.get("fact_id"), d["by"], d.get("via")) for d in decisions] == [(team["wednesday"], "Pat", None)]
    facts = records(remote, "main", "kb/facts")
    assert facts[team["friday"]]["valid_to"] is not None and facts[team["wednesday"]]["valid_to"] is None
    allowed = tmp_path / "allowed_signers"
    allowed.write_text(f"Pat {pat_key.with_suffix('.pub').read_text()}")
    verified = git(remote, "-c", f"gpg.ssh.allowedSignersFile={allowed}", "verify-commit", team["signed"],
                   check=False)
    assert verified.returncode == 0 and 'Good "git" signature for Pat' in verified.stderr, verified.stderr

    # both agents' boot context and recall agree in every clone; recall answers the ratified side
    for agent in ("alice", "bob"):
        shown = [cli(clone, "boot", "show", "--agent", agent) for clone in clones]
        assert shown[0] and shown.count(shown[0]) == 3, shown
        started = [session_start(clone, agent) for clone in clones]  # what Claude Code's SessionStart hook gets
        assert started.count(started[0]) == 3 and "deploys decided wednesday" in started[0], started
        assert "friday" not in started[0], started[0]
    for clone in clones:  # the hook's session note is no memory: the tree stays clean
        assert git(clone, "status", "--porcelain").stdout == "", clone.name
    recalled = [cli(clone, "recall", "--subject", SUBJECT, "--json") for clone in clones]
    assert recalled.count(recalled[0]) == 3, recalled
    answer = json.loads(recalled[0])["items"]
    assert [(f["id"], f["object"]) for f in answer] == [(team["wednesday"], "wednesday")], answer

    async def bob_reads() -> None:
        async with server("--agent", "bob", cwd=clones[1]) as client:
            anchor = await ok(client, "boot_show", agent="bob")
            assert anchor == json.loads(cli(clones[0], "boot", "show", "--agent", "bob", "--json"))
            over_mcp = await ok(client, "recall", subject=SUBJECT)
            assert [f["id"] for f in over_mcp["items"]] == [team["wednesday"]]

    run(bob_reads)
