"""Human decisions that are really human. Over MCP a Binder decision is recorded as the agent's (`by` the
server's agent, `via: mcp`). With `binder.require_signed: true` and `binder.signers` in memstack.yaml, a
commit that adds Binder lines lands only when it is signed (git's SSH signatures) by a key listed in its
parent's memstack.yaml, under the name each line's `by` gives: the pre-commit hook refuses a clone that is
not set up to sign so, and `check --range` and a bare remote's pre-receive hook verify the signature.

Keys are made here with `ssh-keygen`; commits are real, through the installed hooks."""

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from check_support import commit, committed, copy_store, guarded_bare, head, push, refused, run_check, sneak
from helpers import git, memstack
from mcp_support import ok, run, server
from mcp_support import refused as mcp_refused

pytestmark = pytest.mark.skipif(shutil.which("ssh-keygen") is None, reason="ssh-keygen is not installed")
DECISIONS = "kb/binder.jsonl"


def key(tmp_path: Path, name: str) -> Path:
    """A new ed25519 key pair without a passphrase; returns the private key's path (the .pub beside it)."""
    path = tmp_path / "keys" / name
    path.parent.mkdir(exist_ok=True)
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", f"{name}@example.com", "-f", str(path)],
                   check=True)
    return path


def signers_config(root: Path, *signers: tuple[str, Path], people: tuple[str, ...] = ()) -> None:
    listed = "".join(f"\n    - name: {name}\n      key: {path.with_suffix('.pub').read_text().strip()}"
                     for name, path in signers)
    block = f"binder:\n  require_signed: true\n  signers:{listed}\n"
    if people:
        block += "  people:" + "".join(f"\n    - {name}" for name in people) + "\n"
    config = root / "memstack.yaml"
    config.write_text(config.read_text() + block)


def signs_with(root: Path, private: Path | None) -> None:
    """This clone signs every commit with `private` (None: signs nothing), as docs/binder.md sets it up."""
    if private is None:
        git(root, "config", "commit.gpgsign", "false")
        return
    git(root, "config", "gpg.format", "ssh")
    git(root, "config", "user.signingkey", str(private.with_suffix(".pub")))
    git(root, "config", "commit.gpgsign", "true")


def waiting(root: Path, count: int = 4) -> list[str]:
    """`count` low-confidence records routed to the Binder by a promotion (which commits)."""
    for n in range(count):
        assert memstack("intake", "write", "--content", f"maybe {n}", "--created-at", f"2026-01-02T00:0{n}:00Z",
                        cwd=root).returncode == 0
    committed(root, "memory")
    assert memstack("promote", "--now-ts", "2026-03-01T00:00:00Z", cwd=root).returncode == 0
    return [r["id"] for r in json.loads(memstack("binder", "list", "--json", cwd=root).stdout)["items"]]


@pytest.fixture(scope="module")
def _signed_origin(store_template: Path,  # noqa: F811
                   tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[str]]:
    """The folder of `signed_store`, made once for the module (`store`, `remote.git`, `plain.git`, `keys`), and
    the ids of the records waiting."""
    folder = tmp_path_factory.mktemp("signed")
    repo = copy_store(store_template, folder)
    keys = {name: key(folder, name) for name in ("ada", "eve")}
    signers_config(repo, ("Ada", keys["ada"]))
    committed(repo, "Ada signs Binder decisions")
    ids = waiting(repo)
    git(repo, "remote", "add", "guarded", str(guarded_bare(folder / "remote.git")))
    git(folder, "init", "-q", "--bare", "-b", "main", str(folder / "plain.git"))
    git(repo, "remote", "add", "plain", str(folder / "plain.git"))
    for remote in ("guarded", "plain"):
        code, out = push(repo, remote, "main")
        assert code == 0, out
    return folder, ids


@pytest.fixture
def signed_store(_signed_origin: tuple[Path, list[str]],
                 tmp_path: Path) -> tuple[Path, Path, dict[str, Path], list[str]]:
    """The store with Ada listed as a signer (committed alone, unsigned: no Binder line in it), records
    waiting, pushed to a bare remote guarded by hooks/pre-receive (`guarded`) and to one without hooks
    (`plain`: only the clone's pre-push hook guards it). Made once (`_signed_origin`), copied for each test
    with its remotes and keys."""
    folder, ids = _signed_origin
    shutil.copytree(folder, tmp_path, symlinks=True, dirs_exist_ok=True)
    repo = tmp_path / "store"
    for remote, bare_name in (("guarded", "remote.git"), ("plain", "plain.git")):
        git(repo, "remote", "set-url", remote, str(tmp_path / bare_name))
    return repo, tmp_path / "remote.git", {name: tmp_path / "keys" / name for name in ("ada", "eve")}, ids


def ratify(root: Path, intake_id: str, by: str = "Ada") -> None:
    proc = memstack("binder", "ratify", intake_id, "--by", by, cwd=root)
    assert proc.returncode == 0, proc.stderr


def refused_by_range_and_remote(root: Path, remote: Path, base: str, *expected: str) -> None:
    """`check --range` names the rule and the problem; the clone's pre-push hook refuses a push to the plain
    remote, the guarded remote's pre-receive hook refuses it too, and neither remote changes."""
    proc = run_check(root, "--range", f"{base}..HEAD")
    assert proc.returncode == 1, proc.stdout + proc.stderr
    for text in ("I5", *expected):
        assert text in proc.stdout, f"--range: {text!r} not in:\n{proc.stdout}"
    for name, where, verify in (("plain", root.parent / "plain.git", True), ("guarded", remote, False)):
        before = git(where, "rev-parse", "main").stdout
        code, out = push(root, name, "main", verify=verify)
        assert code != 0, out
        for text in ("I5", *expected):
            assert text in out, f"push to {name}: {text!r} not in:\n{out}"
        assert git(where, "rev-parse", "main").stdout == before


def test_a_ratification_signed_by_its_listed_person_lands_everywhere(signed_store) -> None:  # noqa: ANN001
    root, remote, keys, ids = signed_store
    base = head(root)
    signs_with(root, keys["ada"])
    ratify(root, ids[0])
    tip = committed(root, "Ada ratifies")  # the pre-commit hook: this clone signs with Ada's listed key
    assert "Good" in git(root, "-c", f"gpg.ssh.allowedSignersFile={root.parent / 'none'}", "verify-commit",
                         tip, check=False).stderr  # really signed (by a key this bare check does not trust)
    proc = run_check(root, "--range", f"{base}..HEAD")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    for name, verify in (("plain", True), ("guarded", False)):
        code, out = push(root, name, "main", verify=verify)
        assert code == 0, out
    assert git(remote, "rev-parse", "main").stdout.strip() == tip


def test_an_unsigned_ratification_is_refused(signed_store) -> None:  # noqa: ANN001
    root, remote, _, ids = signed_store
    base = head(root)
    signs_with(root, None)
    ratify(root, ids[0])
    refused(root, "I5", "does not sign its commits with a key binder.signers lists", "git config gpg.format ssh")
    sneak(root)
    refused_by_range_and_remote(root, remote, base, "is not signed (binder.require_signed)")


def test_a_ratification_signed_by_an_unlisted_key_is_refused(signed_store) -> None:  # noqa: ANN001
    root, remote, keys, ids = signed_store
    base = head(root)
    signs_with(root, keys["eve"])
    ratify(root, ids[0])
    refused(root, "I5", "does not sign its commits with a key binder.signers lists")
    sneak(root)  # signed by Eve's key, the hook skipped
    refused_by_range_and_remote(root, remote, base, "signed by a key that binder.signers of memstack.yaml does"
                                                    " not list")


def test_a_by_that_is_not_the_signing_key_s_name_is_refused(signed_store) -> None:  # noqa: ANN001
    root, remote, keys, ids = signed_store
    base = head(root)
    signs_with(root, keys["ada"])
    ratify(root, ids[0], by="Bob")
    refused(root, "I5", "by 'Bob', but this clone signs with the key of 'Ada'")
    sneak(root)
    refused_by_range_and_remote(root, remote, base, "by 'Bob', but commit", "signed with the key of 'Ada'")


def test_a_commit_cannot_list_its_own_signer(signed_store) -> None:  # noqa: ANN001
    root, remote, keys, ids = signed_store
    base = head(root)
    signs_with(root, keys["eve"])
    config = root / "memstack.yaml"
    config.write_text(config.read_text().replace("  signers:", "  signers:\n    - name: Eve\n      key: "
                                                  + keys["eve"].with_suffix(".pub").read_text().strip(), 1))
    ratify(root, ids[0], by="Eve")
    sneak(root, "Eve lists herself and ratifies")
    refused_by_range_and_remote(root, remote, base, "does not list")
    # listed in a commit of its own first, signed by a signer listed before it, Eve's next signed decision lands
    git(root, "reset", "-q", "--hard", base)
    config.write_text(config.read_text().replace("  signers:", "  signers:\n    - name: Eve\n      key: "
                                                  + keys["eve"].with_suffix(".pub").read_text().strip(), 1))
    signs_with(root, keys["ada"])
    committed(root, "Ada lists Eve as a signer")
    signs_with(root, keys["eve"])
    ratify(root, ids[0], by="Eve")
    committed(root, "Eve ratifies")
    assert run_check(root, "--range", f"{base}..HEAD").returncode == 0
    assert push(root, "guarded", "main")[0] == 0


def test_a_decision_over_mcp_is_the_agent_s_and_never_lands_under_require_signed(signed_store) -> None:  # noqa: ANN001
    """Under require_signed an agent's line could never be committed: the tools refuse up front, nothing
    written, the record still waits; a `via: mcp` line written by hand is refused by every check."""
    root, remote, keys, ids = signed_store
    base = head(root)
    before = (root / DECISIONS).read_bytes()

    async def session() -> None:
        async with server("--agent", "bob", cwd=root) as client:
            for tool, arguments in (("binder_ratify", {"id": ids[0], "note": "looks right"}),
                                    ("binder_reject", {"id": ids[1]}),
                                    ("binder_edge", {"from": "a", "to": "b", "relation": "uses"}),
                                    ("binder_file", {"path": str(root / "memstack.yaml")})):
                told = await mcp_refused(client, tool, **arguments)
                assert told.startswith("bad by 'bob': binder.require_signed is on: a Binder line lands only in a"
                                       " commit a person signs"), told
                assert "\n" not in told and "nothing written" in told
            told = await mcp_refused(client, "binder_reject", id=ids[1], by="Ada")
            assert told.startswith("bad by 'Ada': over MCP a Binder line is recorded as made by the agent itself"
                                   " (bob), never in another's name")

    run(session)
    assert (root / DECISIONS).read_bytes() == before and git(root, "status", "--porcelain").stdout == ""
    waiting_now = [r["id"] for r in json.loads(memstack("binder", "list", "--json", cwd=root).stdout)["items"]]
    assert waiting_now == ids  # the record still waits; promote and sync are not wedged
    assert memstack("promote", cwd=root).returncode == 0
    line = {"by": "bob", "decided_at": 1767312000000, "decision": "ratify", "intake_id": ids[0], "via": "mcp"}
    (root / DECISIONS).write_bytes(before + json.dumps(line, sort_keys=True, separators=(",", ":")).encode() + b"\n")
    signs_with(root, keys["ada"])  # even in a commit Ada signs, the agent's line is not hers
    refused(root, "I5", "by 'bob' made over MCP (via: mcp)")
    sneak(root)
    refused_by_range_and_remote(root, remote, base, "made over MCP (via: mcp)")


def test_with_binder_people_an_agent_not_listed_cannot_decide_over_mcp(repo: Path) -> None:  # noqa: F811
    ids = waiting(repo, 2)
    config = repo / "memstack.yaml"
    config.write_text(config.read_text() + "binder:\n  people:\n    - Ada\n")
    before = (repo / DECISIONS).read_bytes() if (repo / DECISIONS).exists() else b""

    async def session() -> None:
        async with server(cwd=repo) as client:
            told = await mcp_refused(client, "binder_ratify", id=ids[0])
            assert told.startswith("bad by 'alice': agent alice is not one of the people memstack.yaml lists under"
                                   " binder.people (Ada)"), told
            for tool, arguments in (("binder_edge", {"from": "a", "to": "b", "relation": "uses"}),
                                    ("binder_file", {"path": str(repo / "memstack.yaml")})):
                assert "not one of the people" in await mcp_refused(client, tool, **arguments)

    run(session)
    assert ((repo / DECISIONS).read_bytes() if (repo / DECISIONS).exists() else b"") == before
    config.write_text(config.read_text() + "    - alice\n")  # the store says this agent decides

    async def listed() -> None:
        async with server(cwd=repo) as client:
            assert (await ok(client, "binder_ratify", id=ids[0]))["by"] == "alice"

    run(listed)
    assert commit(repo, "alice's decision, which binder.people allows").returncode == 0


def test_a_merge_of_signed_decisions_needs_no_signature_of_its_own(signed_store) -> None:  # noqa: ANN001
    """Two signed decisions on two branches, merged by whoever merges (an agent's `memstack sync`, a hosting
    service's merge button): each line was checked in its own signed commit, so the merge lands unsigned."""
    root, remote, keys, ids = signed_store
    base = head(root)
    signs_with(root, keys["ada"])
    git(root, "checkout", "-q", "-b", "ada")
    ratify(root, ids[0])
    committed(root, "Ada ratifies one")
    git(root, "checkout", "-q", "main")
    ratify(root, ids[1])
    committed(root, "Ada ratifies another")
    signs_with(root, None)
    git(root, "merge", "-q", "--no-edit", "ada")
    assert len((root / DECISIONS).read_text().splitlines()) == 2
    proc = run_check(root, "--range", f"{base}..HEAD")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert push(root, "guarded", "main")[0] == 0


@pytest.mark.parametrize(("block", "named"), [
    ("binder:\n  require_signed: yes please\n", "binder.require_signed"),
    ("binder:\n  signers:\n    - name: Ada\n      key: not-a-key AAAA\n", "binder.signers.0.key"),
    ("binder:\n  signers:\n    - name: Ada\n", "binder.signers.0: 'key' is a required property"),
    ("binder:\n  signers:\n    - Ada\n", "binder.signers.0"),
])
def test_a_malformed_signers_block_is_refused_by_name(repo: Path, block: str, named: str) -> None:  # noqa: F811
    config = repo / "memstack.yaml"
    config.write_text(config.read_text() + block)
    proc = memstack("binder", "edge", "--from", "a", "--to", "b", "--relation", "uses", "--by", "Ada", cwd=repo)
    assert proc.returncode == 2 and named in proc.stderr and len(proc.stderr.strip().splitlines()) == 1, proc.stderr


def pending_merge_refused(root: Path, side: str, *expected: str) -> None:
    """`git merge side` concluded through the pre-commit hook, refused naming `expected`; then sneaked in."""
    git(root, "merge", "-q", "--no-ff", "--no-commit", side, check=False)
    git(root, "checkout", "HEAD", "--", "memstack.yaml")  # the branch's own policy kept
    refused(root, *expected)
    sneak(root, f"merge {side}")


def test_a_side_branch_that_turns_require_signed_off_brings_no_unsigned_decision_to_main(signed_store) -> None:  # noqa: ANN001
    """An agent's clone (no key) turns require_signed off on a side branch, ratifies in Ada's name there and
    merges into main keeping main's memstack.yaml: the policy change and the line the merge brings are each
    refused, by the pre-commit hook, check --range, pre-push and pre-receive."""
    root, remote, _, ids = signed_store
    base = head(root)
    signs_with(root, None)
    git(root, "checkout", "-q", "-b", "side")
    config = root / "memstack.yaml"
    config.write_text(config.read_text().replace("require_signed: true", "require_signed: false"))
    refused(root, "I5", "changes the binder policy of memstack.yaml (require_signed, signers, people) while"
                        " require_signed is on, and this clone does not sign its commits with a key binder.signers"
                        " of memstack.yaml lists before the change")
    sneak(root, "tidy config")
    ratify(root, ids[0], by="Ada")
    committed(root, "ratify")  # require_signed is off on this branch: the hook lets it by
    git(root, "checkout", "-q", "main")
    pending_merge_refused(root, "side", "is not signed (binder.require_signed), and this merge brings its line in")
    assert "require_signed: true" in config.read_text()
    refused_by_range_and_remote(root, remote, base, "is not signed (binder.require_signed), and this merge brings"
                                                    " its line in", "is not signed by a key binder.signers of"
                                                                    " memstack.yaml lists before the change")


def ada_lists_eve(root: Path, keys: dict[str, Path]) -> str:
    """Ada adds Eve to binder.signers in a commit she signs; that commit."""
    config = root / "memstack.yaml"
    eve = keys["eve"].with_suffix(".pub").read_text().strip()
    config.write_text(config.read_text().replace("  signers:", f"  signers:\n    - name: Eve\n      key: {eve}", 1))
    signs_with(root, keys["ada"])
    return committed(root, "Ada lists Eve")


def eve_removes_ada(root: Path, keys: dict[str, Path]) -> str:
    """Eve removes Ada's key from binder.signers (leaked) in a commit she signs; that commit."""
    config = root / "memstack.yaml"
    ada = keys["ada"].with_suffix(".pub").read_text().strip()
    config.write_text(config.read_text().replace(f"    - name: Ada\n      key: {ada}\n", ""))
    signs_with(root, keys["eve"])
    return committed(root, "Eve removes Ada's key")


def test_a_key_removed_from_signers_lands_no_decision_through_a_merge(signed_store) -> None:  # noqa: ANN001
    """Ada's key leaked; Eve removes it in a signed commit. Whoever holds Ada's key decides on a commit made
    before the removal and merges main: the merge brings a line signed by a key main no longer lists."""
    root, remote, keys, ids = signed_store
    listed = ada_lists_eve(root, keys)
    revoked = eve_removes_ada(root, keys)
    for name, verify in (("plain", True), ("guarded", False)):
        assert push(root, name, "main", verify=verify)[0] == 0
    git(root, "checkout", "-q", "-b", "leaked", listed)
    signs_with(root, keys["ada"])
    ratify(root, ids[0], by="Ada")
    committed(root, "decided with the leaked key")  # its parent still lists Ada's key
    git(root, "merge", "-q", "--no-commit", "main", check=False)
    refused(root, "signed by a key that binder.signers of memstack.yaml at this merge does not list, and this"
                  " merge brings its line in")
    sneak(root, "merge main")
    git(root, "checkout", "-q", "main")
    git(root, "merge", "-q", "--ff-only", "leaked")
    refused_by_range_and_remote(root, remote, revoked, "signed by a key that binder.signers of memstack.yaml at"
                                                       " this merge does not list")
    # Eve's own decision made on that old commit, merged the same way, lands: her key is listed at the merge
    git(root, "reset", "-q", "--hard", revoked)
    git(root, "checkout", "-q", "-b", "eve", listed)
    signs_with(root, keys["eve"])
    ratify(root, ids[1], by="Eve")
    committed(root, "Eve decides")
    git(root, "merge", "-q", "--no-edit", "main")
    git(root, "checkout", "-q", "main")
    git(root, "merge", "-q", "--ff-only", "eve")
    assert run_check(root, "--range", f"{revoked}..HEAD").returncode == 0
    assert push(root, "guarded", "main")[0] == 0


def test_a_decision_main_took_before_a_key_was_removed_does_not_stop_an_older_branch_merging(
        signed_store) -> None:  # noqa: ANN001
    """Ada decides on main while her key is listed; Eve removes it later. A branch forked before Ada's decision
    merges main: the merge brings Ada's line to the branch, but main took it under main's own policy, which the
    merge keeps: the merge lands (only what the branch brings to main is checked against main's signers)."""
    root, remote, keys, ids = signed_store
    listed = ada_lists_eve(root, keys)
    ratify(root, ids[0], by="Ada")
    committed(root, "Ada decides on main")
    revoked = eve_removes_ada(root, keys)
    assert push(root, "guarded", "main")[0] == 0
    git(root, "checkout", "-q", "-b", "older", listed)
    ratify(root, ids[1], by="Eve")
    committed(root, "Eve decides on the older branch")
    merged = git(root, "merge", "-q", "--no-edit", "main", check=False)
    assert merged.returncode == 0, merged.stdout + merged.stderr
    git(root, "checkout", "-q", "main")
    git(root, "merge", "-q", "--ff-only", "older")
    assert run_check(root, "--range", f"{revoked}..HEAD").returncode == 0
    assert push(root, "guarded", "main")[0] == 0


def test_changing_the_signers_needs_a_signature_by_a_key_listed_before(signed_store) -> None:  # noqa: ANN001
    """An agent lists its own key under Ada's name in one commit and signs a decision with it in the next: the
    change of the list is refused wherever the checks run; signed by Ada, the same change lands."""
    root, remote, keys, ids = signed_store
    base = head(root)
    config = root / "memstack.yaml"
    original = config.read_text()
    agent = keys["eve"].with_suffix(".pub").read_text().strip()
    config.write_text(original + f"    - name: Ada\n      key: {agent}\n")
    signs_with(root, keys["eve"])
    refused(root, "I5", "changes the binder policy of memstack.yaml", "this clone does not sign its commits with a"
                        " key binder.signers of memstack.yaml lists before the change")
    sneak(root, "config: tidy")
    ratify(root, ids[0], by="Ada")
    sneak(root, "ratify")
    refused_by_range_and_remote(root, remote, base, "'config: tidy'", "is not signed by a key binder.signers of"
                                                                      " memstack.yaml lists before the change")
    git(root, "reset", "-q", "--hard", base)
    config.write_text(original.replace("require_signed: true", "require_signed: false"))
    sneak(root, "require_signed off, signed by an unlisted key")  # turning it off is a change of the policy too
    refused_by_range_and_remote(root, remote, base, "changes the binder policy")
    git(root, "reset", "-q", "--hard", base)
    config.write_text(original + f"    - name: Eve\n      key: {agent}\n")
    signs_with(root, keys["ada"])
    committed(root, "Ada lists Eve")
    assert run_check(root, "--range", f"{base}..HEAD").returncode == 0
    assert push(root, "guarded", "main")[0] == 0
