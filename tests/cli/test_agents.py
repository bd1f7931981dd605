"""The agents of a store: a write for an agent memstack.yaml does not list is refused (the command line
and MCP alike), and `memstack agent add` lists one on purpose."""

import json
from pathlib import Path

from helpers import git, memstack, tree_snapshot
from mcp_support import ok, refused, run, server

WRITES = [
    ("intake", "write", "--content", "x", "--agent", "clade"),
    ("capture", "--subject", "db", "--predicate", "decided", "--object", "x", "--agent", "clade"),
    ("fact", "add", "--subject", "db", "--predicate", "uses", "--object", "x", "--agent", "clade"),
    ("--agent", "clade", "intake", "write", "--content", "x"),
]


def test_a_misspelled_agent_is_refused_naming_the_known_ones_and_nothing_is_written(store: Path) -> None:
    (store / "doc.md").write_text("# a decision\n")
    git(store, "add", "doc.md")
    files = tree_snapshot(store)
    for args in [*WRITES, ("nest", "doc.md", "--agent", "clade")]:
        result = memstack(*args, cwd=store)
        assert result.returncode == 2, (args, result.stderr)
        assert result.stderr == ("memstack: bad --agent 'clade': not an agent of this store (memstack.yaml lists"
                                 " alice, bob); `memstack agent add clade` adds it\n")
    from_env = memstack("intake", "write", "--content", "x", cwd=store, env={"MEMSTACK_AGENT": "clade"})
    assert from_env.returncode == 2 and "agent 'clade' (from MEMSTACK_AGENT)" in from_env.stderr
    assert tree_snapshot(store) == files
    assert not (store / "intake" / "clade").exists()


def test_agent_add_lists_the_agent_writes_its_identity_and_commits_through_the_hooks(store: Path) -> None:
    yaml_before = (store / "memstack.yaml").read_text()
    added = memstack("agent", "add", "clade", cwd=store)
    assert added.returncode == 0, added.stderr
    assert added.stdout.startswith("added agent clade: wrote memstack.yaml and identity/clade.md; commit them"
                                   " (`git add memstack.yaml identity/clade.md && git commit`)")  # sync would not
    yaml_after = (store / "memstack.yaml").read_text()
    assert yaml_after.replace("  - clade\n", "", 1) == yaml_before  # comments and layout kept
    assert (store / "identity" / "clade.md").read_text().startswith("# clade\n")
    assert json.loads(memstack("agent", "list", "--json", cwd=store).stdout) == {
        "agents": ["alice", "bob", "clade"], "default_agent": "alice"}
    again = memstack("agent", "add", "clade", cwd=store)
    assert (again.returncode, again.stdout) == (0, "clade is already an agent of this store; nothing changed\n")
    assert memstack("intake", "write", "--content", "x", "--agent", "clade", cwd=store).returncode == 0
    git(store, "add", "-A")
    committed = git(store, "commit", "-q", "-m", "agent clade", check=False)  # the pre-commit hook checks it
    assert committed.returncode == 0, committed.stdout + committed.stderr


def test_agent_add_refuses_a_bad_name_and_writes_nothing(store: Path) -> None:
    files = tree_snapshot(store)
    for name in ("Clade", "../x", ""):
        result = memstack("agent", "add", name, cwd=store)
        assert result.returncode == 2 and len(result.stderr.splitlines()) == 1, result.stderr
    assert tree_snapshot(store) == files


def test_an_mcp_write_for_an_unknown_agent_is_refused(store: Path) -> None:
    async def session() -> None:
        async with server("--store", str(store), "--agent", "clade") as client:
            said = await refused(client, "intake_write", content="x")
            assert "not an agent of this store" in said and "alice, bob" in said, said
            said = await refused(client, "capture", subject="db", predicate="decided", object="x", agent="clade")
            assert "not an agent of this store" in said, said
            assert (await ok(client, "intake_write", content="y", agent="bob"))["record"]["agent"] == "bob"

    files = tree_snapshot(store)
    run(session)
    assert [p for p in tree_snapshot(store) if p not in files] == [
        next(p for p in tree_snapshot(store) if p.startswith("intake/bob/"))]
