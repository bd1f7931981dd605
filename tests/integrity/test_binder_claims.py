"""Claims only a person may make. Tier "ratified" comes only from a Binder ratification: a writer that
claims it (`intake write`, `soil graduate`, their MCP tools) is refused before anything is written, and a
committed intake record claiming it is refused by the checks. A hand-appended Binder line must hold up as
memstack's own: its `by` one of `binder.people` when memstack.yaml lists them, a filed document that is in
kb/files, a decision on an intake record the store holds, and no document in kb/files without its line.

Every attack is a hand edit committed for real through the installed pre-commit hook, then sneaked past
it (`--no-verify`) and found by `memstack check --all`; memstack's own verbs still pass.
"""

import hashlib
import json
from pathlib import Path

from check_support import append, committed, dumps, fact, head, intake, refused, run_check, sneak, write
from helpers import git, memstack, tree_snapshot

DECISIONS = "kb/binder.jsonl"
LOG = "intake/alice/2026-01-01.jsonl"
JAN = 1767225600000
RATIFIED_ONLY = "only a person's Binder ratification makes a record ratified"


def refused_and_audited(root: Path, *expected: str) -> None:
    """The work tree's change is refused by the pre-commit hook; committed past it, `check --all` finds it."""
    refused(root, *expected)
    sneak(root)
    proc = run_check(root, "--all")
    assert proc.returncode == 1, proc.stdout + proc.stderr
    for text in expected:
        assert text in proc.stdout, f"--all: {text!r} not in:\n{proc.stdout}"


def assert_refused_cli(root: Path, *args: str, expected: str) -> None:
    before, status = tree_snapshot(root), git(root, "status", "--porcelain").stdout
    proc = memstack(*args, "--store", str(root))
    assert proc.returncode == 2, proc.stdout + proc.stderr
    line = proc.stderr.strip()
    assert "\n" not in line and expected in line, line
    assert tree_snapshot(root) == before and git(root, "status", "--porcelain").stdout == status


def edge(by: str, to: str = "lexer") -> dict:
    return {"kind": "edge", "from": "parser", "relation": "uses", "to": to, "decided_at": JAN, "by": by}


def with_people(root: Path, *names: str) -> None:
    config = (root / "memstack.yaml").read_text().split("binder:\n", 1)[0]  # the block this helper added last
    listed = "".join(f"\n    - {name}" for name in names)
    write(root, "memstack.yaml", config + f"binder:\n  people:{listed}\n")


# ---- tier "ratified" ------------------------------------------------------------------------------

def test_intake_write_claiming_ratified_is_refused(repo: Path) -> None:  # noqa: F811
    assert_refused_cli(repo, "intake", "write", "--content", "sure", "--tier", "ratified", "--confidence", "1",
                       expected=f"bad tier 'ratified': {RATIFIED_ONLY}")


def test_soil_graduate_claiming_ratified_is_refused_and_the_record_stays_live(repo: Path) -> None:  # noqa: F811
    assert memstack("soil", "put", "session", "lexer", "--value", '"hand-written"', cwd=repo).returncode == 0
    assert_refused_cli(repo, "soil", "graduate", "session", "lexer", "--tier", "ratified",
                       expected=f"bad tier 'ratified': {RATIFIED_ONLY}")
    assert "graduated_to" not in json.loads((repo / "store/session/lexer.json").read_text())


def test_the_tools_claiming_ratified_are_refused(repo: Path) -> None:  # noqa: F811
    from mcp_support import refused as tool_refused
    from mcp_support import run, server

    assert memstack("soil", "put", "session", "lexer", "--value", '"hand-written"', cwd=repo).returncode == 0
    before = tree_snapshot(repo)

    async def test() -> None:
        async with server("--store", str(repo), "--agent", "alice") as client:
            for tool, arguments in (("intake_write", {"content": "sure", "confidence": 1.0}),
                                    ("soil_graduate", {"collection": "session", "key": "lexer"})):
                message = await tool_refused(client, tool, tier="ratified", **arguments)
                assert "tier" in message and "ratified" in message, message

    run(test)
    assert tree_snapshot(repo) == before


def test_a_committed_intake_record_claiming_ratified_is_refused(repo: Path) -> None:  # noqa: F811
    write(repo, LOG, dumps(intake(1, tier="ratified", confidence=1.0)))
    refused_and_audited(repo, f"{LOG}:1: I5 intake record at tier 'ratified': {RATIFIED_ONLY}")


def test_a_ratification_through_the_binder_still_makes_a_ratified_fact(repo: Path) -> None:  # noqa: F811
    written = json.loads(memstack("intake", "write", "--content", "tabs?", "--subject", "indent", "--predicate",
                                  "uses", "--object", "tabs", "--json", cwd=repo).stdout)
    committed(repo, "intake")
    assert memstack("promote", cwd=repo).returncode == 0  # routed to the Binder (low confidence), committed
    assert memstack("binder", "ratify", written["record"]["id"], "--by", "Ada", cwd=repo).returncode == 0
    committed(repo, "a person ratified it")
    assert memstack("promote", cwd=repo).returncode == 0
    facts = [json.loads(line) for path in repo.glob("kb/facts/*/*.jsonl") for line in path.read_text().splitlines()]
    assert [(f["subject"], f["tier"]) for f in facts] == [("indent", "ratified")]
    assert run_check(repo, "--all").returncode == 0


def test_a_hand_appended_fact_claiming_ratified_is_refused(repo: Path) -> None:  # noqa: F811
    """Beyond the intake log: a fact line at tier ratified that no ratification made (no `-r` id derived
    from an intake id the Binder ratified)."""
    path = "kb/facts/alice/2026-01.jsonl"
    write(repo, path, dumps(fact("a", tier="ratified")))
    refused_and_audited(repo, f"{path}:1: I5 fact at tier 'ratified' that no Binder ratification made")


# ---- hand-appended Binder lines --------------------------------------------------------------------

def test_a_binder_line_by_someone_memstack_yaml_does_not_list_is_refused(repo: Path) -> None:  # noqa: F811
    with_people(repo, "Ada", "Grace")
    committed(repo, "the Binder's people")
    assert_refused_cli(repo, "binder", "edge", "--from", "parser", "--to", "lexer", "--relation", "uses",
                       "--by", "mallory", expected="bad --by 'mallory': not one of the people memstack.yaml lists")
    assert memstack("binder", "edge", "--from", "parser", "--to", "lexer", "--relation", "uses", "--by", "Ada",
                    cwd=repo).returncode == 0
    committed(repo, "memstack's own line, by a listed person")
    append(repo, DECISIONS, dumps(edge("mallory", to="tokens")))
    refused_and_audited(repo, f"{DECISIONS}:2: I5 by 'mallory' is not one of the people memstack.yaml lists"
                              " under binder.people")


def test_one_commit_cannot_list_a_person_and_use_the_name(repo: Path) -> None:  # noqa: F811
    with_people(repo, "Ada")
    committed(repo, "the Binder's people")
    with_people(repo, "Ada", "mallory")
    append(repo, DECISIONS, dumps(edge("mallory")))
    refused(repo, f"{DECISIONS}:1: I5 by 'mallory' is not one of the people memstack.yaml before and after this"
                  " change lists")
    git(repo, "reset", "-q", "--hard")
    with_people(repo, "mallory")
    committed(repo, "a new person, in a commit of its own")


def test_a_file_line_for_a_document_that_is_not_there_is_refused(repo: Path) -> None:  # noqa: F811
    digest = hashlib.sha256(b"# ADR\n").hexdigest()
    append(repo, DECISIONS, dumps({"kind": "file", "path": f"kb/files/{digest}.md", "sha256": digest,
                                   "name": "adr.md", "decided_at": JAN, "by": "Ada"}))
    refused_and_audited(repo, f"{DECISIONS}:1: I5 filed document kb/files/{digest}.md is not in kb/files")


def test_a_ratification_of_an_intake_record_the_store_does_not_hold_is_refused(repo: Path) -> None:  # noqa: F811
    write(repo, LOG, dumps(intake(1)))
    committed(repo, "one intake record")
    missing = intake(2)["id"]
    append(repo, DECISIONS, dumps({"intake_id": missing, "decision": "ratify", "decided_at": JAN, "by": "Ada"}))
    refused_and_audited(repo, f"{DECISIONS}:1: I5 decision on intake record {missing}, which the store does not hold")


def test_a_ratification_of_a_record_never_routed_to_the_binder_is_refused(repo: Path) -> None:  # noqa: F811
    """A pending record, or one promotion made knowledge: a hand-appended ratification would make it a
    fact at tier ratified without a person ever seeing it in the Binder."""
    written = json.loads(memstack("intake", "write", "--content", "x", "--subject", "a", "--predicate", "b",
                                  "--object", "c", "--json", cwd=repo).stdout)["record"]["id"]
    committed(repo, "a pending record")
    append(repo, DECISIONS, dumps({"intake_id": written, "decision": "ratify", "decided_at": JAN, "by": "Ada"}))
    refused_and_audited(repo, f"{DECISIONS}:1: I5 decision on intake record {written}, which promotion never"
                              " routed to the Binder")


def test_a_ratification_of_a_legacy_id_the_store_does_not_hold_is_refused(repo: Path) -> None:  # noqa: F811
    append(repo, DECISIONS, dumps({"intake_id": "000000000001abababab", "decision": "ratify", "decided_at": JAN,
                                   "by": "Ada"}))
    refused(repo, f"{DECISIONS}:1: I5 decision on intake record 000000000001abababab, which the store does not hold")


def test_a_document_in_kb_files_no_line_enters_is_refused(repo: Path) -> None:  # noqa: F811
    data = b"# ADR\n\nUse git.\n"
    path = f"kb/files/{hashlib.sha256(data).hexdigest()}.md"
    write(repo, path, data)
    refused_and_audited(repo, f"{path}: I5 filed document that no `kind: file` line of kb/binder.jsonl enters")


def test_memstack_s_own_binder_writes_pass_every_rule(repo: Path) -> None:  # noqa: F811
    with_people(repo, "Ada")
    committed(repo, "the Binder's people")
    document = repo / "adr.md"  # a filed document comes from inside the repository
    document.write_text("# ADR\n\nUse git.\n")
    for args in (("binder", "file", str(document), "--by", "Ada"),
                 ("binder", "edge", "--from", "parser", "--to", "lexer", "--relation", "uses", "--by", "Ada")):
        proc = memstack(*args, cwd=repo)
        assert proc.returncode == 0, proc.stderr
    committed(repo, "a document and an edge")
    assert head(repo) and run_check(repo, "--all").returncode == 0
