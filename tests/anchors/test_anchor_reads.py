"""The status of code anchors where memory is read: `recall`, `search`, `fact get-valid-at` (also `--as-of` and
the whole answer streamed), `fact history` and their MCP tools, against a real code repository and real
commits; only the returned records' anchors are followed; a store with no code repository reads as before."""

import json
from pathlib import Path

from anchors_support import capture, edit

from check_support import committed
from helpers import HANDOFF, git, memstack
from mcp_support import ok, run, server
from memstack.base.pages import MCP_MAX_BYTES

MEMORY = ".memory"


def _json(code: Path, *args: str) -> dict:
    result = memstack(*args, "--json", cwd=code)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


def _by_id(items: list[dict]) -> dict[str, dict]:
    return {item["id"]: item for item in items}


def test_recall_get_valid_at_and_history_carry_the_status_and_a_marker(code: Path) -> None:
    drifting = capture(code, "deploys", "monday", "app.py:4-5")
    plain = capture(code, "deploys", "weekly")  # no anchors: no status, no marker
    committed(code, "memory")
    edit(code, "app.py", "import os\n", "import os\nimport sys\n")  # shifts the lines: still fresh
    [fresh] = [f for f in _json(code, "recall", "--subject", "deploys")["items"] if f["id"] == drifting]
    assert fresh["code_status"] == {"status": "fresh", "anchors": [
        {"status": "fresh", "now": {"path": "app.py", "start": 5, "end": 6}}]}
    edit(code, "app.py", "return 'monday'", "return 'friday'")
    committed(code, "deploy on fridays")
    for args in (("recall", "--subject", "deploys"), ("fact", "get-valid-at", "--ts", "now", "--subject", "deploys"),
                 ("fact", "get-valid-at", "--ts", "now", "--as-of", "now"), ("fact", "get-valid-at", "--ts", "now"),
                 ("fact", "history", "--subject", "deploys")):
        items = _by_id(_json(code, *args)["items"])
        assert items[drifting]["code_status"] == {"status": "drifted", "anchors": [
            {"status": "drifted", "now": {"path": "app.py", "start": 5, "end": 6}}]}, args
        assert "code_status" not in items[plain], args
        lines = memstack(*args, cwd=code).stdout.splitlines()
        [marked] = [line for line in lines if line.startswith(drifting)]
        [unmarked] = [line for line in lines if line.startswith(plain)]
        assert marked.endswith("[code: drifted]") and "[code:" not in unmarked, args


def test_search_hits_of_facts_and_pending_intake_carry_the_status(code: Path) -> None:
    fact = capture(code, "regions", "eu", "app.py:8-9")
    written = memstack("intake", "write", "--content", "the helper answers fortytwo", "--anchor", "lib/util.py",
                       "--json", cwd=code)
    assert written.returncode == 0, written.stderr
    record = json.loads(written.stdout)["record"]["id"]
    committed(code, "memory")
    git(code, "rm", "-q", "lib/util.py")
    committed(code, "no helper")
    hits = _by_id(_json(code, "search", "eu")["hits"])
    assert hits[fact]["code_status"]["status"] == "fresh"
    [hit] = _json(code, "search", "fortytwo")["hits"]
    assert hit["id"] == record and hit["layer"] == "intake"
    assert hit["code_status"] == {"status": "orphaned", "anchors": [
        {"status": "orphaned", "now": None, "reason": "deleted"}]}
    text = memstack("search", "fortytwo", cwd=code).stdout
    assert text.splitlines()[0].endswith("[code: orphaned]")


def test_only_the_returned_records_anchors_are_followed(code: Path) -> None:
    capture(code, "deploys", "monday", "app.py:4-5")
    capture(code, "regions", "eu", "app.py:8-9")
    committed(code, "memory")
    edit(code, "app.py", "import os\n", "import os\nimport sys\n")  # both shift: each found, and cached
    cache = code / MEMORY / ".memstack" / "anchors" / "followed.json"
    assert _json(code, "recall", "--subject", "deploys")["items"][0]["code_status"]["status"] == "fresh"
    assert list(json.loads(cache.read_text()).values()) == [5]  # deploys' lines only, not regions'
    assert _json(code, "recall", "--subject", "regions")["items"][0]["code_status"]["status"] == "fresh"
    assert sorted(json.loads(cache.read_text()).values()) == [5, 9]  # the read added its own, kept the other


def test_the_mcp_read_tools_carry_the_compact_status(code: Path) -> None:
    fact = capture(code, "deploys", "monday", "app.py:4-5")
    committed(code, "memory")
    git(code, "mv", "app.py", "main.py")
    committed(code, "rename")
    moved = {"status": "moved", "anchors": [{"status": "moved", "now": {"path": "main.py", "start": 4, "end": 5}}]}

    async def check() -> None:
        async with server(cwd=code / MEMORY) as client:
            for tool, arguments in (("recall", {"subject": "deploys"}),
                                    ("fact_get_valid_at", {"ts": "now", "subject": "deploys"}),
                                    ("fact_history", {"subject": "deploys"})):
                [item] = (await ok(client, tool, **arguments))["items"]
                assert item["id"] == fact and item["code_status"] == moved, tool
            [hit] = (await ok(client, "search", query="monday"))["hits"]
            assert hit["code_status"] == moved

    run(check)


def test_a_standalone_store_without_a_code_repository_reads_without_status(code: Path, tmp_path: Path) -> None:
    store = tmp_path / "memory"
    made = memstack("init", str(store), "--agent", "alice", cwd=tmp_path)
    assert made.returncode == 0, made.stderr
    taken = memstack("capture", "--store", str(store), "--subject", "deploys", "--predicate", "decided",
                     "--object", "monday", "--anchor", "app.py:4-5", "--repo", str(code), cwd=code)
    assert taken.returncode == 0, taken.stderr
    for args in (("recall", "--subject", "deploys"), ("fact", "history", "--subject", "deploys"),
                 ("fact", "get-valid-at", "--ts", "now"), ("search", "monday")):
        result = memstack(*args, "--json", cwd=store)
        assert result.returncode == 0, result.stderr
        assert "code_status" not in result.stdout and "deploys" in result.stdout, args
        assert "[code:" not in memstack(*args, cwd=store).stdout
    config = store / "memstack.yaml"
    config.write_text(config.read_text() + f"\ncode:\n  repo: {code}\n")
    [found] = _json(store, "recall", "--subject", "deploys")["items"]
    assert found["code_status"]["status"] == "fresh"


def test_mcp_pages_of_anchored_facts_keep_within_the_byte_budget_with_their_status(code: Path) -> None:
    ranges = [f"app.py:{start}-{end}" for start in range(1, 10) for end in range(start, 10)]
    anchors = [*ranges, "lib/util.py:1", "lib/util.py:1-2", "lib/util.py"]  # 48, each with its status shown
    count = 24

    async def check() -> None:
        async with server(cwd=code / MEMORY) as client:
            for n in range(count):
                added = await client.call_tool("fact_add", {"subject": "big", "predicate": "decided",
                                                            "object": f"fact {n} " + "word " * 800,
                                                            "anchor": anchors})
                assert not added.is_error, added.content
            for tool, arguments in (("recall", {"subject": "big"}), ("fact_history", {"subject": "big"}),
                                    ("fact_get_valid_at", {"ts": "now"})):
                seen, cursor = [], None
                while True:
                    result = await client.call_tool(tool, {**arguments, "limit": 1_000,
                                                           **({"cursor": cursor} if cursor else {})})
                    [block] = result.content
                    assert len(block.text.encode()) <= MCP_MAX_BYTES, (tool, len(block.text.encode()))
                    page = json.loads(block.text)
                    assert all(item["code_status"]["status"] == "fresh" for item in page["items"])
                    seen += [item["id"] for item in page["items"]]
                    cursor = page["next_cursor"]
                    if cursor is None:
                        break
                assert len(set(seen)) == len(seen) == count, tool

    run(check)


def test_boot_show_lists_the_agents_facts_to_reverify_live(code: Path) -> None:
    drifting = capture(code, "deploys", "monday", "app.py:4-5")
    gone = capture(code, "helpers", "fortytwo", "lib/util.py:1-2")
    capture(code, "regions", "eu", "app.py:8-9")  # stays fresh: not listed
    written = memstack("handoff", "write", "--agent", "alice", input=HANDOFF, cwd=code)
    assert written.returncode == 0, written.stderr
    assert memstack("boot", "rebuild", cwd=code).returncode == 0
    committed(code, "memory")
    assert _json(code, "boot", "show")["to_reverify"] == []
    edit(code, "app.py", "return 'monday'", "return 'friday'")  # live: not committed
    (code / "lib" / "util.py").unlink()
    shown = _json(code, "boot", "show")
    assert [(f["id"], f["code_status"]["status"]) for f in shown["to_reverify"]] == [(gone, "orphaned"),
                                                                                      (drifting, "drifted")]
    text = memstack("boot", "show", cwd=code).stdout
    assert f"{drifting}  deploys decided monday  [code: drifted]" in text
    event = json.dumps({"session_id": "s-1", "cwd": str(code / MEMORY), "hook_event_name": "SessionStart",
                        "source": "startup"})
    started = memstack("hook", "session-start", input=event, cwd=code)  # the boot context a harness gives
    context = json.loads(started.stdout)["hookSpecificOutput"]["additionalContext"]
    assert "To re-verify" in context and f"- deploys decided monday [code: drifted] ({drifting})" in context
    assert f"[code: orphaned] ({gone})" in context and "regions" not in context.split("To re-verify")[1]

    async def check() -> None:
        async with server(cwd=code / MEMORY) as client:
            document = await ok(client, "boot_show")
        assert [f["id"] for f in document["to_reverify"]] == [gone, drifting]

    run(check)
    reverified = memstack("anchors", "reverify", drifting, "--by", "carol", cwd=code)
    assert reverified.returncode == 0, reverified.stderr
    assert [f["id"] for f in _json(code, "boot", "show")["to_reverify"]] == [gone]


def test_boot_show_of_a_standalone_store_without_code_repository_has_no_to_reverify(code: Path,
                                                                                     tmp_path: Path) -> None:
    store = tmp_path / "memory"
    assert memstack("init", str(store), "--agent", "alice", cwd=tmp_path).returncode == 0
    taken = memstack("capture", "--store", str(store), "--subject", "deploys", "--predicate", "decided",
                     "--object", "monday", "--anchor", "app.py:4-5", "--repo", str(code), cwd=code)
    assert taken.returncode == 0, taken.stderr
    (code / "app.py").unlink()  # orphaned, were it followed
    assert memstack("handoff", "write", "--agent", "alice", input=HANDOFF, cwd=store).returncode == 0
    assert memstack("boot", "rebuild", cwd=store).returncode == 0
    shown = _json(store, "boot", "show")
    assert shown["agent"] == "alice" and "to_reverify" not in shown
