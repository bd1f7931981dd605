"""`memstack anchors` against real code repositories and real commits: every status (fresh, shifted, moved
by a rename or to another file, drifted, orphaned by a delete, a binary file or a symbolic link), `--rev`,
records through promotion, the filters, the cache and the MCP tool."""

import json
import os
from pathlib import Path

from anchors_support import edit

from check_support import committed
from helpers import git, memstack
from mcp_support import ok, run, server

MEMORY = ".memory"


def _anchor(code: Path, *anchors: str, subject: str = "deploys") -> str:
    """A committed fact anchored to `anchors`; its id."""
    result = memstack("capture", "--subject", subject, "--predicate", "decided", "--object", "monday", "--json",
                      *(arg for anchor in anchors for arg in ("--anchor", anchor)), cwd=code)
    assert result.returncode == 0, result.stderr
    committed(code, "memory")
    return json.loads(result.stdout)[0]["id"]


def _items(code: Path, *args: str) -> list[dict]:
    result = memstack("anchors", "--json", *args, cwd=code)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)["items"]


def _only(code: Path, *args: str) -> dict:
    [item] = _items(code, *args)
    [anchor] = item["anchors"]
    assert item["status"] == anchor["status"]
    return anchor


def test_unchanged_lines_are_fresh_in_place(code: Path) -> None:
    _anchor(code, "app.py:4-5")
    edit(code, "lib/util.py", "42", "43")
    committed(code, "elsewhere")
    anchor = _only(code)
    assert anchor["status"] == "fresh" and anchor["now"] == {"path": "app.py", "start": 4, "end": 5}


def test_an_edit_above_shifts_the_lines_and_they_are_followed(code: Path) -> None:
    _anchor(code, "app.py:4-5")
    edit(code, "app.py", "import os\n", "import os\nimport sys\n\n# deploys\n")
    committed(code, "imports")
    anchor = _only(code)
    assert anchor["status"] == "fresh" and anchor["now"] == {"path": "app.py", "start": 7, "end": 8}
    edit(code, "app.py", "    return 'monday'", "\treturn  'monday'")  # whitespace only, not committed
    assert _only(code)["now"] == {"path": "app.py", "start": 7, "end": 8}


def test_an_edit_inside_the_range_drifts_showing_old_and_new_lines(code: Path) -> None:
    fact = _anchor(code, "app.py:4-5")
    edit(code, "app.py", "import os\n", "import os\nimport sys\n")
    edit(code, "app.py", "return 'monday'", "return 'friday'")
    committed(code, "deploy on fridays")
    [item] = _items(code)
    assert (item["id"], item["kind"], item["status"], item["subject"]) == (fact, "fact", "drifted", "deploys")
    [anchor] = item["anchors"]
    assert anchor["now"] == {"path": "app.py", "start": 5, "end": 6}
    assert anchor["old_lines"] == ["def deploy_day():", "    return 'monday'"]
    assert anchor["new_lines"] == ["def deploy_day():", "    return 'friday'"]
    text = memstack("anchors", cwd=code).stdout
    assert "drifted  app.py:4-5 -> app.py:5-6" in text and "- " in text and "+     return 'friday'" in text


def test_a_renamed_file_is_moved_with_its_new_place(code: Path) -> None:
    _anchor(code, "app.py:8-9")
    (code / "src").mkdir()
    git(code, "mv", "app.py", "src/app.py")
    committed(code, "move the app")
    anchor = _only(code)
    assert anchor["status"] == "moved" and anchor["now"] == {"path": "src/app.py", "start": 8, "end": 9}
    edit(code, "src/app.py", "'eu'", "'us'")  # git still pairs the rename: the lines drifted in the new file
    committed(code, "regions")
    anchor = _only(code)
    assert anchor["status"] == "drifted" and anchor["now"] == {"path": "src/app.py", "start": 8, "end": 9}
    assert anchor["old_lines"][1:] == ["    return 'eu'"] and anchor["new_lines"][1:] == ["    return 'us'"]


def test_lines_moved_to_another_file_are_moved_there(code: Path) -> None:
    _anchor(code, "app.py:8-9")
    edit(code, "app.py", "\n\ndef region():\n    return 'eu'\n", "\nfrom lib.regions import region\n")
    (code / "lib" / "regions.py").write_text("# where we run\n\ndef region():\n    return 'eu'\n")
    committed(code, "regions in their own module")
    anchor = _only(code)
    assert anchor["status"] == "moved" and anchor["now"] == {"path": "lib/regions.py", "start": 3, "end": 4}


def test_a_deleted_file_or_deleted_lines_are_orphaned(code: Path) -> None:
    _anchor(code, "lib/util.py")
    _anchor(code, "app.py:8-9", subject="regions")
    git(code, "rm", "-q", "lib/util.py")
    edit(code, "app.py", "\n\ndef region():\n    return 'eu'\n", "\n")
    committed(code, "no more helpers, no regions")
    util = _only(code, "--subject", "deploys")
    assert (util["status"], util["now"], util["reason"]) == ("orphaned", None, "deleted")
    lines = _only(code, "--subject", "regions")
    assert (lines["status"], lines["reason"]) == ("orphaned", "lines deleted")


def test_a_file_made_binary_or_replaced_by_a_symlink_is_orphaned(code: Path) -> None:
    _anchor(code, "app.py:4-5")
    _anchor(code, "lib/util.py:1-2", subject="helpers")
    (code / "app.py").write_bytes(b"\x7fELF\x00\x01\x02 compiled")
    (code / "lib" / "util.py").unlink()
    os.symlink("../app.py", code / "lib" / "util.py")
    committed(code, "compiled, linked")
    assert (_only(code, "--subject", "deploys")["status"], _only(code, "--subject", "deploys")["reason"]) \
        == ("orphaned", "a binary file now")
    assert _only(code, "--subject", "helpers")["reason"] == "a symbolic link now"


def test_a_file_in_the_store_folder_is_followed_in_the_work_tree_like_any_other(code: Path) -> None:
    (code / MEMORY / "runbook.md").write_text("# deploys\nrestart the web tier first\nthen the workers\n")
    committed(code, "runbook")
    _anchor(code, f"{MEMORY}/runbook.md:2-3")
    _anchor(code, "app.py:4-5", subject="days")
    assert _only(code, "--subject", "deploys")["status"] == "fresh"
    edit(code, f"{MEMORY}/runbook.md", "web tier", "db tier")  # same size: only the bytes tell, not committed
    drifted = _only(code, "--subject", "deploys")
    assert (drifted["status"], drifted["new_lines"][0]) == ("drifted", "restart the db tier first"), drifted
    assert _only(code, "--subject", "days")["status"] == "fresh"


def test_rev_answers_against_a_revision_and_the_work_tree_by_default(code: Path) -> None:
    _anchor(code, "app.py:4-5")
    edit(code, "app.py", "return 'monday'", "return 'sunday'")
    assert _only(code)["status"] == "drifted"  # the work tree, not yet committed
    assert _only(code, "--rev", "HEAD")["status"] == "fresh"
    committed(code, "sundays")
    assert _only(code, "--rev", "HEAD")["status"] == "drifted"
    assert _only(code, "--rev", "HEAD~1")["status"] == "fresh"
    bad = memstack("anchors", "--rev", "no-such-branch", cwd=code)
    assert bad.returncode == 2 and "no-such-branch" in bad.stderr and len(bad.stderr.strip().splitlines()) == 1


def test_pending_intake_then_its_fact_after_promotion_closed_facts_left_out(code: Path) -> None:
    written = memstack("intake", "write", "--content", "deploys on monday", "--tier", "verified", "--confidence",
                       "0.9", "--subject", "deploys", "--predicate", "decided", "--object", "monday",
                       "--anchor", "app.py:4-5", "--json", cwd=code)
    record = json.loads(written.stdout)["record"]
    committed(code, "memory")
    edit(code, "app.py", "import os\n", "import os\nimport re\n")
    [pending] = _items(code)
    assert (pending["kind"], pending["id"], pending["status"]) == ("intake", record["id"], "fresh")
    assert pending["anchors"][0]["now"]["start"] == 5
    assert memstack("promote", cwd=code).returncode == 0
    [promoted] = _items(code)
    assert promoted["kind"] == "fact" and promoted["anchors"] == pending["anchors"]
    closing = memstack("capture", "--subject", "deploys", "--predicate", "decided", "--object", "friday",
                       "--contradicts", cwd=code)
    assert closing.returncode == 0, closing.stderr
    assert _items(code) == []
    assert "no anchored memory" in memstack("anchors", cwd=code).stdout


def test_status_and_subject_filter_and_pages(code: Path) -> None:
    _anchor(code, "app.py:4-5")
    _anchor(code, "app.py:8-9", subject="regions")
    edit(code, "app.py", "'eu'", "'us'")
    assert [i["subject"] for i in _items(code, "--status", "drifted")] == ["regions"]
    assert [i["subject"] for i in _items(code, "--status", "fresh")] == ["deploys"]
    assert _items(code, "--status", "orphaned") == []
    first = json.loads(memstack("anchors", "--json", "--limit", "1", cwd=code).stdout)
    second = json.loads(memstack("anchors", "--json", "--limit", "1", "--cursor", first["next_cursor"],
                                 cwd=code).stdout)
    assert first["remaining"] == 1 and second["next_cursor"] is None
    assert {first["items"][0]["subject"], second["items"][0]["subject"]} == {"deploys", "regions"}
    bad = memstack("anchors", "--status", "stale", cwd=code)
    assert bad.returncode == 2 and "--status 'stale'" in bad.stderr


def test_a_changed_file_is_followed_once_then_answered_from_the_cache(code: Path) -> None:
    _anchor(code, "app.py:4-5")
    edit(code, "app.py", "import os\n", "import os\nimport sys\n")
    assert _only(code)["now"]["start"] == 5
    cache = code / MEMORY / ".memstack" / "anchors" / "followed.json"
    [(key, start)] = json.loads(cache.read_text()).items()
    assert start == 5 and key.endswith(git(code, "hash-object", "app.py").stdout.strip())
    cache.write_text(json.dumps({key: 2}))  # what the cache says is what is answered: app.py is not read again
    assert _only(code)["now"] == {"path": "app.py", "start": 2, "end": 3}
    git(code, "status", "--porcelain")
    assert git(code, "status", "--porcelain", "--", MEMORY).stdout == ""  # the cache is never committed


def test_the_mcp_anchors_tool(code: Path) -> None:
    _anchor(code, "app.py:4-5")
    edit(code, "app.py", "return 'monday'", "return 'friday'")

    async def check() -> None:
        async with server(cwd=code / MEMORY) as client:
            page = await ok(client, "anchors", status="drifted")
        [item] = page["items"]
        assert item["anchors"][0]["new_lines"] == ["def deploy_day():", "    return 'friday'"]

    run(check)


def test_status_counts_the_records_of_each_status(code: Path) -> None:
    def counts() -> dict:
        result = memstack("status", "--json", cwd=code)
        assert result.returncode == 0, result.stderr
        return json.loads(result.stdout)["anchors"]

    assert counts() == {"fresh": 0, "moved": 0, "drifted": 0, "orphaned": 0}
    _anchor(code, "app.py:4-5")
    _anchor(code, "app.py:8-9", subject="regions")
    _anchor(code, "lib/util.py", subject="helpers")
    edit(code, "app.py", "'eu'", "'us'")
    (code / "lib" / "util.py").unlink()
    assert counts() == {"fresh": 1, "moved": 0, "drifted": 1, "orphaned": 1}
    assert "code anchors: 1 fresh, 0 moved, 1 drifted, 1 orphaned (`memstack anchors --status drifted` and" \
           " `memstack anchors --status orphaned` show them)" in memstack("status", cwd=code).stdout
    edit(code, "app.py", "'us'", "'eu'")  # drifted back to where it was: only the orphaned one is named
    assert "0 drifted, 1 orphaned (`memstack anchors --status orphaned` shows them)" in \
           memstack("status", cwd=code).stdout


def test_reverify_records_a_recheck_and_the_fact_is_fresh_at_the_new_lines(code: Path) -> None:
    fact = _anchor(code, "app.py:4-5")
    facts_before = {p: p.read_bytes() for p in (code / MEMORY / "kb" / "facts").rglob("*.jsonl")}
    edit(code, "app.py", "import os\n", "import os\nimport sys\n")
    edit(code, "app.py", "def deploy_day():", "def deploy_day() -> str:")
    committed(code, "typed")
    assert _only(code)["status"] == "drifted"
    result = memstack("anchors", "reverify", fact, "--by", "ada", "--note", "still monday", "--json", cwd=code)
    assert result.returncode == 0, result.stderr
    entry = json.loads(result.stdout)
    assert (entry["kind"], entry["reverified"], entry["by"], entry["note"]) == ("reverify", fact, "ada", "still monday")
    head = git(code, "rev-parse", "HEAD").stdout.strip()
    assert entry["anchors"][0]["start"] == 5 and entry["anchors"][0]["commit"] == head
    [item] = _items(code)
    assert item["status"] == "fresh" and item["reverified"]["by"] == "ada"
    shown = memstack("anchors", cwd=code).stdout  # the text says it too
    assert f"fresh    fact {fact}" in shown and "\n  reverified by ada at 20" in shown, shown
    assert item["anchors"][0]["now"] == {"path": "app.py", "start": 5, "end": 6}
    binder = (code / MEMORY / "kb" / "binder.jsonl").read_text().splitlines()
    assert json.loads(binder[-1]) == entry
    committed(code, "reverified")  # through the hooks: the Binder log only grew, the fact never changed
    assert {p: p.read_bytes() for p in (code / MEMORY / "kb" / "facts").rglob("*.jsonl")} == facts_before
    reviewed = memstack("review", "HEAD~1..HEAD", cwd=code / MEMORY)  # the pull request shows the re-check
    assert reviewed.returncode == 0, reviewed.stderr
    assert f"### Re-verified against the code (1)\n\n- fact `{fact}` at `app.py` — by ada at " in reviewed.stdout
    assert "— still monday" in reviewed.stdout
    edit(code, "app.py", "'monday'", "'friday'")
    assert _only(code)["old_lines"] == ["def deploy_day() -> str:", "    return 'monday'"]


def test_reverify_refuses_an_orphaned_anchor_and_an_unknown_fact(code: Path) -> None:
    fact = _anchor(code, "lib/util.py:1-2")
    (code / "lib" / "util.py").unlink()
    binder = code / MEMORY / "kb" / "binder.jsonl"
    before = binder.read_bytes() if binder.exists() else None
    for args, said in ((("anchors", "reverify", fact, "--by", "ada"), "orphaned (deleted)"),
                       (("anchors", "reverify", "0123456789abcdef", "--by", "ada"), "no open fact with code anchors"),
                       (("anchors", "reverify", fact, "--by", " "), "--by")):
        result = memstack(*args, cwd=code)
        assert result.returncode == 2 and said in result.stderr and len(result.stderr.strip().splitlines()) == 1
    assert (binder.read_bytes() if binder.exists() else None) == before
