"""`memstack anchors check A..B` over real ranges of real commits: the records a code change makes stale, per
changed file (an edit inside the anchored lines, a rename, a delete), nothing when the change touches no
anchored lines (exit 0), the store as B holds it, and a bad range (exit 2)."""

import json
from pathlib import Path

from anchors_support import capture, edit

from check_support import committed
from helpers import git, memstack
from mcp_support import ok as tool_ok
from mcp_support import refused, run, server

MEMORY = ".memory"


def _check(code: Path, spec: str, expect: int) -> dict:
    result = memstack("anchors", "check", spec, "--json", cwd=code)
    assert result.returncode == expect, (result.returncode, result.stderr)
    return json.loads(result.stdout)


def test_a_change_lists_the_records_it_makes_stale_per_file_and_exits_1(code: Path) -> None:
    day = capture(code, "deploys", "monday", "app.py:4-5")
    region = capture(code, "regions", "monday", "app.py:8-9")
    helper = capture(code, "helpers", "monday", "lib/util.py")
    kept = capture(code, "imports", "monday", "app.py:1")
    base = committed(code, "memory about the code")
    edit(code, "app.py", "return 'monday'", "return 'friday'")
    edit(code, "app.py", "\n\ndef region():\n    return 'eu'\n", "\n")
    git(code, "rm", "-q", "lib/util.py")
    (code / "README").write_text("docs\n")
    tip = committed(code, "fridays, no regions, no helpers")
    found = _check(code, f"{base}..HEAD", 1)
    assert (found["base"], found["tip"], found["changed_files"], found["anchored_files"], found["stale"]) \
        == (base, tip, 3, 2, 3)
    assert [(f["path"], f["change"]) for f in found["files"]] == [("app.py", "modified"), ("lib/util.py", "deleted")]
    app, util = found["files"]
    assert [(r["id"], r["status"]) for r in app["records"]] == [(day, "drifted"), (region, "orphaned")]
    assert kept not in {r["id"] for f in found["files"] for r in f["records"]}  # app.py:1 is unchanged: fresh
    [drifted] = app["records"][0]["anchors"]
    assert drifted["old_lines"] == ["def deploy_day():", "    return 'monday'"]
    assert drifted["new_lines"] == ["def deploy_day():", "    return 'friday'"]
    [(record, anchor)] = [(r, a) for r in util["records"] for a in r["anchors"]]
    assert (record["id"], anchor["status"], anchor["reason"]) == (helper, "orphaned", "deleted")
    text = memstack("anchors", "check", f"{base}..HEAD", cwd=code)
    assert text.returncode == 1
    assert "app.py (modified): 2 records made stale" in text.stdout
    assert "+     return 'friday'" in text.stdout and "lib/util.py (deleted): 1 record made stale" in text.stdout
    assert text.stdout.rstrip().endswith("3 records made stale by " + f"{base}..HEAD (3 changed files, 2 of them"
                                         " anchored)")


def test_a_renamed_file_shows_where_its_lines_went(code: Path) -> None:
    fact = capture(code, "regions", "monday", "app.py:8-9")
    base = committed(code, "memory")
    (code / "src").mkdir()
    git(code, "mv", "app.py", "src/app.py")
    committed(code, "move the app")
    [changed] = _check(code, f"{base}..HEAD", 1)["files"]
    assert (changed["path"], changed["change"], changed["to"]) == ("app.py", "renamed", "src/app.py")
    [record] = changed["records"]
    assert (record["id"], record["status"]) == (fact, "moved")
    assert record["anchors"][0]["now"] == {"path": "src/app.py", "start": 8, "end": 9}


def test_a_change_that_touches_no_anchored_lines_exits_0(code: Path) -> None:
    capture(code, "deploys", "monday", "app.py:4-5")
    capture(code, "helpers", "monday", "lib/util.py:1-2")
    base = committed(code, "memory")
    edit(code, "app.py", "import os\n", "import os\nimport sys\n\n")  # shifts the lines: still fresh
    (code / "NOTES").write_text("unrelated\n")
    capture(code, "notes", "kept")  # memory in the same commit: the store's files are not code
    committed(code, "imports")
    found = _check(code, f"{base}..HEAD", 0)
    assert (found["stale"], found["files"], found["anchored_files"], found["changed_files"]) == (0, [], 1, 2)
    text = memstack("anchors", "check", f"{base}..HEAD", cwd=code)
    assert text.returncode == 0 and "nothing made stale" in text.stdout


def test_only_the_change_counts_not_what_was_stale_before_it(code: Path) -> None:
    capture(code, "helpers", "monday", "lib/util.py:1-2")
    committed(code, "memory")
    edit(code, "lib/util.py", "42", "43")
    base = committed(code, "helpers answer 43")  # the helper fact is stale from here on
    edit(code, "app.py", "'eu'", "'us'")
    committed(code, "regions")
    assert _check(code, f"{base}..HEAD", 0)["stale"] == 0  # ...but this range did not touch lib/util.py
    assert _check(code, f"{base}~1..HEAD", 1)["files"][0]["path"] == "lib/util.py"


def test_the_records_are_those_of_the_store_at_b_whatever_is_checked_out(code: Path) -> None:
    base = git(code, "rev-parse", "HEAD").stdout.strip()
    git(code, "checkout", "-q", "-b", "feature")
    fact = capture(code, "deploys", "monday", "app.py:4-5")
    committed(code, "memory on the branch")
    intake = memstack("intake", "write", "--content", "regions are eu", "--tier", "verified", "--confidence", "0.9",
                      "--anchor", "app.py:8-9", "--json", cwd=code)
    assert intake.returncode == 0, intake.stderr
    pending = json.loads(intake.stdout)["record"]["id"]
    committed(code, "pending memory on the branch")
    edit(code, "app.py", "return 'monday'", "return 'friday'")
    edit(code, "app.py", "'eu'", "'us'")
    committed(code, "the code moves on")
    git(code, "checkout", "-q", "main")  # main's store has none of these records
    found = _check(code, f"{base}..feature", 1)
    [app] = found["files"]
    assert [(r["kind"], r["id"]) for r in app["records"]] == [("fact", fact), ("intake", pending)]
    assert _check(code, f"{base}..feature~1", 0)["stale"] == 0


def test_a_bad_range_exits_2_with_one_line_and_writes_nothing(code: Path) -> None:
    capture(code, "deploys", "monday", "app.py:4-5")
    committed(code, "memory")
    before = git(code, "status", "--porcelain", "--ignored").stdout
    for spec, says in (("HEAD", "expected A..B"), ("no-such..HEAD", "no commit 'no-such'"),
                       ("HEAD..", "expected A..B"), ("HEAD...HEAD~1", "expected A..B")):
        result = memstack("anchors", "check", spec, cwd=code)
        assert result.returncode == 2, (spec, result.stdout)
        [line] = result.stderr.strip().splitlines()
        assert line.startswith(f"memstack: bad range '{spec}': ") and says in line, line
        assert result.stdout == ""
    assert git(code, "status", "--porcelain", "--ignored").stdout == before


def test_review_shows_the_code_anchors_the_range_made_stale(code: Path) -> None:
    day = capture(code, "deploys", "monday", "app.py:4-5")
    base = committed(code, "memory")
    git(code, "mv", "lib/util.py", "lib/helpers.py")
    edit(code, "app.py", "return 'monday'", "return 'friday'")
    committed(code, "fridays")
    markdown = memstack("review", f"{base}..HEAD", cwd=code / MEMORY)
    assert markdown.returncode == 0, markdown.stderr
    assert "### Code anchors made stale (1 record in 1 file)" in markdown.stdout
    assert "#### `app.py` (modified)" in markdown.stdout
    assert f"- drifted fact `{day}` alice: deploys decided monday" in markdown.stdout
    assert "  - drifted `app.py:4-5` → `app.py:4-5`" in markdown.stdout
    assert "    -     return 'monday'\n    +     return 'friday'" in markdown.stdout.replace(
        "    + def deploy_day():\n", "")
    as_json = json.loads(memstack("review", f"{base}..HEAD", "--format", "json", cwd=code / MEMORY).stdout)
    assert (as_json["counts"]["code_anchors_stale"], as_json["counts"]["code_anchors_stale_records"]) == (1, 1)
    [changed] = as_json["code_anchors_stale"]
    assert changed == _check(code, f"{base}..HEAD", 1)["files"][0]
    quiet = json.loads(memstack("review", f"{base}~1..{base}", "--format", "json", cwd=code / MEMORY).stdout)
    assert quiet["code_anchors_stale"] == [] and quiet["counts"]["code_anchors_stale"] == 0  # memory only
    assert "Code anchors" not in memstack("review", f"{base}~1..{base}", cwd=code / MEMORY).stdout


def test_a_fact_rechecked_in_the_same_range_is_not_stale(code: Path) -> None:
    fact = capture(code, "deploys", "monday", "app.py:4-5")
    base = committed(code, "memory")
    edit(code, "app.py", "def deploy_day():", "def deploy_day() -> str:")
    committed(code, "types")
    assert [r["id"] for r in _check(code, f"{base}..HEAD", 1)["files"][0]["records"]] == [fact]
    rechecked = memstack("anchors", "reverify", fact, "--by", "ada", "--note", "a type only", cwd=code)
    assert rechecked.returncode == 0, rechecked.stderr
    committed(code, "still mondays")
    found = _check(code, f"{base}..HEAD", 0)
    assert (found["stale"], found["anchored_files"]) == (0, 1)


def test_the_files_come_a_page_at_a_time_on_the_command_line_and_over_mcp(code: Path) -> None:
    capture(code, "deploys", "monday", "app.py:4-5")
    capture(code, "helpers", "monday", "lib/util.py")
    base = committed(code, "memory")
    edit(code, "app.py", "return 'monday'", "return 'friday'")
    git(code, "rm", "-q", "lib/util.py")
    committed(code, "fridays, no helpers")
    whole = _check(code, f"{base}..HEAD", 1)
    assert (whole["stale"], whole["next_cursor"], whole["remaining"]) == (2, None, 0)
    first = json.loads(memstack("anchors", "check", f"{base}..HEAD", "--json", "--limit", "1", cwd=code).stdout)
    assert (first["stale"], first["remaining"], [f["path"] for f in first["files"]]) == (2, 1, ["app.py"])
    second = memstack("anchors", "check", f"{base}..HEAD", "--limit", "1", "--cursor", first["next_cursor"], cwd=code)
    assert second.returncode == 1 and "lib/util.py (deleted)" in second.stdout and "app.py" not in second.stdout
    bad = memstack("anchors", "check", f"{base}..HEAD", "--cursor", "nope", cwd=code)
    assert bad.returncode == 2 and "bad cursor 'nope'" in bad.stderr

    async def over_mcp() -> None:
        async with server("--store", str(code / MEMORY)) as client:
            page = await tool_ok(client, "anchors_check", range=f"{base}..HEAD", limit=1)
            assert page == first
            rest = await tool_ok(client, "anchors_check", range=f"{base}..HEAD", cursor=page["next_cursor"])
            assert rest == {**whole, "files": whole["files"][1:]}
            assert "bad range 'HEAD'" in await refused(client, "anchors_check", range="HEAD")

    run(over_mcp)
