"""Nothing sensitive read back: a credential that reached memory past the checks (`git commit --no-verify`)
is `[redacted: kind]` on every read verb and MCP tool, shown only to a person at a terminal with `--reveal`;
`promote` skips the record that holds it (exit 0, a warning naming it) and it waits for `memstack forget`."""

import json
import subprocess
from pathlib import Path
from typing import Any

from helpers import MEMSTACK, git, memstack, ok
from mcp_support import ok as tool_ok
from mcp_support import run, server
from secret_corpus import AWS_ID, AWS_SK, GH

DAY = "2026-03-02T10:00:00Z"
REDACTED = "[redacted: GitHub Token]"


def sneak(store: Path, relpath: str, line: dict[str, Any], middle: str) -> dict[str, Any]:
    """A copy of `line` with another id (same time and agent: still bound to its file) and a credential,
    appended and committed past the hooks."""
    record = {**line, "id": line["id"][:12] + middle + line["id"][24:]}
    with open(store / relpath, "a") as out:
        out.write(json.dumps(record) + "\n")
    git(store, "add", "-A")
    git(store, "commit", "-q", "--no-verify", "-m", "past the checks")
    return record


def test_a_sneaked_credential_is_redacted_everywhere_and_promote_skips_it(store: Path) -> None:
    written = ok(store, "intake", "write", "--content", "the CI token lives in the vault", "--subject", "ci",
                 "--predicate", "decided", "--object", "vault", "--tier", "verified", "--confidence", "0.9",
                 "--created-at", DAY)
    sneaked = sneak(store, written["path"], {**written["record"], "content": f"token {GH}", "object": GH},
                    "0123456789ab")
    assert memstack("check", "--range", "HEAD~1..HEAD", cwd=store).returncode == 1  # what the hooks would say

    promoted = memstack("promote", "--now-ts", DAY, cwd=store)
    assert promoted.returncode == 0, promoted.stderr
    assert f"record {sneaked['id']} holds a credential (GitHub Token in content)" in promoted.stderr
    assert GH not in promoted.stderr + promoted.stdout
    [fact] = ok(store, "fact", "history", "--subject", "ci")["items"]  # the other record only
    assert fact["intake_id"] == written["record"]["id"]

    shown = {r["id"]: r for r in ok(store, "intake", "list")["items"]}[sneaked["id"]]
    assert shown["content"] == REDACTED and shown["object"] == REDACTED and shown["subject"] == "ci"
    for args in (["intake", "list"], ["intake", "list", "--pending"], ["search", "token"]):
        result = memstack(*args, cwd=store)
        assert result.returncode == 0 and GH not in result.stdout and "[redacted: GitHub Token]" in result.stdout
    hits = ok(store, "search", "token")["hits"]
    assert hits and all(GH not in json.dumps(h) for h in hits)

    facts = ok(store, "fact", "get-valid-at", "--ts", DAY)["items"]
    fact_file = "kb/facts/alice/2026-03.jsonl"
    bad_fact = sneak(store, fact_file, {**facts[0], "object": f"ghp {GH}"}, "0123456789cd")
    for args in (["fact", "get-valid-at", "--ts", "now"], ["fact", "history", "--subject", "ci"],
                 ["recall", "--subject", "ci"], ["export", "jsonl"], ["export", "knowledge"]):
        result = memstack(*args, "--json", cwd=store) if args[0] != "export" else memstack(*args, cwd=store)
        assert result.returncode == 0, result.stderr
        assert GH not in result.stdout and bad_fact["id"] in result.stdout and REDACTED in result.stdout, args

    async def over_mcp() -> None:
        async with server("--store", str(store)) as client:
            listed = await tool_ok(client, "intake_list")
            history = await tool_ok(client, "fact_history", subject="ci")
            found = await tool_ok(client, "search", query="token")
            assert GH not in json.dumps([listed, history, found])
            assert REDACTED in json.dumps(listed) and REDACTED in json.dumps(history)

    run(over_mcp)

    # --reveal: a person at a terminal sees it; a pipe, a file or the MCP server never do
    piped = memstack("intake", "list", "--reveal", cwd=store)
    assert piped.returncode == 2 and "person at a terminal" in piped.stderr and GH not in piped.stdout
    assert memstack("mcp", "--reveal", cwd=store).returncode == 2
    at_terminal = subprocess.run(["script", "-qec", f"{MEMSTACK} intake list --reveal", "/dev/null"], cwd=store,
                                 capture_output=True, text=True, stdin=subprocess.DEVNULL, timeout=120)
    assert GH in at_terminal.stdout, at_terminal.stdout + at_terminal.stderr

    # it waits for forget: once forgotten, promote passes it by without a word
    ok(store, "forget", sneaked["id"], bad_fact["id"], "--reason", "a leaked CI token (rotated)")
    git(store, "add", "-A")
    assert git(store, "commit", "-q", "-m", "forget the token", check=False).returncode == 0
    again = memstack("promote", "--now-ts", DAY, cwd=store)
    assert again.returncode == 0 and "credential" not in again.stderr, again.stderr


def test_a_long_listing_is_screened_a_chunk_at_a_time_and_still_redacts(store: Path) -> None:
    """A listing of many records is screened as one list a chunk at a time (base/shown.py: the byte
    prefilter over each record's JSON, only the records it hits walked): the one record of seventy that
    holds a credential is still shown redacted, the others as written."""
    written = ok(store, "intake", "write", "--content", "the build takes 3 s", "--created-at", DAY)
    lines = []
    for n in range(70):
        content = f"token {GH}" if n == 66 else f"the build takes {n} s"
        lines.append(json.dumps({**written["record"], "id": written["record"]["id"][:12] + f"{n:012x}"
                                 + written["record"]["id"][24:], "content": content}) + "\n")
    with open(store / written["path"], "a") as out:
        out.writelines(lines)
    git(store, "add", "-A")
    git(store, "commit", "-q", "--no-verify", "-m", "past the checks")
    listed = memstack("intake", "list", "--json", "--limit", "100", cwd=store)
    assert listed.returncode == 0, listed.stderr
    assert GH not in listed.stdout
    items = {r["id"]: r["content"] for r in json.loads(listed.stdout)["items"]}
    assert items[written["record"]["id"][:12] + f"{66:012x}" + written["record"]["id"][24:]] == REDACTED
    assert sum(1 for text in items.values() if text.startswith("the build takes")) == 70


def test_promote_skips_each_record_with_a_credential_split_across_two_fields_among_many(store: Path) -> None:
    """Promote screens the pending records many at a time: a record whose credential is cut between two
    of its fields (a name in one and the value in the next, a token in two halves) is still skipped,
    wherever it stands among the plain ones, and only it."""
    written = ok(store, "intake", "write", "--content", "the build takes 3 s", "--subject", "build",
                 "--predicate", "takes", "--object", "3 s", "--created-at", DAY)
    record, password = written["record"], "Tr0ub4" + "dor&3"
    split = {5: {"title": "aws_secret_access_key =", "content": AWS_SK},  # no field holds a detector's word:
             11: {"object": "the id is " + AWS_ID[:2], "predicate": AWS_ID[2:], "source": "bench"},  # only the
             17: {"object": AWS_ID[2:], "predicate": "id " + AWS_ID[:2], "source": "bench"},  # two joined do
             23: {"object": "the token " + GH[:1], "predicate": GH[1:], "source": "bench"},
             29: {"title": "prod db password:", "content": password, "source": "https://example.org/doc"}}
    lines, held = [], []
    for n in range(40):
        line = {**record, "id": record["id"][:12] + f"{n + 1:012x}" + record["id"][24:], "content": f"build {n}",
                "source": "https://example.org/doc" if n % 3 else "bench", **split.get(n, {})}
        lines.append(json.dumps(line) + "\n")
        held += [line["id"]] if n in split else []
    with open(store / written["path"], "a") as out:
        out.writelines(lines)
    git(store, "add", "-A")
    git(store, "commit", "-q", "--no-verify", "-m", "past the checks")

    promoted = memstack("promote", "--now-ts", DAY, cwd=store)
    assert promoted.returncode == 0, promoted.stderr
    warned = [line for line in promoted.stderr.splitlines() if "holds a credential" in line]
    assert len(warned) == 5 and all(f"record {i} holds a credential" in promoted.stderr for i in held), warned
    assert all(" + " in line for line in warned[1:4]), warned
    assert not any(secret in promoted.stderr for secret in (AWS_SK, AWS_ID, GH, password))
    pending = {r["id"] for r in ok(store, "intake", "list", "--pending", "--limit", "100")["items"]}
    assert pending == set(held)
