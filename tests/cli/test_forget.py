"""`memstack forget`: a tombstone appended, checked by the hooks like the other logs, holding none of the
forgotten content; the facts it takes with it closed."""

import json
from pathlib import Path

import pytest

from helpers import HANDOFF, copied_to, git, made_from, memstack, ok, tree_snapshot

DAY = "2026-03-02T10:00:00Z"
SECRET_TEXT = "Ada's phone is 555-0199, call after six"


def commit(store: Path, message: str = "memory") -> None:
    git(store, "add", "-A")
    done = git(store, "commit", "-q", "-m", message, check=False)
    assert done.returncode == 0, done.stdout + done.stderr


Promoted = tuple[Path, tuple[str, str]]  # a store after `promoted_record`, and what it returned


def promoted_record(store: Path) -> tuple[str, str]:
    """An intake record promoted to a knowledge fact: (its id, the fact's id)."""
    record = ok(store, "intake", "write", "--content", SECRET_TEXT, "--subject", "ada", "--predicate", "prefers",
                "--object", "phone 555-0199", "--tier", "verified", "--confidence", "0.9",
                "--created-at", DAY)["record"]
    commit(store)
    assert memstack("promote", "--now-ts", DAY, cwd=store).returncode == 0
    [fact] = ok(store, "fact", "history", "--subject", "ada")["items"]
    return record["id"], fact["id"]


@pytest.fixture(scope="module")
def _promoted(_store_template: Path, tmp_path_factory: pytest.TempPathFactory) -> Promoted:
    return made_from(_store_template, tmp_path_factory, "promoted", promoted_record)


@pytest.fixture
def promoted(store: Path, _promoted: Promoted) -> Promoted:
    """`store` after `promoted_record` (made once for the module, copied in), and its (record id, fact id)."""
    made, value = _promoted
    return copied_to(made, store), value

def tombstones(store: Path) -> list[dict]:
    return [json.loads(line) for path in sorted((store / "kb/forgotten").rglob("*.jsonl"))
            for line in path.read_text().splitlines()]


def test_forget_appends_a_tombstone_closes_the_promoted_fact_and_commits_through_the_hooks(promoted: Promoted) -> None:
    store, (record_id, fact_id) = promoted
    done = ok(store, "forget", record_id, "--reason", "a person's phone number", "--by", "Grace Hopper")
    assert done["closed"] == [fact_id]
    tombstone, of_fact = done["tombstones"]  # the fact promoted from the record holds its content: forgotten too
    assert tombstone == {"forgets": record_id, "kind": "intake", "reason": "a person's phone number",
                         "by": "Grace Hopper", "agent": "alice", "forgotten_at": tombstone["forgotten_at"]}
    assert of_fact == {**tombstone, "forgets": fact_id, "kind": "fact"}
    assert done["path"].startswith("kb/forgotten/alice/") and done["path"].endswith(".jsonl")
    assert tombstones(store) == [tombstone, of_fact]
    text = (store / done["path"]).read_text()
    assert "555" not in text and "phone is" not in text  # the tombstone holds none of the content
    [closed] = [f for f in ok(store, "fact", "get-valid-at", "--ts", DAY)["items"] if f["id"] == fact_id]
    assert closed["id"] == fact_id and closed["valid_to"] is not None and closed["superseded_by"] is None
    views = [p for p in (store / "kb").glob("*.json")] + [store / "willow.md"]
    assert done["rebuilt"] and not [p for p in views if "555-0199" in p.read_text()]  # the closed fact left them
    assert memstack("rebuild", "--check", cwd=store).returncode == 0
    commit(store, "forget a phone number")  # the pre-commit hook checks the tombstone and the closing
    assert memstack("check", "--range", "HEAD~1..HEAD", cwd=store).returncode == 0


def test_forget_takes_facts_soil_records_and_handoffs(store: Path) -> None:
    fact = ok(store, "capture", "--subject", "db", "--predicate", "decided", "--object", "postgres",
              "--valid-from", DAY, "--recorded-at", DAY)
    fact_id = fact[0]["id"]
    ok(store, "soil", "put", "notes", "contact", "--value", '{"email": "ada@example.com"}')
    sealed = memstack("handoff", "write", "--json", cwd=store, input=HANDOFF)
    assert sealed.returncode == 0, sealed.stderr
    handoff = json.loads(sealed.stdout)["path"]
    assert memstack("boot", "rebuild", cwd=store).returncode == 0
    assert "finish the lexer" in (store / "willow.md").read_text()
    commit(store)
    done = ok(store, "forget", fact_id, "notes/contact", handoff, "--reason", "erasure request")
    assert [(t["forgets"], t["kind"]) for t in done["tombstones"]] == [
        (fact_id, "fact"), ("notes/contact", "soil"), (handoff, "handoff")]
    assert done["closed"] == [fact_id]
    assert "finish the lexer" not in (store / "willow.md").read_text()  # a forgotten handoff boots no one
    booted = memstack("boot", "show", "--json", cwd=store)  # alice's only handoff: her anchor is gone with it
    assert booted.returncode == 2 and "no boot anchor" in booted.stderr and "finish the lexer" not in booted.stdout
    commit(store, "forget three records")  # the hook's rebuild of the boot files agrees (I4)
    gone = "[forgotten: erasure request]"
    soil = ok(store, "soil", "get", "notes", "contact")
    assert soil == {**soil, "collection": "notes", "key": "contact", "value": gone}
    assert ok(store, "soil", "list", "notes")["items"] == [soil]
    shown = ok(store, "handoff", "show")
    assert shown == {**shown, "path": handoff, "text": gone, "open_threads": [], "capabilities": []}
    for args in (["soil", "get", "notes", "contact"], ["soil", "list", "notes"], ["handoff", "show"]):
        printed = memstack(*args, cwd=store).stdout
        assert "ada@example.com" not in printed and "finish the lexer" not in printed, args


def test_forgetting_a_promoted_fact_says_its_intake_record_keeps_the_same_words(promoted: Promoted) -> None:
    """The fact's intake record holds what the fact said: still shown (intake list, search, the replica) and left
    in history by excise. `forget FACT` says so, once on stderr and in --json, and how to forget the record too."""
    store, (record_id, fact_id) = promoted
    told = memstack("forget", fact_id, "--reason", "a phone number", cwd=store)
    assert told.returncode == 0, told.stderr
    [line] = told.stderr.splitlines()
    assert f"fact {fact_id} was promoted from intake record {record_id}" in line and "stays readable" in line
    assert f"`memstack forget {record_id} --reason TEXT`" in line and "555" not in line
    git(store, "checkout", "-q", "--", ".")
    git(store, "clean", "-qfd", "--", "kb")
    done = memstack("forget", fact_id, "--reason", "a phone number", "--json", cwd=store)
    assert json.loads(done.stdout)["intake_kept"] == [{"fact": fact_id, "intake": record_id}]
    assert len(done.stderr.splitlines()) == 1 and f"intake record {record_id}," in done.stderr
    assert SECRET_TEXT in memstack("intake", "list", cwd=store).stdout  # what it warned of: the record as it was
    again = memstack("forget", record_id, "--reason", "a phone number", "--json", cwd=store)  # as it advised
    assert again.returncode == 0 and json.loads(again.stdout)["intake_kept"] == [] and again.stderr == ""
    assert SECRET_TEXT not in memstack("intake", "list", cwd=store).stdout
    captured = ok(store, "capture", "--subject", "db", "--predicate", "decided", "--object", "postgres")[0]
    alone = memstack("forget", captured["id"], "--reason", "not needed", "--json", cwd=store)  # no intake record
    assert alone.returncode == 0 and json.loads(alone.stdout)["intake_kept"] == [] and alone.stderr == ""


def test_bad_input_writes_nothing(promoted: Promoted) -> None:
    store, (record_id, _) = promoted
    before = tree_snapshot(store)
    for args, names in (
        (["forget", "0190f3a1b2c3d4e5f6a7b8c9d0e1f2a3", "--reason", "x"], "no record of the store has this id"),
        (["forget", record_id, "--reason", ""], "--reason"),
        (["forget", record_id, "--reason", "tab\there"], "control character"),
        (["forget", record_id, "--reason", "x", "--by", "a\x1b[2Jb"], "control character"),
        (["forget", record_id, "nope", "--reason", "x"], "'nope'"),  # one bad id: none is forgotten
        # a reason that repeats the content (here the promoted fact's object) the hooks would refuse
        (["forget", record_id, "--reason", "phone 555-0199 of ada"], "it repeats the content of the record it"
                                                                     " forgets ("),
    ):
        result = memstack(*args, cwd=store)
        assert result.returncode == 2 and names in result.stderr, result.stderr
        assert len(result.stderr.strip().splitlines()) == 1
        assert tree_snapshot(store) == before
    ok(store, "forget", record_id, "--reason", "a phone number")
    result = memstack("forget", record_id, "--reason", "again", cwd=store)
    assert result.returncode == 2 and "already forgotten (a phone number)" in result.stderr


def test_the_hooks_refuse_a_tombstone_edited_removed_made_up_or_repeating_the_content(promoted: Promoted) -> None:
    store, (record_id, _) = promoted
    done = ok(store, "forget", record_id, "--reason", "a phone number")
    commit(store)
    path = store / done["path"]
    line = json.loads(path.read_text().splitlines()[0])

    def refused(text: str | None, rule: str, words: str) -> None:
        if text is None:
            path.unlink()
        else:
            path.write_text(text)
        git(store, "add", "-A")
        result = git(store, "commit", "-q", "-m", "tamper", check=False)
        assert result.returncode != 0 and rule in result.stdout + result.stderr, result.stdout + result.stderr
        assert words in result.stdout + result.stderr
        git(store, "reset", "-q", "--hard")

    refused(json.dumps({**line, "reason": "nothing to see"}) + "\n" + path.read_text().split("\n", 1)[1], "I1",
            "edited or deleted")
    refused(None, "I1", "deleted")
    made_up = {**line, "forgets": "0190f3a1b2c3d4e5f6a7b8c9d0e1f2a3"}
    refused(path.read_text() + json.dumps(made_up) + "\n", "I5", "which no record of this state has")
    another = ok(store, "intake", "write", "--content", "the door code is 4711-2208", "--created-at", DAY)
    commit(store)
    repeating = {**line, "forgets": another["record"]["id"], "reason": "it said: the door code is 4711-2208"}
    refused(path.read_text() + json.dumps(repeating) + "\n", "I5", "repeats the forgotten record's content")
    no_reason = {k: v for k, v in {**line, "forgets": another["record"]["id"]}.items() if k != "reason"}
    refused(path.read_text() + json.dumps(no_reason) + "\n", "I5", "reason")


def _leaks(store: Path, *texts: str) -> list[str]:
    """The local index files (search, facts) that hold any of `texts`."""
    return [str(p) for p in (store / ".memstack").glob("*.sqlite3*")
            if any(t.encode() in p.read_bytes() for t in texts)]


def test_a_forgotten_record_reads_as_forgotten_on_every_read_verb_and_in_the_search_index(promoted: Promoted) -> None:
    store, (record_id, fact_id) = promoted
    assert memstack("search", "phone", cwd=store).returncode == 0  # the index holds it before the tombstone
    assert _leaks(store, "555-0199")
    ok(store, "forget", record_id, "--reason", "a phone number")
    commit(store, "forget")
    gone = "[forgotten: a phone number]"
    [record] = ok(store, "intake", "list")["items"]
    assert record == {**record, "id": record_id, "agent": "alice", "created_at": "2026-03-02T10:00:00.000Z",
                      "content": gone, "subject": gone, "object": gone, "keywords": [], "tier": "verified"}
    assert ok(store, "intake", "list", "--pending")["items"] == []  # promotion skips it: it waits for nothing
    listed = memstack("intake", "list", cwd=store).stdout
    assert gone in listed and "555" not in listed
    for args in (["fact", "get-valid-at", "--ts", DAY], ["fact", "get-valid-at", "--ts", DAY, "--limit", "5"],
                 ["fact", "get-valid-at", "--ts", "now", "--as-of", DAY]):
        [fact] = ok(store, *args)["items"]
        assert fact == {**fact, "id": fact_id, "subject": gone, "predicate": gone, "object": gone,
                        "agent": "alice", "valid_from": fact["valid_from"]}, args
        assert "555" not in memstack(*args, cwd=store).stdout
    for args in (["fact", "history", "--subject", "ada"], ["recall", "--subject", "ada", "--now-ts", DAY],
                 ["fact", "get-valid-at", "--ts", DAY, "--subject", "ada"]):
        assert ok(store, *args)["items"] == [], args  # its subject is gone too: nothing is found by it
    hits = ok(store, "search", "phone")["hits"]
    assert sorted(h["id"] for h in hits) == sorted([record_id, fact_id])
    assert all(h["snippet"].replace("**", "") == gone and h["title"] == gone for h in hits)
    assert _leaks(store, "555-0199", "after six") == []  # no byte of it left in the index files
    reviewed = memstack("review", "HEAD~3..HEAD", "--format", "json", cwd=store)  # the intake, promotion, forget
    assert reviewed.returncode == 0 and gone in reviewed.stdout and "555" not in reviewed.stdout, reviewed.stderr
    exported = memstack("export", "jsonl", cwd=store)
    assert exported.returncode == 0 and "555" not in exported.stdout and gone in exported.stdout, exported.stderr


def test_promotion_skips_a_forgotten_intake_record(store: Path) -> None:
    record = ok(store, "intake", "write", "--content", SECRET_TEXT, "--tier", "verified", "--confidence", "0.9",
                "--subject", "ada", "--predicate", "prefers", "--object", "phone", "--created-at", DAY)["record"]
    ok(store, "forget", record["id"], "--reason", "a phone number")
    commit(store)
    assert memstack("promote", "--now-ts", DAY, cwd=store).returncode == 0
    assert ok(store, "fact", "history", "--subject", "ada")["items"] == []
    assert not any(record["id"] in p.read_text() for p in (store / "kb").rglob("promotions*") if p.is_file())


def test_forget_then_commit_leaves_the_content_in_no_derived_file_at_head(promoted: Promoted) -> None:
    """The record's content stays only in the source lines (intake, facts, the handoff): every derived file
    that showed it, the boot anchor of an agent whose only handoff is forgotten included, is rebuilt or
    deleted, and the hooks accept the commit."""
    store, (record_id, _) = promoted
    sealed = memstack("handoff", "write", "--json", cwd=store, input=HANDOFF)
    assert sealed.returncode == 0, sealed.stderr
    handoff = json.loads(sealed.stdout)["path"]
    assert memstack("boot", "rebuild", cwd=store).returncode == 0
    commit(store)
    shown = {"555-0199", "finish the lexer"}
    for text in shown:
        assert "session_anchor_alice.json" in git(store, "grep", "-l", text, "HEAD").stdout
    done = ok(store, "forget", record_id, handoff, "--reason", "erasure request")
    assert "session_anchor_alice.json" in done["rebuilt"]
    commit(store, "forget a phone number and a handoff")  # the hooks accept it: the anchor's deletion included
    assert git(store, "status", "--porcelain").stdout == ""
    sources = ("intake/", "kb/facts/", "handoffs/")
    for text in shown:
        found = git(store, "grep", "-l", text, "HEAD", check=False).stdout.split()
        assert found and all(path.removeprefix("HEAD:").startswith(sources) for path in found), found
    assert memstack("rebuild", "--check", cwd=store).returncode == 0
    booted = memstack("boot", "show", "--json", cwd=store)
    assert booted.returncode != 0 and "finish the lexer" not in booted.stdout + booted.stderr


def test_a_forgotten_record_waiting_for_the_binder_leaves_its_queue_shard(store: Path) -> None:
    """An intake record routed to the Binder is copied into the queue view: forget rebuilds that shard without
    it (here: deletes it, the record was its only entry), and the hooks accept the commit."""
    record = ok(store, "intake", "write", "--content", SECRET_TEXT, "--subject", "ada", "--predicate", "prefers",
                "--object", "phone 555-0199", "--tier", "observed", "--confidence", "0.5",
                "--created-at", DAY)["record"]
    commit(store)
    assert memstack("promote", "--now-ts", DAY, cwd=store).returncode == 0
    queue = git(store, "grep", "-l", "555-0199", "HEAD", "--", "kb/binder_queue").stdout.split()
    assert queue, "the record should wait in the Binder queue view"
    done = ok(store, "forget", record["id"], "--reason", "a person's phone number")
    assert [p.removeprefix("HEAD:") for p in queue] == done["rebuilt"]
    commit(store, "forget a phone number")
    found = git(store, "grep", "-l", "555-0199", "HEAD", check=False).stdout.split()
    assert found == [f"HEAD:intake/alice/{DAY[:10]}.jsonl"], found
    assert memstack("rebuild", "--check", cwd=store).returncode == 0


def test_status_counts_no_forgotten_record_as_pending_or_waiting(store: Path) -> None:
    """A forgotten intake record is passed by by promote and leaves the Binder queue: `status` counts it
    neither as pending intake nor as waiting in the Binder, as `intake list --pending` and `binder list` say."""
    waiting = [ok(store, "intake", "write", "--content", f"maybe later {n}", "--created-at", DAY)["record"]
               for n in range(2)]
    commit(store)
    assert memstack("promote", "--now-ts", DAY, cwd=store).returncode == 0
    pending = [ok(store, "intake", "write", "--content", f"a draft {n}", "--created-at", DAY)["record"]
               for n in range(2)]
    commit(store)
    before = ok(store, "status")
    assert (before["pending_total"], before["binder_waiting"]["records"]) == (2, 2)
    ok(store, "forget", waiting[0]["id"], pending[0]["id"], "--reason", "not needed")
    commit(store, "forget")
    after = ok(store, "status")
    assert (after["pending_total"], after["binder_waiting"]["records"]) == (1, 1)
    assert [r["id"] for r in ok(store, "intake", "list", "--pending")["items"]] == [pending[1]["id"]]
    assert [r["id"] for r in ok(store, "binder", "list")["items"]] == [waiting[1]["id"]]


def test_the_search_index_follows_a_forget_undone_and_a_forget_with_another_reason(store: Path) -> None:
    """The index scrubs a forgotten record's text; when the tombstone is gone again (a forget undone before its
    commit) the record is found again, and a new forget shows its own reason, not the first one's."""
    record = ok(store, "intake", "write", "--content", "the plan is zebra-7781", "--created-at", DAY)["record"]
    ok(store, "intake", "write", "--content", "zebra-7781 is the plan's name", "--created-at", DAY)
    commit(store)
    assert len(ok(store, "search", "zebra-7781")["hits"]) == 2  # indexed before the forget

    def undo() -> None:
        git(store, "checkout", "-q", "--", ".")
        git(store, "clean", "-qfd", "--", "kb")

    ok(store, "forget", record["id"], "--reason", "first reason")
    assert [h["id"] for h in ok(store, "search", "zebra-7781")["hits"]] not in ([], [record["id"]])
    assert record["id"] not in json.dumps(ok(store, "search", "zebra-7781")["hits"])
    undo()
    hits = ok(store, "search", "zebra-7781")["hits"]
    assert record["id"] in json.dumps(hits) and len(hits) == 2, hits
    ok(store, "forget", record["id"], "--reason", "second thoughts")
    undo()
    ok(store, "forget", record["id"], "--reason", "a third why")
    shown = json.dumps(ok(store, "search", "why")["hits"])
    assert "a third why" in shown and record["id"] in shown
    assert ok(store, "search", "thoughts")["hits"] == [] and ok(store, "search", "first")["hits"] == []


def test_review_of_a_forget_shows_who_forgot_what_and_why_without_the_content(promoted: Promoted) -> None:
    store, (record_id, fact_id) = promoted
    ok(store, "forget", record_id, "--reason", "an erasure request", "--by", "Grace Hopper")
    commit(store, "forget a phone number")
    shown = memstack("review", "HEAD~1..HEAD", cwd=store)
    assert shown.returncode == 0, shown.stderr
    assert "2 records forgotten" in shown.stdout and "### Forgotten (2)" in shown.stdout
    assert f"- intake `{record_id}`: an erasure request — by Grace Hopper at " in shown.stdout
    assert f"- fact `{fact_id}`: an erasure request — by Grace Hopper at " in shown.stdout
    assert "555" not in shown.stdout
    document = ok(store, "review", "HEAD~1..HEAD")
    assert document["counts"]["forgotten"] == 2
    assert sorted(t["forgets"] for t in document["forgotten"]) == sorted([record_id, fact_id])
