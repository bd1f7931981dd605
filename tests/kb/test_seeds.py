"""The seed layers completed: soil graduate, binder file / edge, related, distilled_at, status.

Everything through the installed `memstack` command and real `git commit`s through the hooks."""

import hashlib
import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft7Validator

from helpers import git, items, ledger_lines, memstack, tree_snapshot, view_entries, view_files
from memstack.base import schemas

T0 = "2026-11-01T10:00:00Z"
AWS_KEY = "AK" + "IA" + "Y34FZKBOKMUTVV7A"  # split, so this file holds no credential-shaped string


def ok(store: Path, *args: str, input: str | None = None) -> Any:
    result = memstack(*args, "--json", cwd=store, input=input)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


def bad(store: Path, *args: str) -> str:
    """A refused command: exit 2, one line on stderr, nothing written."""
    before = tree_snapshot(store)
    result = memstack(*args, cwd=store)
    assert result.returncode == 2, (args, result.stdout, result.stderr)
    line = result.stderr.strip()
    assert line.startswith("memstack: ") and "\n" not in line and "Traceback" not in line
    assert tree_snapshot(store) == before, args
    return line


def commit(store: Path, message: str) -> Any:
    git(store, "add", "-A")
    return git(store, "commit", "-q", "-m", message, check=False)


def binder_lines(store: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (store / "kb/binder.jsonl").read_text().splitlines()]


# ---- soil graduate --------------------------------------------------------------------------------

def test_graduate_writes_intake_from_the_soil_record_and_retires_it(store: Path) -> None:
    put = ok(store, "soil", "put", "session", "lexer", "--value", '{"plan": "hand-written", "step": 3}')
    doc = ok(store, "soil", "graduate", "session", "lexer", "--subject", "parser", "--predicate", "decided",
             "--object", "hand-written lexer", "--tier", "verified", "--confidence", "0.9")
    record, retired = doc["intake"]["record"], doc["soil"]
    assert record["content"] == '{"plan":"hand-written","step":3}'
    assert record["source"] == "soil:store/session/lexer.json" and record["tags"] == ["soil"]
    assert (record["subject"], record["predicate"], record["object"]) == ("parser", "decided", "hand-written lexer")
    assert (record["tier"], record["confidence"], record["agent"]) == ("verified", 0.9, "alice")
    lines = (store / doc["intake"]["path"]).read_text().splitlines()
    assert json.loads(lines[-1]) == record
    # retired, never deleted: expired now, marked with the intake id
    on_disk = json.loads((store / "store/session/lexer.json").read_text())
    assert on_disk == retired and on_disk["graduated_to"] == record["id"]
    assert on_disk["value"] == {"plan": "hand-written", "step": 3}
    # the intake record's time is when the store learnt the value (the version graduated), its id derived
    # from that version; the SOIL record is retired at the graduation
    assert record["created_at"] == put["updated_at"] <= on_disk["expires_at"] == on_disk["updated_at"]
    assert memstack("soil", "get", "session", "lexer", cwd=store).returncode == 2
    assert ok(store, "soil", "get", "session", "lexer", "--include-expired")["graduated_to"] == record["id"]
    assert "already graduated to intake record " + record["id"] in bad(store, "soil", "graduate", "session", "lexer")
    # the hooks accept the retired record and the new intake line; the promotion routes it to knowledge
    assert commit(store, "graduate").returncode == 0
    promoted = ok(store, "promote")
    assert promoted["routed"] == {"knowledge": 1}
    assert [f["object"] for f in items(ok(store, "fact", "history", "--subject", "parser"))] == ["hand-written lexer"]
    # put starts the key again, unmarked
    assert "graduated_to" not in ok(store, "soil", "put", "session", "lexer", "--value", '"again"')


def test_graduate_a_string_value_and_bad_input(store: Path) -> None:
    ok(store, "soil", "put", "notes", "n1", "--value", '"the build needs python 3.11"')
    for args, field in ((("--tier", "sure"), "tier"), (("--confidence", "2"), "confidence"),
                        (("--subject", "x"), "subject"), (("--agent", "A B"), "agent"),
                        (("--subject", "s", "--predicate", "p", "--object", AWS_KEY), "object")):
        assert f"bad {field}" in bad(store, "soil", "graduate", "notes", "n1", *args)
    assert "no record notes/missing" in bad(store, "soil", "graduate", "notes", "missing")
    assert "bad key" in bad(store, "soil", "graduate", "notes", "..")
    doc = ok(store, "soil", "graduate", "notes", "n1", "--agent", "bob")
    assert doc["intake"]["record"]["content"] == "the build needs python 3.11"
    assert doc["intake"]["path"].startswith("intake/bob/")


# ---- binder file / edge ---------------------------------------------------------------------------

def test_binder_file_keeps_the_document_by_its_content(store: Path) -> None:
    docs = store / "docs"  # a filed document comes from inside the store's repository
    docs.mkdir(exist_ok=True)
    doc = docs / "ADR-0004.md"
    doc.write_text("# ADR-0004\n\nEach pattern carries a distillation timestamp.\n")
    entry = ok(store, "binder", "file", str(doc), "--by", "Ada", "--note", "the architecture decision")
    digest = hashlib.sha256(doc.read_bytes()).hexdigest()
    assert entry == {"kind": "file", "path": f"kb/files/{digest}.md", "sha256": digest, "name": "ADR-0004.md",
                     "by": "Ada", "note": "the architecture decision", "decided_at": entry["decided_at"]}
    assert (store / entry["path"]).read_bytes() == doc.read_bytes()
    assert binder_lines(store) == [entry]
    assert "already filed as" in bad(store, "binder", "file", str(doc))
    binary = docs / "blob.bin"
    binary.write_bytes(b"\xff\xfe\x00binary")
    assert "not UTF-8 text" in bad(store, "binder", "file", str(binary))
    assert "no such file" in bad(store, "binder", "file", str(docs / "none.md"))
    (docs / "empty.md").write_text("")
    assert "empty" in bad(store, "binder", "file", str(docs / "empty.md"))
    assert "bad --by" in bad(store, "binder", "file", str(doc), "--by", " ")
    (docs / "key.md").write_text(f"export AWS_ACCESS_KEY_ID={AWS_KEY}\n")
    assert "PATH" in bad(store, "binder", "file", str(docs / "key.md"))
    assert commit(store, "file a document").returncode == 0


def test_binder_edge_is_appended_once(store: Path) -> None:
    entry = ok(store, "binder", "edge", "--from", "parser", "--to", "lexer", "--relation", "depends-on",
               "--by", "Ada", "--note", "tokens first")
    assert entry == {"kind": "edge", "from": "parser", "to": "lexer", "relation": "depends-on", "by": "Ada",
                     "note": "tokens first", "decided_at": entry["decided_at"]}
    assert binder_lines(store) == [entry]
    assert "already confirmed" in bad(store, "binder", "edge", "--from", "parser", "--to", "lexer",
                                      "--relation", "depends-on")
    assert "bad --to" in bad(store, "binder", "edge", "--from", "a", "--to", "a", "--relation", "is")
    assert "bad --relation" in bad(store, "binder", "edge", "--from", "a", "--to", "b", "--relation", " ")
    assert "bad --by" in bad(store, "binder", "edge", "--from", "a", "--to", "b", "--relation", "r", "--by", "")
    missing = memstack("binder", "edge", "--to", "b", "--relation", "r", cwd=store)
    assert missing.returncode == 2 and "--from" in missing.stderr


def test_the_hooks_keep_binder_entries_and_files_append_only(store: Path) -> None:
    docs = store / "docs"  # a filed document comes from inside the store's repository
    docs.mkdir(exist_ok=True)
    doc = docs / "notes.md"
    doc.write_text("confirmed: the lexer is hand-written\n")
    filed = ok(store, "binder", "file", str(doc), "--by", "Ada")
    ok(store, "binder", "edge", "--from", "parser", "--to", "lexer", "--relation", "depends-on", "--by", "Ada")
    assert commit(store, "confirmed by Ada").returncode == 0
    head = git(store, "rev-parse", "HEAD").stdout.strip()

    def refused(change: str, rule: str) -> None:
        result = commit(store, change)
        assert result.returncode != 0, change
        assert rule in result.stdout + result.stderr, result.stdout
        assert git(store, "rev-parse", "HEAD").stdout.strip() == head
        git(store, "reset", "-q", "--hard", "HEAD")
        git(store, "clean", "-qfd")

    log = store / "kb/binder.jsonl"
    log.write_text(log.read_text().replace("depends-on", "needs"))
    refused("edit an edge", "kb/binder.jsonl:2: I1")
    log.write_text(log.read_text().splitlines()[1] + "\n")
    refused("drop a filing", "kb/binder.jsonl:1: I1")
    with log.open("a") as handle:
        handle.write('{"kind":"edge","from":"a","to":"b","decided_at":1,"by":"x"}\n')
    refused("an edge without a relation", "kb/binder.jsonl:3: I5")
    (store / filed["path"]).write_text("edited\n")
    refused("edit a filed document", f"{filed['path']}: I1")
    (store / filed["path"]).unlink()
    refused("delete a filed document", f"{filed['path']}: I1")
    (store / "kb/files" / ("0" * 64 + ".md")).write_text("forged\n")
    refused("a document not named by its content", "I5 its content's SHA-256")
    # appending a new entry is fine
    ok(store, "binder", "edge", "--from", "lexer", "--to", "tokens", "--relation", "emits", "--by", "Ada")
    assert commit(store, "another edge").returncode == 0
    assert memstack("check", "--range", f"{head}~1..HEAD", cwd=store).returncode == 0


# ---- related --------------------------------------------------------------------------------------

def test_related_walks_edges_and_subject_facts_to_a_depth(store: Path) -> None:
    ok(store, "binder", "edge", "--from", "app", "--to", "parser", "--relation", "uses", "--by", "Ada")
    ok(store, "binder", "edge", "--from", "lexer", "--to", "parser", "--relation", "feeds", "--by", "Ada")
    fact = ok(store, "fact", "add", "--subject", "lexer", "--predicate", "written-in", "--object", "rust",
              "--valid-from", T0, "--recorded-at", T0)[0]
    ok(store, "fact", "add", "--subject", "rust", "--predicate", "version", "--object", "1.83",
       "--valid-from", T0, "--recorded-at", T0)
    ok(store, "fact", "add", "--subject", "lexer", "--predicate", "status", "--object", "done",  # not a subject
       "--valid-from", T0, "--recorded-at", T0)

    def walk(depth: int) -> list[tuple[int, str, str, str, str]]:
        doc = ok(store, "related", "app", "--depth", str(depth))
        assert doc["next_cursor"] is None and doc["depth"] == depth
        return [(i["depth"], i["kind"], i["from"], i["relation"], i["to"]) for i in doc["items"]]

    assert walk(1) == [(1, "edge", "app", "uses", "parser")]
    assert walk(2) == [(1, "edge", "app", "uses", "parser"), (2, "edge", "lexer", "feeds", "parser")]
    three = [(1, "edge", "app", "uses", "parser"), (2, "edge", "lexer", "feeds", "parser"),
             (3, "fact", "lexer", "written-in", "rust")]
    assert walk(3) == three and walk(5) == three  # nothing further: rust's facts name no subject
    items = ok(store, "related", "lexer")["items"]
    assert [(i["kind"], i["to"], i["id"]) for i in items] == [("edge", "parser", None), ("fact", "rust", fact["id"])]
    # paging: one at a time, nothing skipped, nothing twice
    first = ok(store, "related", "app", "--depth", "3", "--limit", "2")
    assert len(first["items"]) == 2 and first["remaining"] == 1
    rest = ok(store, "related", "app", "--depth", "3", "--limit", "2", "--cursor", first["next_cursor"])
    assert [i["to"] for i in first["items"] + rest["items"]] == ["parser", "parser", "rust"]
    assert rest["next_cursor"] is None
    for args in (("--depth", "0"), ("--depth", "9"), ("--depth", "x"), ("--limit", "0"), ("--cursor", "nope")):
        bad(store, "related", "app", *args)
    assert ok(store, "related", "nobody")["items"] == []


# ---- boot show and review ---------------------------------------------------------------------------

HANDOFF = """## Open threads

- finish the Lexer before the parser review

## Capability table

| capability | status |
|---|---|
| lex | partial |
"""


def test_boot_show_and_review_show_the_confirmed_edges(store: Path) -> None:
    docs = store / "docs"  # a filed document comes from inside the store's repository
    docs.mkdir(exist_ok=True)
    assert memstack("handoff", "write", "--agent", "alice", input=HANDOFF, cwd=store).returncode == 0
    assert memstack("boot", "rebuild", cwd=store).returncode == 0
    assert commit(store, "handoff").returncode == 0
    base = git(store, "rev-parse", "HEAD").stdout.strip()
    touching = ok(store, "binder", "edge", "--from", "lexer", "--to", "tokens", "--relation", "emits", "--by", "Ada")
    ok(store, "binder", "edge", "--from", "lexers", "--to", "tokenizer", "--relation", "is", "--by", "Ada")
    (docs / "d.md").write_text("doc\n")
    filed = ok(store, "binder", "file", str(docs / "d.md"), "--by", "Ada")
    shown = ok(store, "boot", "show", "--agent", "alice")
    assert shown["edges"] == [touching]  # `lexers`/`tokenizer` are named in no open thread
    text = memstack("boot", "show", "--agent", "alice", cwd=store).stdout
    assert "lexer -emits-> tokens (by Ada)" in text
    assert commit(store, "confirmed").returncode == 0
    report = ok(store, "review", f"{base}..HEAD", "--format", "json")
    assert [e["from"] for e in report["binder_edges"]] == ["lexer", "lexers"]
    assert [f["path"] for f in report["binder_files"]] == [filed["path"]] and report["binder"] == []
    markdown = memstack("review", f"{base}..HEAD", cwd=store).stdout
    assert "### Binder edges confirmed (2)" in markdown and "lexer —emits→ tokens by Ada" in markdown
    assert f"`{filed['path']}` (d.md) by Ada" in markdown


# ---- distilled_at --------------------------------------------------------------------------------

def test_view_entries_carry_their_distillation_time_deterministically(store: Path, tmp_path: Path) -> None:
    """`distilled_at` is the fact's own `recorded_at` (the transaction time its promotion gave it: the
    record's created_at), so each view shard is a function of its one fact file: the same facts give the
    same bytes whenever and wherever they are promoted or rebuilt."""
    for n in range(3):
        assert memstack("intake", "write", "--content", f"fact {n}", "--subject", f"s{n}", "--predicate", "chose",
                        "--object", "x", "--tier", "verified", "--confidence", "0.9", "--created-at",
                        f"2026-10-0{n + 1}T00:00:00Z", cwd=store).returncode == 0
    ok(store, "promote", "--now-ts", "2026-11-20T00:00:00Z")
    ok(store, "fact", "add", "--subject", "direct", "--predicate", "is", "--object", "y",
       "--valid-from", T0, "--recorded-at", T0)
    ok(store, "rebuild")
    promoted = {line["fact_id"]: line["promoted_at"] for line in ledger_lines(store)}
    validator = Draft7Validator(schemas.schema("view"))
    before = view_files(store)
    assert len(before) == 2
    for path, data in before.items():
        assert not list(validator.iter_errors(json.loads(data))), path
    by_subject = {f["subject"]: f for f in view_entries(store, "knowledge")}
    for n in range(3):
        fact = by_subject[f"s{n}"]
        assert fact["distilled_at"] == promoted[fact["id"]] == fact["recorded_at"] == \
            1_790_812_800_000 + n * 86_400_000
    assert by_subject["direct"]["distilled_at"] == by_subject["direct"]["recorded_at"]
    # the same facts give the same bytes: rebuilt twice, in another clone, and promoted at another time
    shutil.rmtree(store / "kb/knowledge")
    ok(store, "rebuild")
    assert view_files(store) == before
    ok(store, "rebuild")
    assert view_files(store) == before
    assert commit(store, "direct fact and views").returncode == 0
    clone = tmp_path / "clone"
    git(tmp_path, "clone", "-q", str(store), str(clone))
    shutil.rmtree(clone / "kb/knowledge")
    assert memstack("rebuild", cwd=clone).returncode == 0
    assert view_files(clone) == before


# ---- status ----------------------------------------------------------------------------------------

def test_status_of_a_clean_store(store: Path) -> None:
    doc = ok(store, "status")
    assert doc["pending_intake"] == {} and doc["pending_total"] == 0
    assert doc["binder_waiting"] == {"records": 0, "disputes": 0}
    assert doc["uncommitted"] == [] and doc["last_promotion"] is None
    check = memstack("rebuild", "--check", "--json", cwd=store)
    assert doc["stale"] == json.loads(check.stdout)["stale"]  # the same comparison as rebuild --check
    assert doc["index"]["fresh"] is True  # no fact files: nothing to be behind
    again = ok(store, "status")
    assert again["stale_remembered"] is True and again["stale"] == doc["stale"]
    text = memstack("status", cwd=store).stdout
    assert "pending intake: none" in text and "last promotion: never" in text


def test_status_with_pending_records_and_uncommitted_memory(store: Path) -> None:
    for agent, content in (("alice", "a1"), ("alice", "a2"), ("bob", "b1")):
        assert memstack("intake", "write", "--agent", agent, "--content", content, cwd=store).returncode == 0
    ok(store, "soil", "put", "session", "now", "--value", "1")
    doc = ok(store, "status")
    assert doc["pending_intake"] == {"alice": 2, "bob": 1} and doc["pending_total"] == 3
    assert sorted(c["path"] for c in doc["uncommitted"]) == sorted(
        [f"intake/alice/{p.name}" for p in (store / "intake/alice").glob("*.jsonl")]
        + [f"intake/bob/{p.name}" for p in (store / "intake/bob").glob("*.jsonl")] + ["store/session/now.json"])
    assert {c["status"] for c in doc["uncommitted"]} == {"??"}
    promoted = ok(store, "promote")  # observed, confidence 0.5: all three wait in the Binder
    after = ok(store, "status")
    assert after["pending_intake"] == {} and after["binder_waiting"]["records"] == 3
    assert after["last_promotion"]["commit"] == promoted["commit"] == git(store, "rev-parse", "HEAD").stdout.strip()
    assert after["last_promotion"]["subject"].startswith("memstack promote: 3 records routed")
    assert [c["path"] for c in after["uncommitted"]] == ["store/session/now.json"]
    assert after["stale"] == [] and after["index"]["fresh"] is True
    # a fact added by hand: the views lag it, and the index catches up on the next query
    ok(store, "fact", "add", "--subject", "s", "--predicate", "p", "--object", "o", "--valid-from", T0,
       "--recorded-at", T0)
    lagging = ok(store, "status")
    assert "kb/knowledge/alice/2026-11.json" in lagging["stale"] and lagging["stale_remembered"] is False
    assert any(c["path"].startswith("kb/facts/alice/") for c in lagging["uncommitted"])
    ok(store, "binder", "ratify", binder_waiting_id(store))
    assert ok(store, "status")["binder_waiting"]["records"] == 2


def test_status_names_ten_stale_files_and_counts_the_rest(store: Path) -> None:
    for month in range(1, 13):  # a fact by hand in each month of 2025: twelve knowledge shards lag their facts
        ok(store, "fact", "add", "--subject", f"s{month}", "--predicate", "p", "--object", "o",
           "--valid-from", f"2025-{month:02d}-02", "--recorded-at", f"2025-{month:02d}-02")
    stale = ok(store, "status")["stale"]
    assert len(stale) >= 12 and "kb/knowledge/alice/2025-12.json" in stale  # --json: every one
    [line] = [line for line in memstack("status", cwd=store).stdout.splitlines() if line.startswith("stale derived")]
    assert line.startswith("stale derived files: " + ", ".join(stale[:10]) + f", … and {len(stale) - 10} more")
    assert stale[10] not in line


def binder_waiting_id(store: Path) -> str:
    return str(items(ok(store, "binder", "list"))[0]["id"])


def test_status_outside_git_and_with_an_index_behind(store: Path, tmp_path: Path) -> None:
    ok(store, "fact", "add", "--subject", "s", "--predicate", "p", "--object", "o", "--valid-from", T0,
       "--recorded-at", T0)
    size = sum(p.stat().st_size for p in (store / "kb/facts").rglob("*.jsonl"))
    assert ok(store, "status")["index"] == {"exists": False, "fresh": False, "files_behind": 1, "bytes_behind": size,
                                            "building": False}
    ok(store, "fact", "history", "--subject", "s")  # a query builds the index
    assert ok(store, "status")["index"]["fresh"] is True
    plain = tmp_path / "plain"
    shutil.copytree(store, plain, ignore=shutil.ignore_patterns(".git"))
    (next((plain / "kb/facts/alice").glob("*.jsonl"))).touch()
    doc = ok(plain, "status")
    assert doc["uncommitted"] is None and doc["last_promotion"] is None
    assert doc["index"]["fresh"] is False and doc["index"]["files_behind"] >= 1
    assert doc["binder_waiting"]["disputes"] is None
    assert "behind by" in memstack("status", cwd=plain).stdout


@pytest.mark.parametrize("args", [("status", "extra"), ("related",), ("soil", "graduate", "c")])
def test_missing_or_extra_arguments_are_usage_errors(store: Path, args: tuple[str, ...]) -> None:
    assert memstack(*args, cwd=store).returncode == 2


# ---- the MCP tools, through the SDK's client ----------------------------------------------------------

def test_the_new_tools_over_stdio_do_what_the_cli_does(store: Path) -> None:
    docs = store / "docs"  # a filed document comes from inside the store's repository
    docs.mkdir(exist_ok=True)
    from mcp_support import cli_error, cli_json, refused, run, server, worded
    from mcp_support import ok as tool_ok

    ok(store, "soil", "put", "session", "plan", "--value", '{"next": "lexer"}')
    doc = docs / "guide.md"
    doc.write_text("# Guide\n")

    async def test() -> None:
        async with server("--store", str(store), "--agent", "alice") as client:
            graduated = await tool_ok(client, "soil_graduate", collection="session", key="plan", tier="verified",
                                      confidence=0.95, subject="parser", predicate="decided", object="lexer")
            assert graduated["soil"]["graduated_to"] == graduated["intake"]["record"]["id"]
            assert graduated["intake"]["record"]["source"] == "soil:store/session/plan.json"
            assert await refused(client, "soil_graduate", collection="session", key="plan") == \
                worded(cli_error(store, "soil", "graduate", "session", "plan"), ("`soil put`", "`soil_put`"))
            assert await refused(client, "soil_graduate", collection="session", key="x", tier="sure") == \
                worded(cli_error(store, "soil", "graduate", "session", "x", "--tier", "sure"),
                       ("`soil put`", "`soil_put`"))
            edge = await tool_ok(client, "binder_edge", **{"from": "parser", "to": "lexer"}, relation="uses")
            assert binder_lines(store)[-1] == edge and (edge["from"], edge["to"]) == ("parser", "lexer")
            assert await refused(client, "binder_edge", **{"from": "a", "to": "a"}, relation="is") == \
                worded(cli_error(store, "binder", "edge", "--from", "a", "--to", "a", "--relation", "is"),
                       ("bad --to", "bad to"))
            filed = await tool_ok(client, "binder_file", path=str(doc))
            assert (store / filed["path"]).read_text() == "# Guide\n"
            assert await refused(client, "binder_file", path=str(doc)) == \
                worded(cli_error(store, "binder", "file", str(doc)), ("bad PATH", "bad path"))
            assert await tool_ok(client, "related", subject="parser") == cli_json(store, "related", "parser",
                                                                                   "--limit", "50")
            assert await refused(client, "related", subject="parser", depth=0) == \
                cli_error(store, "related", "parser", "--depth", "0")
            status = await tool_ok(client, "status")
            cli = cli_json(store, "status")
            assert status["pending_intake"] == cli["pending_intake"] == {"alice": 1}
            assert status["uncommitted"] == cli["uncommitted"] and status["stale"] == cli["stale"]

    run(test)


def test_a_filed_document_is_kept_byte_for_byte_through_git(store: Path) -> None:
    docs = store / "docs"  # a filed document comes from inside the store's repository
    docs.mkdir(exist_ok=True)
    """`.gitattributes` (`kb/files/* -text`): git converts no line ending, so the name stays the content's hash."""
    doc = docs / "windows.md"
    doc.write_bytes(b"# written on windows\r\nline two\r\n")
    entry = ok(store, "binder", "file", str(doc), "--by", "Ada")
    assert commit(store, "crlf document").returncode == 0
    blob = subprocess.run(["git", "cat-file", "blob", f"HEAD:{entry['path']}"], cwd=store, capture_output=True,
                          check=True).stdout
    assert hashlib.sha256(blob).hexdigest() == entry["sha256"] == hashlib.sha256(doc.read_bytes()).hexdigest()
    assert memstack("check", "--all", cwd=store).returncode == 0
