"""Nothing sensitive read back through the anchor reads: `anchors`, `anchors check`, the review's section,
`blame` and their MCP tools show a forgotten record as `[forgotten: reason]` (the old lines of its drifted
anchors, what it knew of the code, hidden too) and a credential in a record or in a code line as
`[redacted: kind]`."""

import json
from pathlib import Path
from typing import Any

from check_support import committed
from helpers import memstack
from mcp_support import ok as tool_ok
from mcp_support import run, server
from secret_corpus import AWS_ID

MEMORY = ".memory"
REASON = "a person's phone number"
FORGOTTEN = f"[forgotten: {REASON}]"
REDACTED = "[redacted: AWS Access Key]"


def _json(code: Path, *args: str, expect: int = 0) -> Any:
    result = memstack(*args, "--json", cwd=code)
    assert result.returncode == expect, (result.returncode, result.stderr)
    return json.loads(result.stdout)


def _text(code: Path, *args: str, expect: int = 0) -> str:
    result = memstack(*args, cwd=code)
    assert result.returncode == expect, (result.returncode, result.stderr)
    return result.stdout


def edit(code: Path, old: str, new: str) -> None:
    text = (code / "app.py").read_text()
    assert old in text
    (code / "app.py").write_text(text.replace(old, new))


def test_a_forgotten_anchored_record_shows_neither_its_content_nor_the_lines_it_knew(code: Path) -> None:
    written = _json(code, "intake", "write", "--content", "ring Ada on 0170 555 0199 before a deploy",
                    "--title", "ring Ada before deploys", "--subject", "ada-phone", "--predicate", "is",
                    "--object", "0170 555 0199", "--tier", "verified", "--confidence", "0.9",
                    "--anchor", "app.py:4-5")
    record_id = written["record"]["id"]
    base = committed(code, "memory about deploys")
    _json(code, "forget", record_id, "--reason", REASON)
    edit(code, "return 'monday'", "return 'friday'")
    committed(code, "fridays, and forget the phone number")

    [listed] = _json(code, "anchors")["items"]
    assert (listed["id"], listed["kind"], listed["status"]) == (record_id, "intake", "drifted")
    assert listed["subject"] == listed["predicate"] == listed["object"] == listed["title"] == FORGOTTEN
    [anchor] = listed["anchors"]
    assert anchor["old_lines"] == [FORGOTTEN]  # what it knew of the code: hidden
    assert anchor["new_lines"] == ["def deploy_day():", "    return 'friday'"]  # the code now: shown
    [changed] = _json(code, "anchors", "check", f"{base}..HEAD", expect=1)["files"]
    assert changed["records"] == [listed]
    as_text = _text(code, "anchors") + _text(code, "anchors", "check", f"{base}..HEAD", expect=1)
    review = _text(code / MEMORY, "review", f"{base}..HEAD")
    blamed = _json(code, "blame", record_id)
    assert blamed["intake"]["record"]["content"] == FORGOTTEN
    for shown in (as_text, review, json.dumps(blamed), _text(code, "blame", record_id)):
        assert "555 0199" not in shown and "Ada" not in shown and "'monday'" not in shown
        assert FORGOTTEN in shown
    assert "return 'friday'" in as_text
    assert _json(code, "anchors", "--subject", "ada-phone")["items"] == []  # its subject is gone with it

    async def over_mcp() -> None:
        async with server("--store", str(code / MEMORY)) as client:
            found = [await tool_ok(client, "anchors"), await tool_ok(client, "anchors_check", range=f"{base}..HEAD"),
                     await tool_ok(client, "blame", id=record_id)]
            assert "555 0199" not in json.dumps(found) and "'monday'" not in json.dumps(found)
            assert found[0]["items"] == [listed] and found[1]["files"][0]["records"] == [listed]

    run(over_mcp)


def test_a_forgotten_fact_is_forgotten_in_blame(code: Path) -> None:
    captured = _json(code, "capture", "--subject", "ada-phone", "--predicate", "is", "--object", "0170 555 0199",
                     "--anchor", "app.py:4-5")
    fact_id = captured[0]["id"]
    committed(code, "a phone number")
    _json(code, "forget", fact_id, "--reason", REASON)
    committed(code, "forget it")
    blamed = _json(code, "blame", fact_id)
    assert blamed["fact"]["record"]["id"] == fact_id and blamed["fact"]["record"]["object"] == FORGOTTEN
    text = _text(code, "blame", fact_id)
    assert "555 0199" not in json.dumps(blamed) + text and FORGOTTEN in text


def test_a_credential_in_a_drifted_anchors_code_lines_is_redacted(code: Path) -> None:
    fact_id = _json(code, "capture", "--subject", "deploys", "--predicate", "decided", "--object", "monday",
                    "--anchor", "app.py:4-5")[0]["id"]
    base = committed(code, "memory about deploys")
    edit(code, "return 'monday'", f"return '{AWS_ID}'")
    committed(code, "a key in the code")

    [listed] = _json(code, "anchors")["items"]
    assert listed["id"] == fact_id and listed["anchors"][0]["new_lines"] == ["def deploy_day():", REDACTED]
    [changed] = _json(code, "anchors", "check", f"{base}..HEAD", expect=1)["files"]
    assert changed["records"] == [listed]
    for text in (_text(code, "anchors"), _text(code, "anchors", "check", f"{base}..HEAD", expect=1),
                 _text(code / MEMORY, "review", f"{base}..HEAD")):
        assert AWS_ID not in text and REDACTED in text and "return 'monday'" in text  # the old lines: no key
    piped = memstack("anchors", "--reveal", cwd=code)  # --reveal: a person at a terminal only
    assert piped.returncode == 2 and "person at a terminal" in piped.stderr and AWS_ID not in piped.stdout

    async def over_mcp() -> None:
        async with server("--store", str(code / MEMORY)) as client:
            found = [await tool_ok(client, "anchors"), await tool_ok(client, "anchors_check", range=f"{base}..HEAD")]
            assert AWS_ID not in json.dumps(found) and REDACTED in json.dumps(found)

    run(over_mcp)
