"""Bad input, every verb: exit 2, one line on stderr naming what was wrong, no traceback, nothing written.

One store serves the whole corpus (each case proves it left the store as it found it); the
cases run as real `memstack` subprocesses, as a user or an agent would call them.
"""

import json
import shutil
from pathlib import Path

import pytest

from helpers import git, items, memstack, tree_snapshot
from secret_corpus import GH

NOW = "2026-03-01T00:00:00Z"
FACT = ("--subject", "db", "--predicate", "decided", "--object", "sqlite")


def _args(*parts: str) -> tuple[str, ...]:
    return parts


# (arguments, what the message must name); `{dir}`, `{bin}`, `{id}` and `{store}` are filled in.
CASES = [
    # intake
    (_args("intake", "write", "--content", "x", "--created-at", "99999999999999999999"), "created-at"),
    (_args("intake", "write", "--content", "x", "--created-at", "253402300800000"), "created-at"),
    (_args("intake", "write", "--content", "x", "--created-at", "-1"), "created-at"),
    (_args("intake", "write", "--content", "x", "--created-at", "10000-01-01T00:00:00Z"), "created-at"),
    (_args("intake", "write", "--content", "x", "--created-at", "2026-13-01"), "created-at"),
    (_args("intake", "write", "--content", "x", "--agent", ""), "agent"),
    (_args("intake", "write", "--content", "x", "--agent", "../etc"), "agent"),
    (_args("intake", "write", "--content", "x", "--agent", "Alice"), "agent"),
    (_args("intake", "write", "--content", ""), "content"),
    (_args("intake", "write", "--content", "   "), "content"),
    (_args("intake", "write", "--content", "x", "--tier", "gospel"), "tier"),
    (_args("intake", "write", "--content", "x", "--confidence", "1.5"), "confidence"),
    (_args("intake", "write", "--content", "x", "--confidence", "nan"), "confidence"),
    (_args("intake", "write", "--content", "x", "--confidence", "high"), "confidence"),
    (_args("intake", "write", "--content", "x", "--relevance-score", "-0.1"), "relevance-score"),
    (_args("intake", "write", "--content", "x", "--subject", "s"), "subject"),
    (_args("intake", "write", "--content", "x", "--subject", "s", "--predicate", " ", "--object", "o"),
     "predicate"),
    (_args("intake", "list", "--agent", "a b"), "agent"),
    # soil
    (_args("soil", "put", "Notes", "k", "--value", "1"), "collection"),
    (_args("soil", "put", "notes", "../k", "--value", "1"), "key"),
    (_args("soil", "put", "notes", "k", "--value", "{{bad"), "value"),
    (_args("soil", "put", "notes", "k", "--file", "/nonexistent/value.json"), "file"),
    (_args("soil", "put", "notes", "k", "--value", "1", "--store", "{bin}"), "binary.md"),
    (_args("soil", "get", "notes", "missing"), "missing"),
    (_args("soil", "update", "notes", "missing", "--value", "1"), "missing"),
    (_args("soil", "expire", "notes", "kept", "--at", "99999999999999999999"), "--at"),
    (_args("soil", "expire", "notes", "kept", "--at", "yesterday"), "--at"),
    (_args("soil", "list", "a/b"), "collection"),
    # handoff, boot, nest
    (_args("handoff", "write", "--agent", "alice", "--file", "/nonexistent/h.md"), "file"),
    (_args("handoff", "write", "--agent", "alice", "--file", "{dir}/incomplete.md"), "date"),
    (_args("handoff", "write", "--agent", "alice", "--file", "{dir}/deep.md"), "YAML (nested deeper than"),
    (_args("handoff", "write", "--agent", "Bad"), "agent"),
    (_args("handoff", "show", "--agent", "x/y"), "agent"),
    (_args("boot", "show", "--agent", ".."), "agent"),
    (_args("boot", "rebuild", "--agent", "a b"), "agent"),
    (_args("nest", "/nonexistent/doc.md"), "file"),
    (_args("nest", "{dir}"), "file"),
    (_args("nest", "{bin}"), "file"),
    (_args("nest", "{dir}/incomplete.md", "--agent", ""), "agent"),
    # fact
    (_args("fact", "add", *FACT, "--valid-from", "soon", "--recorded-at", NOW), "valid-from"),
    (_args("fact", "add", *FACT, "--valid-from", NOW, "--recorded-at", "-5"), "recorded-at"),
    (_args("fact", "add", *FACT, "--valid-from", "99999999999999999999", "--recorded-at", NOW), "valid-from"),
    (_args("fact", "add", *FACT, "--valid-from", NOW, "--recorded-at", NOW, "--confidence", "2"), "confidence"),
    (_args("fact", "add", *FACT, "--valid-from", NOW, "--recorded-at", NOW, "--table", "gossip"), "table"),
    (_args("fact", "add", "--subject", "", "--predicate", "p", "--object", "o", "--valid-from", NOW,
           "--recorded-at", NOW), "subject"),
    (_args("fact", "add", *FACT, "--valid-from", NOW, "--recorded-at", NOW, "--agent", ""), "agent"),
    (_args("fact", "get-valid-at", "--ts", "whenever"), "ts"),
    (_args("fact", "get-valid-at", "--ts", NOW, "--as-of", "-1"), "as-of"),
    (_args("fact", "history", "--subject", ""), "subject"),
    (_args("fact", "invalidate", "--subject", "nobody", "--predicate", "p", "--valid-to", NOW), "nobody"),
    (_args("fact", "invalidate", "--subject", "db", "--predicate", "decided", "--valid-to", "later"), "valid-to"),
    (_args("fact", "invalidate", "--subject", "db", "--predicate", "decided", "--valid-to",
           "2025-01-01T00:00:00Z"), "valid-to"),
    # recall, capture
    (_args("recall", "--subject", "db", "--now-ts", "noon"), "now-ts"),
    (_args("recall", "--subject", "db", "--now-ts", NOW, "--limit", "0"), "limit"),
    (_args("recall", "--subject", "db", "--now-ts", NOW, "--limit", "99999999999999999999999"), "limit"),
    (_args("recall", "--subject", "", "--now-ts", NOW), "subject"),
    (_args("capture", *FACT, "--valid-from", "soon"), "valid-from"),
    (_args("capture", *FACT, "--valid-from", NOW, "--recorded-at", "99999999999999999999"), "recorded-at"),
    (_args("capture", *FACT, "--valid-from", NOW, "--agent", ""), "agent"),
    (_args("capture", *FACT, "--valid-from", NOW, "--confidence", "-1"), "confidence"),
    (_args("capture", "--subject", "db", "--predicate", "decided", "--object", "mysql", "--valid-from",
           "2025-06-01T00:00:00Z", "--recorded-at", NOW, "--contradicts"), "valid-from"),
    # promote, binder
    (_args("promote", "--now-ts", "tomorrow"), "now-ts"),
    (_args("promote", "--now-ts", "99999999999999999999"), "now-ts"),
    (_args("binder", "ratify", "0123456789abcdef0123456789abcdef"), "0123456789abcdef0123456789abcdef"),
    (_args("binder", "reject", "not an id"), "not an id"),
    (_args("binder", "ratify", "{id}", "--by", ""), "by"),
    # check, review, merge-driver, textconv, identity
    (_args("check", "--range", "nothing..HEAD"), "nothing"),
    (_args("check", "--range", "a..b..c"), "range"),
    (_args("review", "nothing..HEAD"), "nothing"),
    (_args("review", "HEAD"), "a..b"),
    (_args("merge-driver", "/nonexistent/o", "/nonexistent/a", "/nonexistent/b", "kb/promotions.jsonl"),
     "/nonexistent/"),
    (_args("textconv", "/nonexistent/file.jsonl"), "file"),
    (_args("textconv", "{dir}"), "{dir}"),
    (_args("identity", "check", "--agent", "Bad"), "agent"),
    # init, and the store itself
    (_args("init", "{bin}"), "path"),
    (_args("init", "{dir}/new", "--agent", "Not A Name"), "agent"),
    (_args("--store", "/nonexistent/store", "intake", "list"), "/nonexistent/store"),
    # claims only a person may make: tier "ratified" comes from a Binder ratification alone
    (_args("intake", "write", "--content", "x", "--tier", "ratified"), "ratified"),
    (_args("soil", "graduate", "notes", "kept", "--tier", "ratified"), "ratified"),
    (_args("binder", "edge", "--from", "a", "--to", "b", "--relation", "r", "--by", " "), "by"),
    # control characters in what a terminal prints
    (_args("binder", "edge", "--from", "a\x1b[2J", "--to", "b", "--relation", "r"), "control character"),
    (_args("binder", "edge", "--from", "a", "--to", "b\nforged", "--relation", "r"), "--to"),
    (_args("binder", "edge", "--from", "a", "--to", "b", "--relation", "r\rx"), "--relation"),
    (_args("binder", "edge", "--from", "a", "--to", "b", "--relation", "r", "--by", "Ada\x9b"), "--by"),
    (_args("binder", "ratify", "{id}", "--by", "Ada\x07"), "control character"),
    # a credential in a decision's note
    (_args("binder", "ratify", "{id}", "--note", "token " + GH), "note"),
    (_args("binder", "reject", "{id}", "--note", "- api_key=" + "abc123"), "note"),
    # a filed document from anywhere on the host
    (_args("binder", "file", "/proc/self/environ"), "/proc"),
    (_args("binder", "file", "--outside-repo", "/proc/self/environ"), "/proc"),
    (_args("binder", "file", "/etc/passwd"), "outside the repository"),
    (_args("binder", "file", "../../../../../../../../etc/hostname"), "outside the repository"),
    (_args("binder", "file", "/dev/null"), "/dev"),
    (_args("binder", "file", "{dir}/incomplete.md"), "outside the repository"),
    (_args("binder", "file", ".git/HEAD"), ".git"),
    (_args("binder", "file", "--outside-repo", "{dir}"), "folder"),
    # forged cursors: a cursor the verb did not hand out, never a traceback or an empty page
    (_args("intake", "list", "--limit", "1", "--cursor", "WzEsImEiXQ"), "not a cursor intake list handed out"),
    (_args("intake", "list", "--pending", "--cursor", "WzEsImEiXQ"), "not a cursor intake list handed out"),
    (_args("fact", "history", "--subject", "db", "--cursor", "WzEsImEiXQ"), "not a cursor fact history"),
    (_args("fact", "get-valid-at", "--ts", NOW, "--cursor", "WzEsImEiXQ"), "not a cursor fact get-valid-at"),
    (_args("soil", "list", "notes", "--cursor", "WzEsImEiXQ"), "not a cursor soil list handed out"),
    (_args("binder", "list", "--cursor", "WzEsImEiXQ"), "not a cursor binder list handed out"),
    (_args("recall", "--subject", "db", "--now-ts", NOW, "--cursor", "WzEsImEiXQ"), "not a cursor recall"),
    (_args("related", "db", "--cursor", "WzEsImEiXQ"), "not a cursor related handed out"),
    (_args("recall", "--subject", "db", "--cursor", "WyJmYWN0IGhpc3RvcnkiLFsiZGIiLDEsMiwiYSIsMV1d"),
     "not a cursor recall handed out"),  # a cursor of fact history
    (_args("intake", "list", "--cursor", "WyJpbnRha2UgbGlzdCIsWzEsImEiXV0"), "not a cursor intake list"),  # [1,"a"]
    # promotion: a now beyond the clock skew
    (_args("promote", "--now-ts", "2030-01-01T00:00:00Z"), "clock skew"),
    # sizes and depth (limits: in memstack.yaml)
    (_args("soil", "put", "notes", "deep", "--value", "[" * 1000 + "]" * 1000), "json_depth"),
    (_args("soil", "put", "notes", "deep", "--value", "[" * 300 + "]" * 300), "json_depth"),
    (_args("intake", "write", "--content", "x" * 70_000), "text_bytes"),
    (_args("fact", "add", *FACT[:4], "--object", "o" * 70_000), "text_bytes"),
    (_args("search", "word " * 1_000), "query_bytes"),
    (_args("binder", "ratify", "{id}", "--note", "n" * 70_000), "text_bytes"),
    # Claude Code's settings
    (_args("hook", "install", "--agent", "Bad"), "agent"),
    (_args("hook", "install", "--project", "{dir}/incomplete.md"), "--project"),
    (_args("hook", "settings", "--agent", "a b"), "agent"),
    # a clone of the store with nothing checked out (its remote's HEAD named a missing branch)
    (_args("install", "--store", "{dir}/clone"), "git checkout main"),
    # usage: a misspelled option or verb named with a guess; global options before the verb
    (_args("intake", "write", "--contnet", "x"), "unrecognized argument --contnet; did you mean --content?"),
    (_args("intake", "write"), "required: --content"),
    (_args("intak", "write", "--content", "x"), "did you mean intake?"),
    (_args("capture", *FACT, "--contradics", "--valid-from", "now"), "did you mean --contradicts?"),
    (_args("--agent", "alice", "promote"), "memstack promote takes no agent"),
    (_args("--agent", "alice", "intake", "write", "--content", "x", "--agent", "bob"), "--agent 'bob' too"),
    (_args("promote", "--dry-run", "--limit", "0"), "limit"),
    (_args("promote", "--dry-run", "--limit", "lots"), "limit"),
    # review: how much each section lists
    (_args("review", "HEAD~1..HEAD", "--limit", "0"), "limit"),
    (_args("review", "HEAD~1..HEAD", "--limit", "many"), "limit"),
    (_args("review", "HEAD~1..HEAD", "--limit", "9223372036854775808"), "limit"),  # an OverflowError's traceback
    (_args("review", "HEAD~1..HEAD", "--limit", "5", "--full"), "--full"),
    # test: a malformed memory tests file (MEMORY_TESTS, below) names the case and the field
    (_args("test", "{dir}/mt-not-yaml.yaml"), "mt-not-yaml.yaml: not valid YAML at line 4"),
    (_args("test", "{dir}/mt-not-a-list.yaml"), "mt-not-a-list.yaml: must be a list of cases"),
    (_args("test", "{dir}/mt-deep.yaml"), "mt-deep.yaml: not valid YAML: nested deeper than memstack reads"),
    (_args("test", "{dir}/mt-unknown-key.yaml"), "case 2 'deploy day': expected: unknown key"),
    (_args("test", "{dir}/mt-no-query.yaml"), "case 1 'deploy day': search/recall: missing query"),
    (_args("test", "{dir}/mt-two-queries.yaml"), "case 1 'both': search, recall: give one query"),
    (_args("test", "{dir}/mt-bad-time.yaml"), "case 1 'when': valid_at: 'tomorrow': expected"),
    (_args("test", "{dir}/mt-k-zero.yaml"), "case 1 'top': k: must be a whole number from 1 to 1000"),
    (_args("test", "{dir}/mt-k-huge.yaml"), "case 1 'top': k: must be"),
    (_args("test", "{dir}/mt-expect-text.yaml"), "case 1 'deploy day': expect: must be a list"),
    (_args("test", "{dir}/mt-nothing-expected.yaml"), "case 1 'deploy day': expect/expect_not: missing"),
    (_args("test", "{dir}/mt-same-name.yaml"), "case 2 'deploy day': name: case 1 has this name too"),
    (_args("test", "{dir}/mt-recall-as-of.yaml"), "case 1 'then': as_of: recall answers at valid_at only"),
    (_args("test", "{dir}/mt-absent.yaml"), "mt-absent.yaml: no such file"),
    (_args("test", "{dir}/mt-empty-expect.yaml"), "case 1 'deploy day': expect: must list at least one"),
    (_args("migrate", "--store", "{dir}"), "is not a memstack store"),
    (_args("migrate", "--format", "1"), "unrecognized argument --format"),
    (_args("export", "knowledge", "--table", "binder"), "argument --table: invalid choice: 'binder'"),
    (_args("export", "knowledge", "--at", "now"), "unrecognized argument --at"),
    # blame: an id of no record, an id of no id's shape
    (_args("blame", "0190000000000000000000000000abcd"), "no fact or intake record has this id"),
    (_args("blame", "../kb/facts"), "bad ID '../kb/facts': not a fact or intake id"),
    (_args("blame", "ABCDEF0123456789"), "not a fact or intake id"),
    # code anchors: into the code repository {dir}/code (a.py of 3 lines, bin.dat, link.py -> a.py)
    (_args("capture", *FACT, "--repo", "{dir}/code", "--anchor", "a.py:2-9"), "'a.py:2-9': past the end"),
    (_args("intake", "write", "--content", "x", "--repo", "{dir}/code", "--anchor", "gone.py"), "'gone.py': no such"),
    (_args("fact", "add", *FACT, "--repo", "{dir}/code", "--anchor", "../a.py"), "'../a.py': a path with `..`"),
    (_args("fact", "add", *FACT, "--repo", "{dir}/code", "--anchor", "/etc/hosts"), "'/etc/hosts': outside"),
    (_args("capture", *FACT, "--repo", "{dir}/code", "--anchor", "link.py"), "'link.py': link.py is a symbolic link"),
    (_args("intake", "write", "--content", "x", "--repo", "{dir}/code", "--anchor", "bin.dat"), "'bin.dat': a binary"),
    (_args("nest", "{dir}/incomplete.md", "--repo", "{dir}/code", "--anchor", "a.py:0"), "'a.py:0': lines are"),
    (_args("capture", *FACT, "--anchor", "a.py"), "name the repository code anchors point into with --repo"),
    (_args("capture", *FACT, "--repo", "{dir}/nowhere", "--anchor", "a.py"), "bad --repo"),
    (_args("anchors", "--status", "stale"), "bad --status 'stale'"),
    (_args("anchors", "--repo", "{dir}/code", "--rev", "nowhere"), "bad --rev 'nowhere'"),
    (_args("anchors", "reverify", "0123456789abcdef", "--by", "ada"), "no open fact with code anchors"),
    (_args("anchors", "reverify", "0123456789abcdef", "--by", "a\x1b[31mb"), "--by 'a\\x1b[31mb': holds a control"),
    (_args("anchors", "reverify", "0123456789abcdef", "--by", "ada", "--note", "x\ny"), "--note 'x\\ny': holds a"),
    # forget: an id no record has, no reason, a control character, a credential in the reason
    (_args("forget", "0190f3a1b2c3d4e5f6a7b8c9d0e1f2a3", "--reason", "leaked"), "ID '0190f3a1b2c3d4e5f6a7b8c9"),
    (_args("forget", "nope/none", "--reason", "leaked"), "ID 'nope/none'"),
    (_args("forget", "{id}", "--reason", ""), "--reason"),
    (_args("forget", "{id}", "--reason", "   "), "--reason"),
    (_args("forget", "{id}", "--reason", "line\nbreak"), "--reason"),
    (_args("forget", "{id}", "--reason", "why\x1b[2J"), "control character"),
    (_args("forget", "{id}", "--reason", "key " + GH), "credential"),
    (_args("forget", "{id}", "--reason", "ok", "--by", ""), "--by"),
    (_args("forget", "{id}", "{id}x", "--reason", "ok"), "no record of the store has this id"),
    (_args("forget", "--reason", "ok"), "ID"),
    # anchors check: a range that is not A..B, a commit the code repository does not have
    (_args("anchors", "check", "HEAD", "--repo", "{dir}/code"), "bad range 'HEAD': expected A..B"),
    (_args("anchors", "check", "HEAD...HEAD", "--repo", "{dir}/code"), "bad range 'HEAD...HEAD'"),
    (_args("anchors", "check", "nowhere..HEAD", "--repo", "{dir}/code"), "no commit 'nowhere'"),
    (_args("anchors", "check", "--repo", "{dir}/code", "--", "-x..HEAD"), "bad range '-x..HEAD'"),
    # excise: an empty or multi-line reason or name, an unknown option
    (_args("excise", "--reason", ""), "--reason"),
    (_args("excise", "--reason", "why\nnot"), "--reason"),
    (_args("excise", "--by", "   "), "--by"),
    (_args("excise", "--dryrun"), "--dry-run"),
    # anchors check a page at a time: a bad limit, a cursor it never handed out (before the range is read)
    (_args("anchors", "check", "HEAD~1..HEAD", "--repo", "{dir}/code", "--limit", "0"), "limit"),
    (_args("anchors", "check", "HEAD..HEAD", "--repo", "{dir}/code", "--cursor", "nope"),
     "not a cursor anchors check handed out"),
]


@pytest.fixture(scope="module")
def corpus_store(tmp_path_factory: pytest.TempPathFactory, _store_template: Path) -> tuple[Path, Path, str]:
    """A store with an intake record waiting in the Binder, a fact, a SOIL record; and a folder of inputs."""
    root = tmp_path_factory.mktemp("corpus") / "store"
    shutil.copytree(_store_template, root, symlinks=True)
    ok = [memstack("intake", "write", "--content", "maybe", "--created-at", "2026-01-02T00:00:00Z", cwd=root),
          memstack("capture", *FACT, "--valid-from", "2026-01-01T00:00:00Z", "--recorded-at",
                   "2026-01-01T00:00:00Z", cwd=root),
          memstack("soil", "put", "notes", "kept", "--value", "1", cwd=root)]
    assert all(r.returncode == 0 for r in ok), [r.stderr for r in ok]
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "memory")
    assert memstack("promote", "--now-ts", NOW, cwd=root).returncode == 0
    waiting = items(json.loads(memstack("binder", "list", "--json", cwd=root).stdout))
    inputs = tmp_path_factory.mktemp("inputs")
    (inputs / "incomplete.md").write_text("---\nagent: alice\n---\n# a handoff with no sections\n")
    (inputs / "binary.md").write_bytes(b"\xff\xfe\x00bad")
    (inputs / "deep.md").write_text("---\nagent: " + "[" * 5000 + "]" * 5000 + "\n---\n# Summary\n")
    for name, text in MEMORY_TESTS.items():
        (inputs / name).write_text(text)
    code = inputs / "code"
    code.mkdir()
    (code / "a.py").write_text("a = 1\nb = 2\nc = 3\n")
    (code / "bin.dat").write_bytes(b"\x00\x01binary")
    (code / "link.py").symlink_to("a.py")
    git(code, "init", "-q")
    git(code, "add", "-A")
    git(code, "commit", "-q", "-m", "code")
    git(inputs, "init", "-q", "clone")
    git(inputs / "clone", "remote", "add", "origin", str(root))
    git(inputs / "clone", "fetch", "-q", "origin")
    return root, inputs, waiting[0]["id"]


@pytest.mark.parametrize(("args", "names"), CASES, ids=[" ".join(a)[:60] for a, _ in CASES])
def test_bad_input_is_exit_2_one_line_naming_it_and_nothing_written(
        corpus_store: tuple[Path, Path, str], args: tuple[str, ...], names: str) -> None:
    root, inputs, waiting = corpus_store
    filled = [a.format(dir=inputs, bin=inputs / "binary.md", id=waiting, store=root) for a in args]
    status, files = git(root, "status", "--porcelain").stdout, tree_snapshot(root)
    result = memstack(*filled, cwd=root, input="")
    assert result.returncode == 2, (result.returncode, result.stdout, result.stderr)
    assert "Traceback" not in result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("memstack"), result.stderr
    assert names.format(dir=inputs).lower() in lines[0].lower(), lines[0]
    assert result.stdout == ""
    assert git(root, "status", "--porcelain").stdout == status
    assert tree_snapshot(root) == files
    assert not any((root / ".memstack" / "tmp").iterdir()) if (root / ".memstack" / "tmp").exists() else True
    assert not (inputs / "new").exists()


def test_the_corpus_covers_every_verb() -> None:
    verbs = {args[0] if args[0] != "--store" else args[2] for args, _ in CASES}
    assert verbs >= {"intake", "soil", "handoff", "boot", "nest", "fact", "recall", "capture", "promote", "binder",
                     "check", "review", "merge-driver", "textconv", "identity", "init"}
    assert len(CASES) >= 60


# Malformed memory tests files (`memstack test FILE`), by name.
_DEPLOY = "- name: deploy day\n  search: deploys\n  expect: [monday]\n"
MEMORY_TESTS = {
    "mt-not-yaml.yaml": "- name: deploy day\n  search: deploys\n  expect: [monday\n",
    "mt-not-a-list.yaml": "name: deploy day\nsearch: deploys\nexpect: [monday]\n",
    "mt-unknown-key.yaml": _DEPLOY + "- name: deploy day\n  search: deploys\n  expected: [monday]\n",
    "mt-no-query.yaml": "- name: deploy day\n  expect: [monday]\n",
    "mt-two-queries.yaml": "- name: both\n  search: deploys\n  recall: {subject: deploys}\n  expect: [monday]\n",
    "mt-bad-time.yaml": "- name: when\n  search: deploys\n  valid_at: tomorrow\n  expect: [monday]\n",
    "mt-k-zero.yaml": "- name: top\n  search: deploys\n  k: 0\n  expect: [monday]\n",
    "mt-k-huge.yaml": "- name: top\n  search: deploys\n  k: 1001\n  expect: [monday]\n",
    "mt-expect-text.yaml": "- name: deploy day\n  search: deploys\n  expect: monday\n",
    "mt-nothing-expected.yaml": "- name: deploy day\n  search: deploys\n",
    "mt-same-name.yaml": _DEPLOY + _DEPLOY,
    "mt-empty-expect.yaml": "- name: deploy day\n  search: deploys\n  expect: []\n",
    "mt-recall-as-of.yaml": "- name: then\n  recall: {subject: deploys}\n  as_of: now\n  expect: [monday]\n",
    "mt-deep.yaml": "- name: deep\n  search: deploys\n  expect: " + "[" * 5000 + "]" * 5000 + "\n",  # recursion
}
