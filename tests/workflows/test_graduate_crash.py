"""`soil graduate` killed between its two writes (the intake append, the SOIL record's retirement): the
rerun finds the intake record this version of the SOIL record already made (its id derived from the
record's path, `updated_at` and value) and only retires the SOIL record. One SOIL version is one intake
record, whatever step the first run died at.
"""

import json
import shutil
import signal
from pathlib import Path

from helpers import git, memstack

SOIL = "store/session/lexer.json"
GRADUATE = ("soil", "graduate", "session", "lexer", "--subject", "parser", "--predicate", "decided",
            "--object", "hand-written lexer", "--tier", "verified", "--confidence", "0.9")


def graduated(store: Path) -> list[dict]:
    """Every intake record made from the SOIL record, in every agent's files."""
    return [record for path in sorted(store.glob("intake/*/*.jsonl"))
            for record in map(json.loads, path.read_text().splitlines())
            if record["source"] == f"soil:{SOIL}"]


def test_a_graduation_killed_at_any_step_makes_one_intake_record(store: Path, tmp_path: Path) -> None:
    assert memstack("soil", "put", "session", "lexer", "--value", '{"plan": "hand-written"}', cwd=store).returncode == 0
    git(store, "add", "-A")
    git(store, "commit", "-q", "-m", "a SOIL record")
    between = 0  # runs killed after the intake append, before the retirement: the window the rerun must close
    for step in range(1, 20):
        run = tmp_path / f"step-{step}"
        shutil.copytree(store, run, symlinks=True)
        first = memstack(*GRADUATE, cwd=run, env={"MEMSTACK_TEST_KILL_AT": str(step)})
        if first.returncode == 0:
            break
        assert first.returncode == -signal.SIGKILL, first.stderr
        soil = json.loads((run / SOIL).read_text())
        if "graduated_to" in soil:  # killed after both writes: nothing left to do
            assert len(graduated(run)) == 1
        else:
            between += bool(graduated(run))
            rerun = memstack(*GRADUATE, "--json", cwd=run)
            assert rerun.returncode == 0, rerun.stderr
            assert json.loads(rerun.stdout)["intake"]["record"] == graduated(run)[0]
        made = graduated(run)
        assert len(made) == 1, made
        assert json.loads((run / SOIL).read_text())["graduated_to"] == made[0]["id"]
        assert memstack(*GRADUATE, cwd=run).returncode == 2  # already graduated
        git(run, "add", "-A")
        commit = git(run, "commit", "-q", "-m", "graduated after a crash", check=False)
        assert commit.returncode == 0, commit.stdout + commit.stderr  # through the hooks: ids bound, times right
    else:
        raise AssertionError("the graduation never finished")
    assert between >= 1  # the test did kill a run inside the window


def test_the_rerun_finds_the_record_under_another_agent(store: Path) -> None:
    """Killed after the append, rerun for another agent: still the one record, the first agent's."""
    assert memstack("soil", "put", "session", "lexer", "--value", '"hand-written"', cwd=store).returncode == 0
    for step in range(1, 10):
        killed = memstack(*GRADUATE, cwd=store, env={"MEMSTACK_TEST_KILL_AT": str(step)})
        assert killed.returncode == -signal.SIGKILL, killed.stderr
        if graduated(store):
            break
    assert "graduated_to" not in json.loads((store / SOIL).read_text())
    rerun = memstack(*GRADUATE, "--agent", "bob", "--json", cwd=store)
    assert rerun.returncode == 0, rerun.stderr
    made = graduated(store)
    assert len(made) == 1 and made[0]["agent"] == "alice"
    assert json.loads(rerun.stdout)["soil"]["graduated_to"] == made[0]["id"]


def test_a_new_version_of_the_record_graduates_again(store: Path) -> None:
    for value in ('"first"', '"second"'):
        assert memstack("soil", "put", "session", "lexer", "--value", value, cwd=store).returncode == 0
        assert memstack(*GRADUATE, cwd=store).returncode == 0
    assert [r["content"] for r in graduated(store)] == ["first", "second"]
