"""The replica and an excise (docs/postgres.md, docs/forgetting.md): the clone that excised follows its rewrite;
a clone still on the history from before it never puts the excised content back into the replica. Real clones
of a real bare remote guarded by hooks/pre-receive, and a real PostgreSQL (tests/pgcluster.py)."""

import json
from pathlib import Path
from typing import Any

import psycopg
import pytest

from helpers import git, memstack
from pgcluster import Cluster
from team_support import clone, guarded_remote, ok

HIDDEN = "phone 555-0199"


def commit(repo: Path, message: str) -> str:
    git(repo, "add", "-A")
    done = git(repo, "commit", "-q", "-m", message, check=False)
    assert done.returncode == 0, done.stdout + done.stderr
    return git(repo, "rev-parse", "HEAD").stdout.strip()


def rows(dsn: str) -> tuple[Any, ...]:
    """Everything the replica holds: every row of every table, and sync_state's commit and tree."""
    with psycopg.connect(dsn) as conn:
        tables = [name for (name,) in conn.execute("SELECT tablename FROM pg_tables WHERE schemaname = 'memstack'"
                                                   " ORDER BY tablename")]
        return tuple(sorted(map(str, conn.execute(f"SELECT t::text FROM memstack.{name} t").fetchall()))
                     for name in tables if name != "sync_state") + tuple(
            conn.execute("SELECT commit, tree FROM memstack.sync_state").fetchall())


def holding(dsn: str, text: str) -> int:
    with psycopg.connect(dsn) as conn:
        found = conn.execute("SELECT count(*) FROM memstack.facts WHERE line LIKE %s", (f"%{text}%",)).fetchone()
    assert found is not None
    return int(found[0])


def refused(repo: Path, *args: str) -> str:
    result = memstack(*args, cwd=repo)
    assert result.returncode == 2, (result.stdout, result.stderr)
    message = result.stderr.strip()
    assert "\n" not in message and "Traceback" not in message and message.startswith("memstack: "), message
    return message


def pg(repo: Path, *args: str) -> Any:
    result = memstack("pg", *args, "--json", cwd=repo)
    assert result.returncode == 0, result.stdout + result.stderr
    return json.loads(result.stdout)


@pytest.fixture
def team(store: Path, tmp_path: Path, pg_cluster: Cluster) -> dict[str, Any]:
    """alice and bob, clones of one guarded remote; alice captured a fact holding HIDDEN, synced database
    `early` at that commit, forgot the fact, pushed, synced database `late` at the forget, excised and
    force-pushed. bob cloned before the forget and has not synced since."""
    remote = guarded_remote(store, tmp_path)
    alice = clone(remote, tmp_path / "alice")
    ok(alice, "capture", "--subject", "ada", "--predicate", "decided", "--object", HIDDEN)
    noted = commit(alice, "note")
    git(alice, "push", "-q", "origin", "HEAD")
    bob = clone(remote, tmp_path / "bob")
    early, late = pg_cluster.new_database(), pg_cluster.new_database()
    assert pg(alice, "sync", early)["commit"] == noted
    fact = ok(alice, "fact", "history", "--subject", "ada")["items"][0]["id"]
    ok(alice, "forget", fact, "--reason", "an erasure request")
    forgot = commit(alice, "forget")
    git(alice, "push", "-q", "origin", "HEAD")
    assert pg(alice, "sync", late)["commit"] == forgot
    receipt = ok(alice, "excise", "--reason", "an erasure request")["receipt"]
    assert receipt["heads"]["refs/heads/main"]["old"] == forgot
    return {"remote": remote, "alice": alice, "bob": bob, "early": early, "late": late, "receipt": receipt,
            "noted": noted, "forgot": forgot}


def force_push(team: dict[str, Any]) -> None:
    pushed = git(team["alice"], "push", "-q", f"--force-with-lease=refs/heads/main:{team['forgot']}", "origin",
                 "refs/heads/main", check=False)
    assert pushed.returncode == 0, pushed.stderr


def test_the_clone_that_excised_follows_its_rewrite_and_says_when_to_force(team: dict[str, Any]) -> None:
    alice, receipt = team["alice"], team["receipt"]
    rewritten = git(alice, "rev-parse", "HEAD").stdout.strip()
    # the replica holds the very head the receipt replaced (pruned here): followed without --force, copied whole
    status = pg(alice, "status", team["late"])
    assert status["relation"] == "excised"
    assert "excised: the history an excise in this clone rewrote" in memstack("pg", "status", team["late"],
                                                                              cwd=alice).stdout
    report = pg(alice, "sync", team["late"])
    assert (report["mode"], report["previous"], report["commit"]) == ("full", team["forgot"], rewritten)
    assert holding(team["late"], "555-0199") == 0 and holding(team["late"], "[forgotten: an erasure request]") == 1
    assert pg(alice, "status", team["late"])["relation"] == "current"
    # an older commit, pruned too, that no receipt names: refused, saying to force (not to pull: a pull would
    # fetch the old history back before the force push)
    held = rows(team["early"])
    message = refused(alice, "pg", "sync", team["early"])
    assert f"the replica holds commit {team['noted'][:12]}, which this clone does not have" in message
    assert f"if the excise of the erasure receipt {receipt['id']}" in message and "pass --force" in message
    assert rows(team["early"]) == held
    assert pg(alice, "sync", team["early"], "--force")["mode"] == "full"
    assert holding(team["early"], "555-0199") == 0


def test_a_clone_from_before_the_excise_never_puts_its_content_back(team: dict[str, Any]) -> None:
    alice, bob, late, receipt = team["alice"], team["bob"], team["late"], team["receipt"]
    force_push(team)
    pg(alice, "sync", late, "--force")  # as a clone that did not excise would (the other test: no --force needed)
    held = rows(late)
    git(bob, "fetch", "-q")  # the rewritten history fetched, bob's branch still on the old one
    stale = git(bob, "rev-parse", "HEAD").stdout.strip()
    message = refused(bob, "pg", "sync", late)
    assert f"made after the excise of the erasure receipt {receipt['id']}" in message, message
    assert f"this clone's HEAD ({stale[:12]}) is from before it" in message
    assert "then `memstack sync`" in message
    assert rows(late) == held and holding(late, "555-0199") == 0
    status = pg(bob, "status", late)
    assert status["relation"] == "stale"
    assert f"stale: HEAD ({stale[:12]}) is from before an excise" in memstack("pg", "status", late, cwd=bob).stdout
    # what the message says to do works, the fetch by hand notwithstanding
    said = memstack("sync", cwd=bob)
    assert said.returncode == 0, said.stdout + said.stderr
    assert f"rewritten by an excise (erasure receipt {receipt['id']})" in said.stdout
    assert pg(bob, "sync", late)["mode"] in ("unchanged", "incremental")
    assert holding(late, "555-0199") == 0
    assert memstack("pg", "sync", late, cwd=alice).returncode == 0
