"""Code anchors on what is written (`--anchor PATH[:START[-END]]` on intake write, capture, fact add and
nest, and the MCP tools that write): the fields a record keeps, the hooks that guard them, promotion that
carries them to the fact, and the code repository a standalone store names."""

import hashlib
import json
import re
from pathlib import Path

from helpers import git, memstack, tree_snapshot
from mcp_support import ok, refused, run, server

MEMORY = ".memory"
FACT = ("--subject", "deploys", "--predicate", "decided", "--object", "monday")


def _lines_sha256(*lines: str) -> str:
    return hashlib.sha256("\n".join(re.sub(r"\s+", " ", line).strip() for line in lines).encode()).hexdigest()


def _json(code: Path, *args: str, cwd: Path | None = None) -> object:
    result = memstack(*args, "--json", cwd=cwd or code)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


def test_capture_keeps_path_lines_commit_blob_and_hash(code: Path) -> None:
    head = git(code, "rev-parse", "HEAD").stdout.strip()
    [fact] = _json(code, "capture", *FACT, "--anchor", "app.py:4-5", "--anchor", "lib/util.py")
    assert fact["anchors"] == [
        {"path": "app.py", "start": 4, "end": 5, "commit": head,
         "blob": git(code, "rev-parse", "HEAD:app.py").stdout.strip(),
         "lines_sha256": _lines_sha256("def deploy_day():", "return 'monday'")},
        {"path": "lib/util.py", "start": None, "end": None, "commit": head,
         "blob": git(code, "rev-parse", "HEAD:lib/util.py").stdout.strip(),
         "lines_sha256": _lines_sha256("def helper():", "return 42")}]
    written = (code / MEMORY / "kb" / "facts" / "alice").glob("*.jsonl")
    assert [json.loads(line)["anchors"] for path in written for line in path.read_text().splitlines()] \
        == [fact["anchors"]]


def test_whitespace_does_not_change_the_hash_and_one_line_is_start_and_end(code: Path) -> None:
    [fact] = _json(code, "fact", "add", *FACT, "--anchor", "app.py:5")
    (code / "app.py").write_text((code / "app.py").read_text().replace("    return 'monday'", "\treturn   'monday'  "))
    [again] = _json(code, "fact", "add", "--subject", "s", "--predicate", "p", "--object", "o", "--anchor", "app.py:5")
    assert fact["anchors"][0]["start"] == fact["anchors"][0]["end"] == 5
    assert again["anchors"][0]["lines_sha256"] == fact["anchors"][0]["lines_sha256"]
    assert again["anchors"][0]["blob"] != fact["anchors"][0]["blob"]


def test_an_uncommitted_file_is_anchored_with_its_work_tree_blob(code: Path) -> None:
    """The blob is the content the lines were read from: the work tree's (what the next commit holds)."""
    (code / "app.py").write_text("# changed, not committed\n" + (code / "app.py").read_text())
    (code / "new.py").write_text("x = 1\n")
    document = _json(code, "intake", "write", "--content", "region is eu", "--anchor", "app.py:9-10",
                     "--anchor", "new.py")
    anchors = document["record"]["anchors"]
    assert [a["blob"] for a in anchors] == [git(code, "hash-object", p).stdout.strip() for p in ("app.py", "new.py")]
    assert anchors[0]["blob"] != git(code, "rev-parse", "HEAD:app.py").stdout.strip()
    assert anchors[0]["lines_sha256"] == _lines_sha256("def region():", "return 'eu'")


def test_a_path_is_taken_from_the_folder_the_command_runs_in(code: Path) -> None:
    [fact] = _json(code, "fact", "add", *FACT, "--anchor", "util.py:2", cwd=code / "lib")
    assert fact["anchors"][0]["path"] == "lib/util.py"
    [fact] = _json(code, "fact", "add", "--subject", "s", "--predicate", "p", "--object", "o",
                   "--anchor", str(code / "app.py"), cwd=code / "lib")
    assert fact["anchors"][0]["path"] == "app.py"


def test_nest_keeps_anchors(code: Path, tmp_path: Path) -> None:
    (tmp_path / "adr.md").write_text("# Deploys\n\nWe deploy on Mondays.\n")
    document = _json(code, "nest", str(tmp_path / "adr.md"), "--anchor", "app.py:4-5")
    assert document["record"]["anchors"][0]["path"] == "app.py"


def test_anchors_travel_through_promotion_and_pass_the_hooks(code: Path) -> None:
    _json(code, "intake", "write", "--content", "deploys on monday", "--tier", "verified", "--confidence", "0.9",
          *FACT, "--anchor", "app.py:4-5")
    git(code, "add", "-A")
    assert git(code, "commit", "-q", "-m", "memory", check=False).returncode == 0
    assert memstack("promote", cwd=code).returncode == 0
    [record] = _json(code, "intake", "list")["items"]
    [fact] = _json(code, "fact", "get-valid-at", "--ts", "now", "--subject", "deploys")["items"]
    assert fact["intake_id"] == record["id"] and fact["anchors"] == record["anchors"]
    assert memstack("check", "--range", "HEAD~2..HEAD", cwd=code).returncode == 0


def test_the_hooks_refuse_an_anchor_edited_by_hand(code: Path) -> None:
    _json(code, "capture", *FACT, "--anchor", "app.py:4-5")
    git(code, "add", "-A")
    assert git(code, "commit", "-q", "-m", "memory", check=False).returncode == 0
    [path] = (code / MEMORY / "kb" / "facts" / "alice").glob("*.jsonl")
    original = path.read_text()
    path.write_text(original.replace('"start":4', '"start":1'))
    assert path.read_text() != original
    git(code, "add", "-A")
    refused_edit = git(code, "commit", "-q", "-m", "move the anchor", check=False)
    assert refused_edit.returncode != 0 and "anchors" in refused_edit.stdout + refused_edit.stderr
    path.write_text(original.replace('"path":"app.py"', '"path":"../app.py"').replace('"start":4', '"start":1'))
    git(code, "add", "-A")
    assert git(code, "commit", "-q", "-m", "a bad path", check=False).returncode != 0


def test_a_closed_facts_anchors_never_change(code: Path) -> None:
    _json(code, "capture", *FACT, "--anchor", "app.py:4-5", "--valid-from", "2026-01-01T00:00:00Z")
    _json(code, "capture", "--subject", "deploys", "--predicate", "decided", "--object", "friday", "--contradicts",
          "--anchor", "app.py:4-5")
    git(code, "add", "-A")
    assert git(code, "commit", "-q", "-m", "memory", check=False).returncode == 0
    [path] = (code / MEMORY / "kb" / "facts" / "alice").glob("*.jsonl")
    first, second = path.read_text().splitlines()
    assert json.loads(first)["valid_to"] is not None
    path.write_text(first.replace('"end":5', '"end":9') + "\n" + second + "\n")
    git(code, "add", "-A")
    result = git(code, "commit", "-q", "-m", "edit a closed fact", check=False)
    assert result.returncode != 0 and "changed (anchors); a superseded fact never changes" in result.stderr


def test_a_standalone_store_names_its_code_repository(store: Path, code: Path) -> None:
    before = tree_snapshot(store)
    result = memstack("capture", *FACT, "--anchor", "app.py", cwd=store)
    assert result.returncode == 2 and "--repo" in result.stderr and "code.repo" in result.stderr
    assert tree_snapshot(store) == before
    [fact] = _json(store, "capture", *FACT, "--anchor", "app.py:4", "--repo", str(code))
    assert fact["anchors"][0]["commit"] == git(code, "rev-parse", "HEAD").stdout.strip()
    with (store / "memstack.yaml").open("a") as config:
        config.write(f"code:\n  repo: {code}\n")
    document = _json(store, "intake", "write", "--content", "x", "--anchor", "lib/util.py:1-2")
    assert document["record"]["anchors"][0]["path"] == "lib/util.py"


def test_bad_anchors_are_refused_naming_the_anchor_and_nothing_is_written(code: Path) -> None:
    (code / "link.py").symlink_to("app.py")
    (code / "blob.bin").write_bytes(b"\x00\x01\x02binary")
    (code.parent / "outside.py").write_text("x = 1\n")
    (code / MEMORY / ".memstack").mkdir(exist_ok=True)
    (code / MEMORY / ".memstack" / "cache.json").write_text("{}\n")  # clone-local: in no other clone
    cases = ["app.py:10", "app.py:5-99", "../outside.py", str(code.parent / "outside.py"), "missing.py",
             "link.py", "blob.bin", "lib", "lib/../app.py", "app.py:0", "app.py:5-4", ".git/HEAD",
             f"{MEMORY}/.memstack/cache.json"]
    before = tree_snapshot(code / MEMORY)
    for anchor in cases:
        for verb in (("capture", *FACT), ("intake", "write", "--content", "x")):
            result = memstack(*verb, "--anchor", "app.py:1", "--anchor", anchor, cwd=code)
            lines = result.stderr.strip().splitlines()
            assert result.returncode == 2 and len(lines) == 1, (anchor, result.stderr)
            assert repr(anchor) in lines[0], (anchor, lines)
    assert tree_snapshot(code / MEMORY) == before


def test_a_missing_file_is_named_by_the_path_looked_at(code: Path) -> None:
    """Run inside the store's folder, `--anchor app.py` is taken from there: the refusal names the file it
    looked for and says why, so the user sees to run from the top (or name the path from there)."""
    inside = memstack("capture", *FACT, "--anchor", "app.py:1", cwd=code / MEMORY)
    assert inside.returncode == 2
    assert f"no such file {MEMORY}/app.py in the code repository" in inside.stderr
    assert f"a relative path is taken from the folder you run in: {MEMORY})" in inside.stderr
    top = memstack("capture", *FACT, "--anchor", "nope.py", cwd=code)
    assert top.returncode == 2 and "no such file nope.py in the code repository" in top.stderr
    assert "a relative path is taken" not in top.stderr
    assert memstack("capture", *FACT, "--anchor", "app.py:1", cwd=code).returncode == 0


def test_the_mcp_tools_that_write_take_anchors(code: Path) -> None:
    async def check() -> None:
        async with server(cwd=code / MEMORY) as client:
            written = await ok(client, "intake_write", content="deploys on monday", anchor=["app.py:4-5"])
            [fact] = await ok(client, "capture", subject="deploys", predicate="decided", object="monday",
                              anchor=["lib/util.py"])
            [added] = await ok(client, "fact_add", subject="s", predicate="p", object="o", anchor=["app.py:9"])
            message = await refused(client, "fact_add", subject="s", predicate="p", object="o",
                                    anchor=["app.py:99"])
        assert written["record"]["anchors"][0]["start"] == 4
        assert fact["anchors"][0]["path"] == "lib/util.py" and added["anchors"][0]["end"] == 9
        assert "app.py:99" in message and "past the end" in message

    run(check)
