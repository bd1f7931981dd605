"""I8, no credentials in memory: the detector, every write verb and MCP tool, the hooks, review.

The credentials are built from pieces at run time (tests/secret_corpus.py), so
no file of this repository holds one.
"""

import json
import re
import subprocess
from pathlib import Path

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from check_support import (
    append,
    committed,
    fact,
    handoff_text,
    head,
    intake,
    jsonl,
    publish,
    refused,
    refused_everywhere,
    run_check,
    sneak,
    with_remotes,
    write,
)
from helpers import git, items, memstack, tree_snapshot
from memstack.base import secrets
from secret_corpus import AWS_ID, GH, LOOK_ALIKES, PEM, SECRETS

ALLOW = "  # pragma: allowlist secret"
T0, T1 = "2026-01-01T00:00:00Z", "2026-01-01T00:00:01Z"
PW = "Tr0ub4" + "dor&3"


def pieces(line: str) -> list[str]:
    """What must never be printed of a credential line: the line and each of its words long enough to
    be the credential (8 characters or more, with a digit or a symbol)."""
    words = re.split(r"[\s=:\"'{}]+", line)
    return [line, *(w for w in words if len(w) >= 8 and not w.isalpha())]


def assert_silent(output: str, *lines: str) -> None:
    for line in lines:
        for piece in pieces(line):
            assert piece not in output, f"the secret {piece!r} was printed"


# ---- the detector --------------------------------------------------------------------------------

def test_the_corpus_is_large_and_this_repository_holds_no_credential() -> None:
    assert len(SECRETS) >= 30 and len(LOOK_ALIKES) >= 30
    root = Path(__file__).resolve().parents[2]
    tracked = subprocess.run(["git", "ls-files", "-z"], cwd=root, capture_output=True, check=True).stdout
    found = []
    for name in filter(None, tracked.decode().split("\0")):
        data = (root / name).read_bytes() if (root / name).is_file() else b""
        found += [f"{name}:{number}: {finding}" for number, finding in secrets.added(data, None, False)]
    assert found == []


@pytest.mark.parametrize("name", sorted(SECRETS))
def test_each_credential_is_found_by_kind_and_field_never_by_value(name: str) -> None:
    line, kind = SECRETS[name]
    findings = secrets.scan({"content": f"from the logs:\n{line}\nend", "tags": ["ok"]})
    assert kind in {f.kind for f in findings}
    assert {(f.field, f.line) for f in findings} == {("content", 2)}
    message = secrets.message(findings)
    assert message.startswith(f"bad content: holds a credential ({findings[0].kind}, line 2)")
    assert_silent(message + repr(findings), line)


@pytest.mark.parametrize("name", sorted(LOOK_ALIKES))
def test_each_look_alike_passes(name: str) -> None:
    assert secrets.scan({"content": LOOK_ALIKES[name], "title": LOOK_ALIKES[name]}) == []


LINK = "https://example.org/doc"


def test_a_record_whose_only_word_is_a_link_is_answered_without_the_walk(monkeypatch) -> None:
    """A link is in most records (`source`): a record whose only detector word is `://`, with no
    `user:password@` and no token cut between two strings, is answered from its JSON; any other is walked
    and found as before (each credential of the corpus beside a link; a token cut in two; a link's password)."""
    import importlib

    scan = importlib.import_module("memstack.base.secrets.scan")
    walked = []
    real = scan._walk
    monkeypatch.setattr(scan, "_walk", lambda *args: walked.append(args) or real(*args))
    record = {"source": LINK, "content": "the build takes 3 s", "title": "build", "tags": ["ci"]}
    assert secrets.scan(record) == [] and walked == []
    for name, (line, kind) in SECRETS.items():
        found = secrets.scan({**record, "content": f"from the logs:\n{line}\nend"})
        assert kind in {f.kind for f in found}, name
    cut = secrets.scan({**record, "subject": AWS_ID[:9], "object": AWS_ID[9:]})
    assert [f.kind for f in cut] == ["AWS Access Key"] and " + " in cut[0].field
    link = "https://ci:" + PW.replace("&", "x") + "@example.org/doc"
    assert [f.kind for f in secrets.scan({**record, "source": link})] == ["Basic Auth Credentials"]


_PIECES = ["ak", "ia", "a", "k", "gh", "p_", "pa", "s", "se", "cret", "_k", "ey", "://", "x", " ", "\u212a", "\u0130",
           "hooks.sl", "ack.com", "q" * 40]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.lists(st.sampled_from(_PIECES), max_size=6).map("".join), min_size=2, max_size=5))
def test_a_word_cut_between_fields_is_found_by_looking_only_around_the_joins(strings: list[str]) -> None:
    """Where no string holds a detector's word whole (the only case `scan` asks), looking around the joins
    answers as a search of the whole joined texts does: a word cut across one join or several (a short
    string in between), upper case and letters whose lower case is another length included."""
    from memstack.base.secrets.detect import ANY_WORD
    from memstack.base.secrets.scan import _split_word

    assume(not any(word in text.lower() for text in strings for word in ANY_WORD))
    record = {f"f{n}": text for n, text in enumerate(strings)}
    joined = ("".join(strings) + "\n" + "".join(reversed(strings))).lower()
    assert _split_word(record) == any(word in joined for word in ANY_WORD)


def _prefilter_reference(data: bytes) -> list[tuple[int, int]]:
    """The prefilter as an expression at a time over the whole text: the first match of each expression
    in each line."""
    from memstack.base.secrets.detect import STAGES

    found = set()
    for number, (_, first, _) in enumerate(STAGES):
        for pattern in first:
            for line in re.finditer(rb"[^\n]*", data.lower()):
                match = pattern.search(data.lower(), line.start(), line.end())
                if match is not None:
                    found.add((match.start(), number))
    return sorted(found)


_BYTES = ["AKIA", "aws", " key", "_KEY", "ghp_", "eyJ", "abc.", "://", "u:p@", "host", "\n", "pass", "PRIVATE KEY",
          "xoxb-", "hooks.slack.com", "sk_live_", "T3BlbkFJ", "glpat-", "x", " ", "=", '"', "a3t", "secret"]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(_BYTES), max_size=40).map("".join))
def test_the_prefilter_finds_what_each_expression_finds_line_by_line(text: str) -> None:
    from memstack.base.secrets.detect import prefilter_hits

    assert prefilter_hits(text.encode()) == _prefilter_reference(text.encode())


def test_a_word_cut_between_two_long_fields_is_found() -> None:
    from memstack.base.secrets.scan import _split_word

    long = "the service logs what each step took " * 300  # ~11,000 characters a field
    assert _split_word({"title": long + "AK", "content": "IA" + long})
    assert _split_word({"title": long + "gh", "subject": "p", "content": "_" + long})  # across two joins
    assert _split_word({"content": "word " + long, "title": long + "sec", "other": "ret"})
    assert _split_word({"title": long + "PuTTY-User-Key-F", "content": "ile" + long})  # the longest word
    assert _split_word({"title": long + "P", "content": "uTTY-User-Key-File" + long})
    assert not _split_word({"title": long + "AK", "content": "xIA" + long})


def test_a_json_path_names_the_field_and_the_pragma_allows_a_line() -> None:
    value = {"db": {"host": "db.internal", "password": PW}, "hosts": ["a", f"key {AWS_ID}"]}
    found = secrets.scan(value, "value")
    assert [(f.field, f.kind) for f in found] == [("value.db.password", "Secret Keyword"),
                                                  ("value.hosts[1]", "AWS Access Key")]
    assert secrets.scan(f"the example key {AWS_ID}{ALLOW}") == []
    assert secrets.scan(f"the example key {AWS_ID}\n{ALLOW}")  # the pragma covers its own line only


def test_a_change_is_read_only_where_it_adds_lines() -> None:
    old = b'{"content":"clean"}\n{"content":"' + AWS_ID.encode() + b'"}\n'
    assert secrets.added(old + b'{"content":"also clean"}\n', old, True) == []
    new = old + b'{"content":"' + GH.encode() + b'"}\n'
    [(number, finding)] = secrets.added(new, lambda: old, True)
    assert (number, finding.field, finding.kind) == (3, "content", "GitHub Token")
    markdown = b"# notes\n\nthe deploy key:\n" + PEM.encode() + b"\n"
    [(number, finding)] = secrets.added(markdown, None, False)
    assert (number, finding.field, finding.kind) == (4, "text", "Private Key")


# ---- every write verb refuses, names kind and field, writes nothing, echoes nothing ---------------------

SOIL_PASSWORD = '{"db": {"host": "db.internal", "password": "' + "Tr0ub4dor&3" + '"}}'
BASIC_URL = "https://" + "deploy:" + "s3cr3tPassw0rd" + "@git.example.com/x.git"
HANDOFF = ("## Open threads\n\n- rotate {token}\n\n"
           "## Capability table\n\n| capability | status |\n|---|---|\n| x | ok |\n")

WRITES = [  # (argv, stdin, the field and kind the message must name, the secret)
    (["intake", "write", "--content", f"env dump: AWS_ACCESS_KEY_ID={AWS_ID}"], None,
     "bad content: holds a credential (AWS Access Key)", AWS_ID),
    (["intake", "write", "--content", "ok", "--title", f"token {GH}"], None,
     "bad title: holds a credential (GitHub Token)", GH),
    (["intake", "write", "--content", "ok", "--keyword", SECRETS["slack bot token"][0]], None,
     "bad keywords[0]: holds a credential (Slack Token)", SECRETS["slack bot token"][0]),
    (["intake", "write", "--content", "ok", "--subject", "ci", "--predicate", "uses",
      "--object", SECRETS["json web token"][0]], None,
     "bad object: holds a credential (JSON Web Token)", SECRETS["json web token"][0]),
    (["fact", "add", "--subject", "llm", "--predicate", "key", "--object", SECRETS["openai key"][0],
      "--valid-from", T0, "--recorded-at", T1], None,
     "bad object: holds a credential (OpenAI Token)", SECRETS["openai key"][0]),
    (["fact", "add", "--subject", "repo", "--predicate", "remote", "--object", "origin",
      "--source", BASIC_URL, "--valid-from", T0, "--recorded-at", T1], None,
     "bad source: holds a credential (Basic Auth Credentials)", BASIC_URL),
    (["capture", "--subject", "db", "--predicate", "decided", "--object", SECRETS["dotenv password"][0],
      "--valid-from", T1, "--recorded-at", T1, "--contradicts"], None,
     "bad object: holds a credential (Secret Keyword)", SECRETS["dotenv password"][0]),
    (["soil", "put", "session", "db", "--value", SOIL_PASSWORD], None,
     "bad value.db.password: holds a credential (Secret Keyword)", "Tr0ub4dor&3"),
    (["soil", "update", "session", "current", "--value", json.dumps({"remote": BASIC_URL})], None,
     "bad value.remote: holds a credential (Basic Auth Credentials)", BASIC_URL),
    (["handoff", "write", "--agent", "alice", "-"], HANDOFF.format(token=SECRETS["stripe secret key"][0]),
     "bad handoff: holds a credential (Stripe Access Key, line 3)", SECRETS["stripe secret key"][0]),
]


@pytest.fixture
def seeded(store: Path) -> Path:
    """A store with an open fact to contradict and a SOIL record to update (committed)."""
    for argv in (["fact", "add", "--subject", "db", "--predicate", "decided", "--object", "use the vault",
                  "--valid-from", T0, "--recorded-at", T0],
                 ["soil", "put", "session", "current", "--value", '{"task": "I8"}']):
        assert memstack(*argv, cwd=store).returncode == 0
    git(store, "add", "-A")
    git(store, "commit", "-q", "-m", "seed")
    return store


@pytest.mark.parametrize("json_flag", [False, True], ids=["text", "json"])
def test_every_write_verb_refuses_a_credential_and_writes_nothing(seeded: Path, json_flag: bool,
                                                                  tmp_path: Path) -> None:
    document = tmp_path / "notes.md"
    document.write_text(f"# Deploy notes\n\nthe key:\n{PEM}\nMIIEabc\n")
    writes = WRITES + [(["nest", str(document), "--agent", "alice"], None,
                        "bad content: holds a credential (Private Key, line 4)", PEM)]
    before = tree_snapshot(seeded)
    for argv, stdin, expected, secret in writes:
        result = memstack(*argv, *(["--json"] if json_flag else []), cwd=seeded, input=stdin)
        assert result.returncode == 2, (argv, result.stdout, result.stderr)
        assert result.stdout == ""
        assert result.stderr.startswith(f"memstack: {expected}") and result.stderr.count("\n") == 1, result.stderr
        assert "(I8)" in result.stderr
        assert_silent(result.stdout + result.stderr, secret)
        assert tree_snapshot(seeded) == before, argv
    history = items(json.loads(memstack("fact", "history", "--subject", "db", "--json", cwd=seeded).stdout))
    [prior] = history if isinstance(history, list) else history["facts"]
    assert prior["valid_to"] is None  # the refused capture closed nothing


def test_the_pragma_lets_a_deliberate_example_through_every_layer(store: Path) -> None:
    example = f"docs example key {AWS_ID}{ALLOW}"
    assert memstack("intake", "write", "--content", example, cwd=store).returncode == 0
    assert memstack("soil", "put", "session", "doc", "--value", json.dumps({"example": example}),
                    cwd=store).returncode == 0
    git(store, "add", "-A")
    assert git(store, "commit", "-q", "-m", "documented example", check=False).returncode == 0


# ---- MCP tools ---------------------------------------------------------------------------------

def test_every_mcp_write_tool_refuses_with_the_cli_message(seeded: Path) -> None:
    from mcp_support import ok, run, server
    from mcp_support import refused as tool_refused

    calls = [
        ("intake_write", {"content": f"env: {AWS_ID}"}, "bad content: holds a credential (AWS Access Key)", AWS_ID),
        ("fact_add", {"subject": "s", "predicate": "p", "object": GH, "valid_from": T0, "recorded_at": T1},
         "bad object: holds a credential (GitHub Token)", GH),
        ("capture", {"subject": "db", "predicate": "decided", "object": PEM, "valid_from": T1, "recorded_at": T1,
                     "contradicts": True}, "bad object: holds a credential (Private Key)", PEM),
        ("soil_put", {"collection": "session", "key": "db", "value": json.loads(SOIL_PASSWORD)},
         "bad value.db.password: holds a credential (Secret Keyword)", "Tr0ub4dor&3"),
        ("soil_update", {"collection": "session", "key": "current", "value": {"remote": BASIC_URL}},
         "bad value.remote: holds a credential (Basic Auth Credentials)", BASIC_URL),
        ("handoff_write", {"text": HANDOFF.format(token=GH)}, "bad handoff: holds a credential (GitHub Token, line 3)",
         GH),
    ]
    cli = memstack("intake", "write", "--content", f"env: {AWS_ID}", cwd=seeded).stderr.strip()
    before = tree_snapshot(seeded)

    async def session() -> None:
        async with server("--store", str(seeded), "--agent", "alice") as client:
            for tool, arguments, expected, secret in calls:
                message = await tool_refused(client, tool, **arguments)
                assert message.startswith(expected), (tool, message)
                assert_silent(message, secret)
            assert f"memstack: {await tool_refused(client, calls[0][0], **calls[0][1])}" == cli  # the CLI's words
            for name, (line, _) in SECRETS.items():  # the whole corpus, refused through the tool
                message = await tool_refused(client, "intake_write", content=f"pasted:\n{line}")
                assert "holds a credential" in message, name
                assert_silent(message, line)
            assert tree_snapshot(seeded) == before
            for name, line in LOOK_ALIKES.items():  # and every look-alike written
                await ok(client, "intake_write", content=line, title=name)

    run(session)
    written = memstack("intake", "list", "--json", cwd=seeded).stdout
    assert all(json.dumps(line)[1:-1] in written for line in LOOK_ALIKES.values())


# ---- the checks: hook, range, all, pre-receive, pre-push --------------------------------------------

def i8_lines(output: str) -> list[str]:
    return [line for line in output.splitlines() if ": I8 " in line]


def test_the_hook_refuses_a_credential_in_every_memory_file(repo: Path) -> None:  # noqa: F811
    planted = {
        "intake/alice/2026-01-01.jsonl": ("AWS Access Key in content", AWS_ID),
        "kb/facts/alice/2026-01.jsonl": ("Private Key in object", PEM),
        "store/session/db.json": ("Secret Keyword in password", "Tr0ub4dor&3"),
        "handoffs/alice/session_handoff-2026-01-02_alice.md": ("GitHub Token in text", GH),
        "identity/alice.md": ("Slack Token in text", SECRETS["slack bot token"][0]),
        "kb/promotions/alice/2026-01-01.jsonl": ("JSON Web Token in via", SECRETS["json web token"][0]),
        "kb/binder.jsonl": ("Stripe Access Key in by", SECRETS["stripe secret key"][0]),
        "willow.md": ("Basic Auth Credentials in text", BASIC_URL),
        "kb/knowledge/alice/2026-01.json": ("OpenAI Token in object", SECRETS["openai key"][0]),
        "session_anchor_alice.json": ("GitLab Token in value", SECRETS["gitlab personal token"][0]),
    }
    secret = {path: value for path, (_, value) in planted.items()}
    write(repo, "intake/alice/2026-01-01.jsonl", jsonl(intake(1, content=f"key {AWS_ID}")))
    write(repo, "kb/facts/alice/2026-01.jsonl", jsonl(fact("0193ab0000000000aaaaaaaaaaaaaaaa",
                                                          obj=f"{PEM}\nMIIEabc\n-----END")))
    write(repo, "store/session/db.json", json.dumps({"collection": "session", "key": "db", "value":
                                                     {"password": PW}, "created_at": "2026-01-01T00:00:00Z",
                                                     "updated_at": "2026-01-01T00:00:00Z", "expires_at": None},
                                                    indent=2) + "\n")
    write(repo, "handoffs/alice/session_handoff-2026-01-02_alice.md", handoff_text(thread=f"use {GH}"))
    append(repo, "identity/alice.md", f"\nslack: {secret['identity/alice.md']}\n".encode())
    append(repo, "kb/promotions/alice/2026-01-01.jsonl",
           jsonl({"intake_id": "x", "via": secret["kb/promotions/alice/2026-01-01.jsonl"]}))
    append(repo, "kb/binder.jsonl", jsonl({"intake_id": "x", "decision": "ratify", "by": secret["kb/binder.jsonl"]}))
    append(repo, "willow.md", f"\nclone {BASIC_URL}\n".encode())
    write(repo, "kb/knowledge/alice/2026-01.json",
          json.dumps([{"object": secret["kb/knowledge/alice/2026-01.json"]}], indent=2) + "\n")
    write(repo, "session_anchor_alice.json",
          json.dumps({"open_threads": [secret["session_anchor_alice.json"]]}, indent=2) + "\n")
    output = refused(repo, *(f": I8 {what}" for what, _ in planted.values()))
    for path in planted:
        assert any(line.startswith(f"{path}:") for line in i8_lines(output)), path
    assert_silent(output, *secret.values())
    staged = run_check(repo, "--staged", "--json")
    assert staged.returncode == 1
    assert {v["path"] for v in json.loads(staged.stdout)["violations"] if v["rule"] == "I8"} == set(planted)
    assert_silent(staged.stdout + staged.stderr, *secret.values())


def test_check_all_scans_a_view_that_lags_its_sources_and_only_that_one(repo: Path) -> None:  # noqa: F811
    """An audit lets views lag (stale, no I4), but a view that is not what its sources make is read for
    credentials (a megabyte at a time), each finding at its line of the file; a fresh view is not read."""
    key = SECRETS["openai key"][0]
    lines = [json.dumps({"object": f"filler {n}"}) for n in range(80_000)]  # ~2.2 MB: three pieces
    lines.insert(60_000, json.dumps({"object": key}))
    write(repo, "kb/knowledge/alice/2026-01.json", "[\n" + ",\n".join(lines) + "\n]\n")
    sneak(repo)
    result = run_check(repo, "--all")
    assert result.returncode == 1, result.stdout
    assert i8_lines(result.stdout) == ["kb/knowledge/alice/2026-01.json:60002: I8 OpenAI Token in object — "
                                       + i8_lines(result.stdout)[0].split(" — ", 1)[1]]
    assert "kb/knowledge/alice/2026-01.json: stale" in result.stdout
    assert_silent(result.stdout + result.stderr, key)
    assert memstack("rebuild", cwd=repo).returncode == 0
    sneak(repo, "the views rebuilt")
    assert run_check(repo, "--all").returncode == 0


def test_the_hook_lets_look_alikes_and_allowlisted_lines_through(repo: Path) -> None:  # noqa: F811
    records = [intake(n + 1, content=line, title=name) for n, (name, line) in enumerate(sorted(LOOK_ALIKES.items()))]
    records.append(intake(len(records) + 1, content=f"the documented example {AWS_ID}{ALLOW}"))
    write(repo, "intake/alice/2026-01-01.jsonl", jsonl(*records))
    write(repo, "handoffs/alice/session_handoff-2026-01-02_alice.md",
          handoff_text(thread="; ".join(LOOK_ALIKES.values())))
    committed(repo)


def test_range_and_all_find_a_sneaked_credential_once_and_the_next_commit_passes(repo: Path) -> None:  # noqa: F811
    base = head(repo)
    log = "intake/alice/2026-01-01.jsonl"
    write(repo, log, jsonl(intake(1), intake(2, content=f"creds {AWS_ID}")))
    bad = sneak(repo)
    append(repo, log, jsonl(intake(3)))
    committed(repo)  # the hook reads what this commit adds, not the line already committed
    for args in (["--range", f"{base}..HEAD"], ["--all"], ["--range", f"{base}..HEAD", "--json"]):
        result = run_check(repo, *args)
        assert result.returncode == 1, result.stdout
        assert_silent(result.stdout + result.stderr, f"creds {AWS_ID}")
        if "--json" in args:
            [found] = [v for v in json.loads(result.stdout)["violations"] if v["rule"] == "I8"]
            assert (found["commit"], found["path"], found["line"], found["what"]) == (
                bad, log, 2, "AWS Access Key in content")
        else:
            assert i8_lines(result.stdout) == [f"{log}:2: I8 AWS Access Key in content — {secrets_fix()}"]


def secrets_fix() -> str:
    from memstack.integrity.rules import I8_FIX

    return I8_FIX


def test_pre_receive_refuses_a_push_carrying_a_credential(repo: Path, bare: Path) -> None:  # noqa: F811
    git(repo, "remote", "add", "origin", str(bare))
    assert git(repo, "push", "--no-verify", "origin", "main", check=False).returncode == 0
    before = git(bare, "rev-parse", "main").stdout
    write(repo, "kb/facts/alice/2026-01.jsonl", jsonl(fact("0193ab0000000000bbbbbbbbbbbbbbbb", obj=GH)))
    bad = sneak(repo)
    proc = git(repo, "push", "--no-verify", "origin", "main", check=False)
    output = proc.stdout + proc.stderr
    assert proc.returncode != 0
    assert f"commit {bad[:12]}" in output
    assert "kb/facts/alice/2026-01.jsonl:1: I8 GitHub Token in object" in output
    assert_silent(output, GH)
    assert git(bare, "rev-parse", "main").stdout == before


def test_pre_push_refuses_a_credential_in_the_commits_pushed(repo: Path, tmp_path: Path) -> None:  # noqa: F811
    plain = tmp_path / "plain.git"
    git(tmp_path, "init", "-q", "--bare", str(plain))
    git(repo, "remote", "add", "origin", str(plain))
    assert git(repo, "push", "origin", "main", check=False).returncode == 0
    write(repo, "store/session/ci.json", json.dumps({"collection": "session", "key": "ci", "value": BASIC_URL,
                                                     "created_at": "2026-01-01T00:00:00Z", "updated_at":
                                                     "2026-01-01T00:00:00Z", "expires_at": None}) + "\n")
    sneak(repo)
    proc = git(repo, "push", "origin", "main", check=False)
    output = proc.stdout + proc.stderr
    assert proc.returncode != 0
    assert "store/session/ci.json:1: I8 Basic Auth Credentials in value" in output
    assert_silent(output, BASIC_URL)


# ---- review ------------------------------------------------------------------------------------

def test_review_lists_credentials_first_and_never_prints_them(repo: Path) -> None:  # noqa: F811
    base = head(repo)
    write(repo, "intake/alice/2026-01-01.jsonl", jsonl(intake(1, content=f"env {AWS_ID}", title=f"token {GH}")))
    write(repo, "kb/facts/alice/2026-01.jsonl", jsonl(
        fact("0193ab0000000000cccccccccccccccc", subject="deploy", obj=f"{PEM}\nMIIEbody\n-----END"),
        fact("0193ab0000000000dddddddddddddddd", subject="editor", obj="vim")))
    tip = sneak(repo)
    markdown = memstack("review", f"{base}..HEAD", cwd=repo)
    assert markdown.returncode == 0, markdown.stderr
    lines = markdown.stdout.splitlines()
    assert lines[2].startswith("### 🔑 Credentials in this range (3)")  # right after the title
    listed = lines[lines.index("```text") + 1: lines.index("```")]
    assert listed == [f"{tip[:12]} intake/alice/2026-01-01.jsonl:1: AWS Access Key in content",
                      f"{tip[:12]} intake/alice/2026-01-01.jsonl:1: GitHub Token in title",
                      f"{tip[:12]} kb/facts/alice/2026-01.jsonl:1: Private Key in object"]
    assert "| deploy | decided | [redacted: Private Key] |" in markdown.stdout
    assert "| editor | decided | vim |" in markdown.stdout
    as_json = memstack("review", f"{base}..HEAD", "--format", "json", cwd=repo)
    report = json.loads(as_json.stdout)
    assert [(s["path"], s["line"], s["what"]) for s in report["secrets"]] == [
        ("intake/alice/2026-01-01.jsonl", 1, "AWS Access Key in content"),
        ("intake/alice/2026-01-01.jsonl", 1, "GitHub Token in title"),
        ("kb/facts/alice/2026-01.jsonl", 1, "Private Key in object")]
    assert_silent(markdown.stdout + markdown.stderr + as_json.stdout + as_json.stderr, AWS_ID, GH, PEM, "MIIEbody")


def test_a_history_rewrite_is_refused_until_an_administrator_sets_the_hook_aside(repo: Path,  # noqa: F811
                                                                                 bare: Path) -> None:  # noqa: F811
    """docs/secrets.md, "A credential already committed": the rewrite keeps every record, passes
    the range check on its own, and is refused as a force push that loses lines; the documented way
    through is an administrator setting the server hook aside for that one push."""
    git(repo, "remote", "add", "origin", str(bare))
    log = "intake/alice/2026-01-01.jsonl"
    write(repo, log, jsonl(intake(1), intake(2, content=f"creds {AWS_ID}")))
    sneak(repo)
    hook, aside = bare / "hooks" / "pre-receive", bare / "hooks" / "pre-receive.off"
    proc = git(repo, "push", "--no-verify", "origin", "main", check=False)
    assert proc.returncode != 0 and f"{log}:2: I8 AWS Access Key in content" in proc.stderr
    hook.rename(aside)  # the leak reached the remote anyway (a server without the hook, say)
    assert git(repo, "push", "-q", "--no-verify", "origin", "main", check=False).returncode == 0
    aside.rename(hook)
    # the rewrite (what `git filter-repo --replace-text` does to this commit): the line kept, redacted
    text = (repo / log).read_text().replace(AWS_ID, "***REMOVED***")
    write(repo, log, text)
    git(repo, "commit", "-q", "-a", "--amend", "--no-edit", "--no-verify")
    assert run_check(repo, "--range", "HEAD").returncode == 0  # every rewritten commit passes on its own
    proc = git(repo, "push", "--force", "--no-verify", "origin", "main", check=False)
    assert proc.returncode != 0
    assert f"{log}:2: I1 line 2 of the other side is lost" in proc.stderr
    hook.rename(aside)  # the administrator, once, with writers paused
    assert git(repo, "push", "-q", "--force", "--no-verify", "origin", "main", check=False).returncode == 0
    aside.rename(hook)
    assert AWS_ID not in git(bare, "show", f"main:{log}").stdout
    assert git(bare, "rev-parse", "main").stdout == git(repo, "rev-parse", "HEAD").stdout


def test_one_commit_cannot_drop_a_forbidden_pattern_and_add_what_it_forbade(repo: Path) -> None:  # noqa: F811
    config = (repo / "memstack.yaml").read_text()
    relaxed = config.replace("    - '(?i)password\\s*[:=]'\n", "")
    assert relaxed != config
    write(repo, "memstack.yaml", relaxed)
    append(repo, "identity/alice.md", b"\npassword: ask the on-call engineer\n")
    refused(repo, "identity/alice.md:5: I6 matches forbidden pattern '(?i)password\\\\s*[:=]'")
    git(repo, "reset", "-q")
    git(repo, "add", "memstack.yaml")
    committed(repo, "relax the identity patterns", add=False)  # first the rule, on its own
    committed(repo, "the identity it now allows")  # then what it allows


def test_promote_skips_a_sneaked_credential_and_promotes_the_rest(store: Path) -> None:
    clean = memstack("intake", "write", "--content", "we deploy with git", "--tier", "verified",
                     "--confidence", "0.9", "--created-at", T0, cwd=store)
    assert clean.returncode == 0, clean.stderr
    day = store / "intake" / "alice" / "2026-01-01.jsonl"
    record = json.loads(day.read_text().splitlines()[0])
    sneaked = {**record, "id": record["id"][:12] + "beef" + record["id"][16:], "content": f"deploy key {AWS_ID}"}
    with day.open("a") as handle:  # a hand-written line, committed past the hook
        handle.write(json.dumps(sneaked, sort_keys=True, separators=(",", ":")) + "\n")
    git(store, "add", "-A")
    git(store, "commit", "-q", "--no-verify", "-m", "sneaked")
    planned = json.loads(memstack("promote", "--dry-run", "--json", "--now-ts", T1, cwd=store).stdout)
    assert planned["held"] == [sneaked["id"]]  # what an MCP client reads (stderr goes to the server's log)
    result = memstack("promote", "--now-ts", T1, "--json", cwd=store)
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["held"] == [sneaked["id"]]
    assert f"warning: intake/alice/2026-01-01.jsonl: record {sneaked['id']} holds a credential (AWS Access Key in" \
        f" content), which reached memory past the checks: skipped" in result.stderr, result.stderr
    assert_silent(result.stdout + result.stderr, AWS_ID)
    held = [p for p in (store / "kb").rglob("*") if p.is_file()] + [*store.glob("*.json"), store / "willow.md"]
    assert not any(AWS_ID in p.read_text() for p in held)  # no fact, no ledger line, no view holds it
    assert record["id"] in "".join(p.read_text() for p in (store / "kb").rglob("*.jsonl"))  # the rest promoted


def test_the_checks_find_every_credential_of_the_corpus_as_the_write_paths_do(repo: Path) -> None:  # noqa: F811
    names = sorted(SECRETS)
    chunks = [names[at:at + 16] for at in range(0, len(names), 16)]  # a file's report is capped at 50 lines
    for number, chunk in enumerate(chunks):
        date = f"2026-01-{number + 1:02d}"
        records = [intake(n + 1, day=date, content=f"pasted:\n{SECRETS[name][0]}\nend") for n, name in enumerate(chunk)]
        write(repo, f"intake/alice/{date}.jsonl", jsonl(*records))
        write(repo, f"handoffs/alice/session_handoff-{date}_alice.md",
              handoff_text(date=date, thread="see below") + "".join(f"\n{SECRETS[name][0]}\n" for name in chunk))
    git(repo, "add", "-A")
    result = run_check(repo, "--staged", "--json")
    assert result.returncode == 1
    found: dict[tuple[str, int], set[str]] = {}
    for v in json.loads(result.stdout)["violations"]:
        if v["rule"] == "I8":
            found.setdefault((v["path"], v["line"]), set()).add(v["what"])
    first = handoff_text(thread="see below").count("\n") + 2  # the handoff's line of the first credential
    for number, chunk in enumerate(chunks):
        date = f"2026-01-{number + 1:02d}"
        log, handoff = f"intake/alice/{date}.jsonl", f"handoffs/alice/session_handoff-{date}_alice.md"
        for n, name in enumerate(chunk):
            kind = SECRETS[name][1]
            assert f"{kind} in content" in found.get((log, n + 1), set()), name
            assert f"{kind} in text" in found.get((handoff, first + 2 * n), set()), name
    assert_silent(result.stdout + result.stderr, *(line for line, _ in SECRETS.values()))


def test_redact_screens_a_long_list_and_walks_only_the_items_it_hits() -> None:
    items = [{"object": f"use git {n} https://example.com/{n}", "tags": ["a"]} for n in range(200)]
    items[150] = {"object": "ok", "tags": [f"x {GH}"]}
    redacted = secrets.redact({"facts": items, "title": f"key {AWS_ID}"})
    assert redacted["title"] == "[redacted: AWS Access Key]"
    assert redacted["facts"][150] == {"object": "ok", "tags": ["[redacted: GitHub Token]"]}
    assert all(redacted["facts"][n] is items[n] for n in range(200) if n != 150)  # not walked


# ---- the `secrets:` block of memstack.yaml ----------------------------------------------------------

ACME = "acme_" + "5f3c" * 8  # a credential of the store's own shape, built at run time
EXTRA_BLOCK = "\nsecrets:\n  extra_patterns:\n    - name: Acme key\n      pattern: 'acme_[0-9a-f]{32}'\n"
LOG = "intake/alice/2026-01-01.jsonl"


def test_the_block_names_the_detectors_of_the_schema_and_of_detect_secrets() -> None:
    from detect_secrets.core.plugins.util import get_mapping_from_secret_type_to_class

    from memstack.base import schemas

    enum = schemas.schema("config")["properties"]["secrets"]["properties"]["disable"]["items"]["enum"]
    assert enum == list(secrets.PLUGINS) == list(secrets.KIND)
    library = {cls.__name__: kind for kind, cls in get_mapping_from_secret_type_to_class().items()}
    assert secrets.KIND == {name: library[name] for name in secrets.PLUGINS}


def test_the_policy_drops_a_detector_adds_patterns_and_both_keeps_what_either_applies() -> None:
    off = secrets.policy({"secrets": {"disable": ["GitHubTokenDetector"]}})
    extra = secrets.policy({"secrets": {"extra_patterns": [{"name": "Acme key", "pattern": "acme_[0-9a-f]{32}"}]}})
    fine_grained = "github_pat_" + "A1b2C3d4E5f6G7h8I9j0K1" + "_" + "x9Y8w7V6u5" * 5 + "Z1y2X3w4v"
    assert secrets.kinds(f"t {GH}") == secrets.kinds(f"t {fine_grained}") == ["GitHub Token"]
    assert secrets.kinds(f"t {GH}", off) == secrets.kinds(f"t {fine_grained}", off) == []  # memstack's extra too
    assert secrets.kinds(f"t {AWS_ID}", off) == ["AWS Access Key"]  # the others stay on
    assert secrets.kinds(f"t {ACME}") == [] and secrets.kinds(f"t {ACME}", extra) == ["Acme key"]
    assert secrets.kinds(f"t {ACME}{ALLOW}", extra) == []
    both = off.both(extra)
    assert secrets.kinds(f"t {GH} {ACME}", both) == ["Acme key", "GitHub Token"]
    # a change's added lines, past the byte prefilter, in JSON lines and text, never the base's lines
    old = jsonl(intake(1, content=f"old {ACME}"))
    new = old + jsonl(intake(2), intake(3, content=f"new {ACME}"))
    assert secrets.added(new, old, True, extra) == [(3, secrets.Finding("content", 0, "Acme key"))]
    assert secrets.added(f"a\n\nsee {ACME}\n".encode(), None, False, extra) == [
        (3, secrets.Finding("text", 0, "Acme key"))]
    assert secrets.added(new, old, True) == []


def test_an_extra_pattern_refuses_a_write_and_a_commit(repo: Path) -> None:  # noqa: F811
    append(repo, "memstack.yaml", EXTRA_BLOCK.encode())
    committed(repo, "an extra pattern")
    before = tree_snapshot(repo)
    for argv in (["intake", "write", "--content", f"the token {ACME}"],
                 ["soil", "put", "session", "acme", "--value", json.dumps({"key": ACME})]):
        result = memstack(*argv, cwd=repo)
        assert result.returncode == 2 and result.stdout == ""
        assert "holds a credential (Acme key)" in result.stderr and result.stderr.count("\n") == 1, result.stderr
        assert_silent(result.stderr, ACME)
    assert tree_snapshot(repo) == before
    write(repo, LOG, jsonl(intake(1, content=f"the token {ACME}")))
    assert_silent(refused(repo, f"{LOG}:1: I8 Acme key in content"), ACME)
    base = head(repo)
    write(repo, "kb/facts/alice/2026-01.jsonl", jsonl(fact("0193ab0000000000eeeeeeeeeeeeeeee", subject="acme",
                                                          obj=f"use {ACME}")))
    tip = sneak(repo)
    review = memstack("review", f"{base}..HEAD", cwd=repo)
    assert f"{tip[:12]} intake/alice/2026-01-01.jsonl:1: Acme key in content" in review.stdout
    assert f"{tip[:12]} kb/facts/alice/2026-01.jsonl:1: Acme key in object" in review.stdout
    assert "| acme | decided | [redacted: Acme key] |" in review.stdout
    assert_silent(review.stdout + review.stderr, ACME)
    git(repo, "reset", "-q", "--hard", base)
    write(repo, LOG, jsonl(intake(1, content=f"the documented example {ACME}{ALLOW}")))
    committed(repo)


def test_a_detector_switched_off_in_an_earlier_commit_lets_its_lines_through(repo: Path) -> None:  # noqa: F811
    base = head(repo)
    append(repo, "memstack.yaml", b"\nsecrets:\n  disable: [AWSKeyDetector]\n")
    committed(repo, "AWS key ids are test fixtures here")
    assert memstack("intake", "write", "--content", f"the fixture {AWS_ID}", cwd=repo).returncode == 0
    refused_gh = memstack("intake", "write", "--content", f"the token {GH}", cwd=repo)
    assert refused_gh.returncode == 2 and "(GitHub Token)" in refused_gh.stderr  # the others stay on
    write(repo, "handoffs/alice/session_handoff-2026-01-02_alice.md", handoff_text(thread=f"use {AWS_ID}"))
    committed(repo, "the fixture")
    assert AWS_ID in git(repo, "show", "HEAD").stdout  # the intake line and the handoff, through the hook
    result = run_check(repo, "--range", f"{base}..HEAD")
    assert result.returncode == 0, result.stdout


def test_one_commit_cannot_switch_a_detector_off_and_add_what_it_finds(repo: Path) -> None:  # noqa: F811
    base = head(repo)
    append(repo, "memstack.yaml", b"\nsecrets:\n  disable: [AWSKeyDetector]\n")
    write(repo, LOG, jsonl(intake(1, content=f"the key {AWS_ID}")))
    assert_silent(refused(repo, f"{LOG}:1: I8 AWS Access Key in content"), AWS_ID)
    bad = sneak(repo)
    result = run_check(repo, "--range", f"{base}..HEAD", "--json")
    assert result.returncode == 1
    assert [(v["commit"], v["path"], v["line"], v["what"]) for v in json.loads(result.stdout)["violations"]] == [
        (bad, LOG, 1, "AWS Access Key in content")]
    assert_silent(result.stdout + result.stderr, AWS_ID)
    git(repo, "reset", "-q", "--hard", base)  # the rule alone first (a reviewable change), then the line
    append(repo, "memstack.yaml", b"\nsecrets:\n  disable: [AWSKeyDetector]\n")
    committed(repo, "AWS key ids are test fixtures here")
    write(repo, LOG, jsonl(intake(1, content=f"the key {AWS_ID}")))
    committed(repo, "the fixture")
    assert run_check(repo, "--range", f"{base}..HEAD").returncode == 0


def test_one_commit_cannot_drop_an_extra_pattern_and_add_what_it_matched(repo: Path) -> None:  # noqa: F811
    config = (repo / "memstack.yaml").read_text()
    write(repo, "memstack.yaml", config + EXTRA_BLOCK)
    committed(repo, "an extra pattern")
    base = head(repo)
    write(repo, "memstack.yaml", config)
    write(repo, "handoffs/alice/session_handoff-2026-01-02_alice.md", handoff_text(thread=f"rotate {ACME}"))
    assert_silent(refused(repo, "session_handoff-2026-01-02_alice.md:", ": I8 Acme key in text"), ACME)
    sneak(repo)
    result = run_check(repo, "--range", f"{base}..HEAD")
    assert result.returncode == 1 and ": I8 Acme key in text" in result.stdout
    assert_silent(result.stdout + result.stderr, ACME)


@pytest.mark.parametrize("block, message", [
    ("\nsecrets:\n  disable: [AWSKeyDetectr]\n", "secrets.disable.0: 'AWSKeyDetectr' is not one of ['AWSKeyDetector'"),
    ("\nsecrets:\n  extra_patterns:\n    - {name: Acme key, pattern: 'acme_(0-9'}\n",
     "secrets.extra_patterns[0].pattern: not a valid regular expression (missing ), unterminated subpattern"),
], ids=["unknown detector", "bad regex"])
def test_a_bad_block_is_refused_at_write_and_at_commit(repo: Path, block: str, message: str) -> None:  # noqa: F811
    append(repo, "memstack.yaml", block.encode())
    result = memstack("intake", "write", "--content", "a clean line", cwd=repo)
    assert result.returncode == 2 and result.stdout == ""
    assert result.stderr.startswith("memstack: ") and message in result.stderr, result.stderr
    assert result.stderr.count("\n") == 1
    output = refused(repo, "memstack.yaml", " I5 ", message)
    assert "Traceback" not in output


def test_the_prefilter_finds_the_same_hits_in_pieces_as_whole(monkeypatch) -> None:
    """secrets.prefilter_hits lowers a long text in pieces of whole lines (a promotion's ledger is not copied
    whole): with pieces of 1, 7 and 100 bytes the hits are those of one piece."""
    import random

    from memstack.base.secrets import detect as detector

    rng = random.Random(3)
    words = [b"hello", AWS_ID.encode(), GH.encode(), PEM.encode(), b"plain text", b"Token: x"]
    data = b"\n".join(b" ".join(rng.choice(words) for _ in range(rng.randrange(1, 5))) for _ in range(2000)) + b"\n"
    whole = detector.prefilter_hits(data)
    assert len(whole) > 1000
    for piece in (1, 7, 100):
        monkeypatch.setattr(detector, "CHUNK", piece)
        assert detector.prefilter_hits(data) == whole


# ---- shapes that do not start their line, wrapped in base64, split across fields --------------------

MIDLINE = ["markdown bullet aws secret", "html comment aws secret", "two assignments on a line", "base64 aws key id",
           "base64 dotenv", "nul separated environment"]


@pytest.mark.parametrize("name", MIDLINE)
def test_a_handoff_with_a_mid_line_or_wrapped_credential_is_refused_before_it_is_sealed(store: Path,
                                                                                       name: str) -> None:
    before, status = tree_snapshot(store), git(store, "status", "--porcelain").stdout
    result = memstack("handoff", "write", "--agent", "alice", "-", cwd=store,
                      input=HANDOFF.format(token=SECRETS[name][0]))
    assert result.returncode == 2, result.stdout + result.stderr
    assert result.stderr.startswith(f"memstack: bad handoff: holds a credential ({SECRETS[name][1]}")
    assert "(I8)" in result.stderr and result.stderr.count("\n") == 1
    assert_silent(result.stderr, SECRETS[name][0])
    assert tree_snapshot(store) == before and git(store, "status", "--porcelain").stdout == status


SPLIT = {  # the options of one `intake write`, a credential cut between two of them
    "name and value": (["--title", "aws_secret_access_key =", "--content", SECRETS["aws secret key"][0].split('"')[1]],
                       "AWS Access Key"),
    "token cut in two": (["--content", "see notes", "--subject", AWS_ID[:9], "--predicate", "uses",
                          "--object", AWS_ID[9:]], "AWS Access Key"),
    "password label": (["--title", "prod db password:", "--content", PW], "Secret Keyword"),
}


@pytest.mark.parametrize("name", sorted(SPLIT))
def test_a_credential_split_across_two_fields_is_refused_at_write_and_by_the_hook(repo: Path,  # noqa: F811
                                                                                  name: str) -> None:
    argv, kind = SPLIT[name]
    before, status = tree_snapshot(repo), git(repo, "status", "--porcelain").stdout
    result = memstack("intake", "write", *argv, cwd=repo)
    assert result.returncode == 2, result.stdout + result.stderr
    assert f"holds a credential ({kind})" in result.stderr and " + " in result.stderr and "(I8)" in result.stderr
    assert tree_snapshot(repo) == before and git(repo, "status", "--porcelain").stdout == status
    fields = {argv[i].removeprefix("--"): argv[i + 1] for i in range(0, len(argv), 2)}
    append(repo, "intake/alice/2026-01-01.jsonl", jsonl(intake(1, **fields)))
    refused(repo, "intake/alice/2026-01-01.jsonl:1: I8", kind)


def test_look_alikes_split_across_fields_pass_at_write(store: Path) -> None:
    for argv in (["--title", "the api_key:", "--content", "see the vault entry"],
                 ["--title", "password policy", "--content", "rotate monthly, 2024 audit"],
                 ["--content", "ok", "--subject", "db", "--predicate", "password:", "--object", "required"],
                 ["--title", "0193ab4f5e6d7c8b9a0f1e2d3c4b", "--content", "d14e7c7a1b2c3d4e5f60718293a4b5c6d7e8f901"]):
        result = memstack("intake", "write", *argv, cwd=store)
        assert result.returncode == 0, (argv, result.stderr)


def test_a_fact_ending_in_a_token_s_prefix_is_closed_by_its_successor(store: Path) -> None:
    """A token's prefix at the end of a text, then the successor's id (hex) in `superseded_by` when the fact
    is closed, read as one token across the join (hypothesis found it: `gldt-` + an id): ids are no secret."""
    for obj in ("gldt-", "glpat-"):
        first = memstack("capture", "--subject", f"s-{obj}", "--predicate", "p", "--object", obj, cwd=store)
        assert first.returncode == 0, first.stderr
        second = memstack("capture", "--subject", f"s-{obj}", "--predicate", "p", "--object", "x", "--contradicts",
                          cwd=store)
        assert second.returncode == 0, second.stderr
    git(store, "add", "-A")
    assert git(store, "commit", "-q", "-m", "closed", check=False).returncode == 0


def test_the_hook_finds_a_credential_that_does_not_start_its_line_in_every_file_kind(repo: Path) -> None:  # noqa: F811
    line = SECRETS["markdown bullet aws secret"][0]
    write(repo, "handoffs/alice/session_handoff-2026-01-02_alice.md", handoff_text() + f"\n{line}\n")
    refused(repo, "session_handoff-2026-01-02_alice.md:", "I8 AWS Access Key in text")
    git(repo, "reset", "-q", "--hard")
    git(repo, "clean", "-qfd")
    append(repo, "intake/alice/2026-01-01.jsonl", jsonl(intake(1, content=f"notes\n{SECRETS['base64 dotenv'][0]}")))
    refused(repo, "intake/alice/2026-01-01.jsonl:1: I8 Secret Keyword (base64) in content")


# ---- memstack.yaml is read too ---------------------------------------------------------------------

DSNS = {  # replica.postgres with a password, as a URI and as libpq keywords
    "uri": ("postgresql://app:" + "Tr0ub4dor3" + "@db.internal:5432/memory", "Basic Auth Credentials"),
    "keywords": ('"host=db.internal user=app password=' + PW + ' dbname=memory"', "Secret Keyword"),
}


@pytest.mark.parametrize("shape", sorted(DSNS))
def test_a_dsn_with_a_password_in_memstack_yaml_is_refused_by_every_gate(repo: Path, bare: Path,  # noqa: F811
                                                                          tmp_path: Path, shape: str) -> None:
    store = with_remotes(repo, bare, tmp_path)
    publish(store)
    dsn, kind = DSNS[shape]
    config = (store / "memstack.yaml").read_text()
    write(store, "memstack.yaml", config + f"\nreplica:\n  postgres: {dsn}\n")
    line = config.count("\n") + 3
    refused_everywhere(store, f"memstack.yaml:{line}: I8 {kind} in text")


def test_a_dsn_without_a_password_in_memstack_yaml_passes(repo: Path) -> None:  # noqa: F811
    config = (repo / "memstack.yaml").read_text()
    write(repo, "memstack.yaml", config + "\nreplica:\n  postgres: postgresql://app@db.internal:5432/memory\n")
    committed(repo, "the replica's DSN; the password comes from PGPASSWORD or ~/.pgpass")


# ---- many records screened at once (a promotion's) ---------------------------------------------------

def test_a_screen_of_many_records_keeps_every_record_a_scan_finds_a_credential_in() -> None:
    """`secrets.suspects` answers, for a list of records, which of them `scan` may find a credential in
    (a promotion walks only those): it must keep every one where `scan` finds one, a credential split
    across two fields included, wherever it stands in the list, and let the plain records by."""
    clean = {"title": "observation 7", "content": "the build of module 7 takes 7 s", "subject": "module-7",
             "predicate": "takes", "object": "7 s", "source": "bench", "tags": ["bench"]}
    linked = {**clean, "source": "https://example.org/doc"}
    risky = [{**clean, "content": line} for line, _ in SECRETS.values()]
    risky += [{**clean, "title": "aws_secret_access_key =", "content": SECRETS["aws secret key"][0].split('"')[1]},
              {**clean, "content": "see notes", "subject": AWS_ID[:9], "predicate": "uses", "object": AWS_ID[9:]},
              {**clean, "title": "prod db password:", "content": PW},
              {**clean, "subject": "x", "predicate": "pass", "object": f"word = {PW}"},
              {**clean, "keywords": ["api_key", PW]}, {"nested": {"deep": [SECRETS["dotenv password"][0]]}},
              {**clean, "content": "K" + "A" * 40}]
    cut = [{**clean, "object": "the id is " + AWS_ID[:2], "predicate": AWS_ID[2:]},  # no field holds a word:
           {**clean, "object": AWS_ID[2:], "predicate": "id " + AWS_ID[:2]},  # only the fields joined do
           {**clean, "object": "token " + GH[:1], "predicate": GH[1:]}]
    assert all(secrets.scan(record) for record in cut + risky[:len(SECRETS) + 3])
    risky += cut
    records = [clean, linked] * 3 + [item for record in risky for item in (record, clean)] + [linked, clean]
    found = {n for n, record in enumerate(records) if secrets.scan(record)}
    screened = secrets.suspects(records)
    assert found <= screened
    assert not screened & {n for n, record in enumerate(records) if record is clean or record is linked}
    with_password = {**clean, "source": BASIC_URL}  # a user and a password in a link
    assert secrets.scan(with_password) and secrets.suspects([linked, with_password, clean]) == {1}
    assert secrets.suspects(records, secrets.Policy(extra=(("any", re.compile("module")),))) == set(range(len(records)))
    assert secrets.suspects([]) == set()
