"""The README's team walk-through, run as written: a bare remote guarded by hooks/pre-receive, three clones
(agents alice and bob writing over the command line, Pat ratifying in the Binder), every command of the
block in order, in one shell.

The block is read from README.md ("### Two agents and a person, step by step"), so a change that breaks it
fails here. Then: every gate was live (a bad commit is refused by pre-commit, pre-push and pre-receive
alike), nothing either agent wrote is missing from the remote, and both agents' clones give the same boot
context and recall.
"""

import json
import re
import subprocess
from pathlib import Path

import pytest

from helpers import FENCE, as_script, git, memstack

ROOT = Path(__file__).resolve().parents[2]
HEADING = "### Two agents and a person, step by step"


def walkthrough(readme: str) -> list[str]:
    """The commands of the section's first ```sh block, in order (comments and blank lines dropped)."""
    match = re.search(rf"^{re.escape(HEADING)}\n(.*?)(?=^#{{2,3}} |\Z)", readme, re.S | re.M)
    assert match, f"README.md has no '{HEADING}' section"
    block = FENCE.search(match.group(1))
    assert block, "the walk-through has no ```sh block"
    return [line for line in block.group(1).splitlines() if line.strip() and not line.lstrip().startswith("#")]


def ids(output: str, verb: str) -> list[str]:
    """The ids a verb printed: `wrote ID to ...` (intake write), `captured ID ...` (capture)."""
    return re.findall(rf"^{verb} ([0-9a-f]{{32}})\b", output, re.M)


def records(repo: Path, rev: str, folder: str) -> dict[str, dict]:
    """Every JSON line under `folder` in commit `rev`, by id."""
    names = git(repo, "ls-tree", "-r", "--name-only", rev, "--", folder).stdout.split()
    lines = (line for name in names for line in git(repo, "show", f"{rev}:{name}").stdout.splitlines())
    return {record["id"]: record for record in map(json.loads, lines)}


def refused_everywhere(clone: Path, remote: Path) -> None:
    """A commit that rewrites an intake line (I1) is refused by each gate in turn, and never reaches the
    remote: the gates the walk-through's commits and pushes went through were live."""
    day = next((clone / "intake" / "bob").glob("*.jsonl"))
    day.write_text(day.read_text().replace("times out", "passes"))
    git(clone, "add", "-A")
    assert git(clone, "commit", "-qm", "rewrite", check=False).returncode != 0  # pre-commit
    git(clone, "commit", "-qm", "rewrite", "--no-verify")
    tip = git(remote, "rev-parse", "main").stdout
    pushed = git(clone, "push", "-q", "origin", "main", check=False)
    assert pushed.returncode != 0 and "I1" in pushed.stdout + pushed.stderr, pushed.stderr  # pre-push
    forced = git(clone, "push", "-q", "--no-verify", "origin", "main", check=False)
    assert forced.returncode != 0 and "pre-receive hook declined" in forced.stderr, forced.stderr  # pre-receive
    assert git(remote, "rev-parse", "main").stdout == tip


@pytest.mark.slow
def test_the_readme_team_walkthrough_runs_as_written(tmp_path: Path) -> None:
    commands = walkthrough((ROOT / "README.md").read_text(encoding="utf-8"))
    team = tmp_path / "team"
    team.mkdir()
    proc = subprocess.run(["bash", "-c", as_script(commands)], cwd=team, capture_output=True, text=True,
                          timeout=300)
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-4000:]
    remote, alice, bob, pat = (team / name for name in ("remote.git", "alice", "bob", "pat"))
    assert (remote / "hooks" / "pre-receive").stat().st_mode & 0o111

    # every clone is at the remote's tip, with nothing left uncommitted or lagging
    tip = git(remote, "rev-parse", "main").stdout
    for clone in (alice, bob, pat):
        assert git(clone, "rev-parse", "HEAD").stdout == tip, clone.name
        assert git(clone, "status", "--porcelain").stdout == "", clone.name
        fresh = memstack("rebuild", "--check", cwd=clone)
        assert fresh.returncode == 0, (clone.name, fresh.stdout)
    root = git(alice, "rev-list", "--max-parents=0", "HEAD").stdout.split()[0]
    audit = memstack("check", "--range", f"{root}..main", cwd=alice)
    assert audit.returncode == 0, audit.stdout + audit.stderr

    # nothing lost: every intake record and fact either agent wrote is on the remote
    written, captured = ids(proc.stdout, "wrote"), ids(proc.stdout, "captured")
    assert len(written) == 2 and len(captured) == 3, proc.stdout
    intake = records(remote, "main", "intake")
    assert set(written) <= set(intake) and {intake[i]["agent"] for i in written} == {"alice", "bob"}
    facts = records(remote, "main", "kb/facts")
    assert set(captured) <= set(facts)
    shards = git(remote, "ls-tree", "-r", "--name-only", "main", "kb/promotions").stdout.split()
    ledger = [json.loads(line) for path in shards for line in git(remote, "show", f"main:{path}").stdout.splitlines()]
    assert set(written) <= {entry["intake_id"] for entry in ledger}  # the one promotion routed both

    # the person's decision settled the disagreement, under the person's name
    decisions = [json.loads(line) for line in git(remote, "show", "main:kb/binder.jsonl").stdout.splitlines()]
    assert [(d["decision"], d["by"]) for d in decisions] == [("ratify", "Pat")], decisions

    # both agents' clones read the same memory
    for agent in ("alice", "bob"):
        shown = [memstack("boot", "show", "--agent", agent, cwd=clone) for clone in (alice, bob)]
        assert shown[0].returncode == 0 and shown[0].stdout == shown[1].stdout, shown
        if agent == "alice":
            assert "deploys decided wednesday" in shown[1].stdout  # alice's boot context in bob's clone
    recalled = [memstack("recall", "--subject", "deploys", cwd=clone).stdout for clone in (alice, bob)]
    assert recalled[0] == recalled[1] and "wednesday" in recalled[0] and "friday" not in recalled[0], recalled

    refused_everywhere(bob, remote)
