"""Promotion (the norn-pass): routing, supersession, views, commits, the Binder, recovery."""

import json
import shutil
import sys
from pathlib import Path

import pytest

from helpers import git, items, ledger_files, ledger_lines, memstack, view_entries, view_files
from memstack.base.times import parse_ts
from memstack.intake import log as intake
from memstack.kb import factstore, routing
from memstack.kb.routing import Rules
from memstack.workflows import promote
from memstack.workflows.promote import gather, planner, supersede

NOW = "2026-03-01T00:00:00Z"


def record(**fields: object) -> dict:
    base = {"agent": "alice", "content": "c", "created_at": "2026-01-01T00:00:00Z"}
    if fields.get("tier") == "ratified":  # a record written before writers were refused that tier: routed all the same
        return {**intake.make_record(**{**base, **fields, "tier": "verified"}), "tier": "ratified"}  # type: ignore[arg-type]
    return intake.make_record(**{**base, **fields})  # type: ignore[arg-type]


@pytest.mark.parametrize(("fields", "expected"), [
    ({"tier": "verified", "confidence": 0.80}, "knowledge"),
    ({"tier": "verified", "confidence": 0.79}, "binder"),
    ({"tier": "ratified", "confidence": 0.80}, "knowledge"),
    ({"tier": "observed", "confidence": 1.0}, "binder"),
    ({"source": "https://example.org/a", "relevance_score": 0.5}, "jeles_atoms"),
    ({"source": "https://example.org/a", "relevance_score": 0.49}, "binder"),
    ({"tier": "fetched", "source": "a book", "relevance_score": 0.5}, "jeles_atoms"),
    ({"source": "a book", "relevance_score": 0.9}, "binder"),  # not an external citation
    ({"source": "https://example.org/a"}, "binder"),  # a citation without relevance
    ({"tags": ["synthesis"], "agent": "opus"}, "opus_atoms"),
    ({"tags": ["synthesis"], "agent": "alice"}, "binder"),  # not an opus agent
    ({"tags": ["synthesis"], "agent": "opus", "tier": "verified", "confidence": 0.9}, "knowledge"),  # rule order
])
def test_routing_rules_and_their_edges(fields: dict, expected: str) -> None:
    rules = Rules(opus_agents=frozenset({"opus"}))
    assert routing.by_rules(record(**fields), rules) == expected


def write(store: Path, agent: str = "alice", **fields: object) -> dict:
    rec = record(agent=agent, **fields)
    intake.write(store, rec)
    return rec


def promote_cli(store: Path, *extra: str) -> dict:
    result = memstack("promote", "--now-ts", NOW, "--json", *extra, cwd=store)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


def test_promotion_routes_writes_facts_views_and_one_commit(store: Path) -> None:
    known = write(store, tier="verified", confidence=0.9, subject="build", predicate="uses", object="make")
    cited = write(store, source="https://ninja-build.org", relevance_score=0.7, title="ninja is fast",
                  created_at="2026-01-02T00:00:00Z")
    waiting = write(store, content="maybe tabs?", created_at="2026-01-03T00:00:00Z")
    head = git(store, "rev-parse", "HEAD").stdout
    result = promote_cli(store)
    assert result["routed"] == {"knowledge": 1, "jeles_atoms": 1, "binder": 1} and result["commit"]
    assert git(store, "rev-parse", "HEAD~1").stdout == head  # exactly one commit
    message = git(store, "log", "-1", "--format=%B").stdout
    assert message.startswith("memstack promote: 3 records routed")
    assert "Memstack-Knowledge: 1" in message and "Memstack-Binder: 1" in message
    trailers = git(store, "log", "-1", "--format=%(trailers:key=Memstack-Jeles-Atoms,valueonly)").stdout.strip()
    assert trailers == "1"
    assert git(store, "status", "--porcelain").stdout == ""

    knowledge = view_entries(store, "knowledge")
    assert [(f["subject"], f["predicate"], f["object"], f["intake_id"], f["tier"]) for f in knowledge] == \
        [("build", "uses", "make", known["id"], "verified")]
    jeles = view_entries(store, "jeles_atoms")
    assert [(f["subject"], f["predicate"], f["source"]) for f in jeles] == \
        [("ninja is fast", "noted", "https://ninja-build.org")]
    queue = view_entries(store, "binder_queue")
    assert queue == [waiting]
    ledger = ledger_lines(store)
    assert [(x["intake_id"], x["sub_tier"], x["via"]) for x in ledger] == \
        [(known["id"], "knowledge", "rules"), (cited["id"], "jeles_atoms", "rules"), (waiting["id"], "binder", "rules")]
    assert items(json.loads(memstack("intake", "list", "--pending", "--json", cwd=store).stdout)) == []
    first = git(store, "rev-list", "--max-parents=0", "HEAD").stdout.strip()
    assert memstack("check", "--range", f"{first}..HEAD", cwd=store).returncode == 0


def test_a_second_run_changes_nothing_and_says_so(store: Path) -> None:
    write(store, tier="verified", confidence=0.9)
    promote_cli(store)
    head = git(store, "rev-parse", "HEAD").stdout
    views = {p.name: p.read_bytes() for p in (store / "kb").glob("*.json")}
    again = memstack("promote", "--now-ts", NOW, cwd=store)
    assert again.returncode == 0 and again.stdout.strip() == "nothing to promote"
    assert git(store, "rev-parse", "HEAD").stdout == head
    assert {p.name: p.read_bytes() for p in (store / "kb").glob("*.json")} == views


def test_dry_run_shows_the_routing_and_writes_nothing(store: Path) -> None:
    rec = write(store, tier="verified", confidence=0.8)
    before = {p: p.read_bytes() for p in store.rglob("*") if p.is_file() and ".git" not in p.parts}
    result = promote_cli(store, "--dry-run")
    assert result["records"] == [{"intake_id": rec["id"], "agent": "alice", "sub_tier": "knowledge", "via": "rules"}]
    after = {p: p.read_bytes() for p in store.rglob("*") if p.is_file() and ".git" not in p.parts
             and ".memstack" not in p.parts}
    assert after == {p: d for p, d in before.items() if ".memstack" not in p.parts}


def test_a_contradicting_record_supersedes_the_valid_fact(store: Path) -> None:
    old = write(store, tier="verified", confidence=0.9, subject="deploy", predicate="decided", object="friday")
    promote_cli(store)
    new = write(store, tier="verified", confidence=0.9, subject="deploy", predicate="decided", object="monday",
                created_at="2026-02-01T00:00:00Z")
    result = promote_cli(store)
    assert result["superseded"] == 1
    history = items(json.loads(memstack("fact", "history", "--subject", "deploy", "--json", cwd=store).stdout))
    assert [(f["object"], f["valid_to"], f["superseded_by"]) for f in history] == [
        ("friday", 1_769_904_000_000, promote.fact_id_for(new["id"], 1_769_904_000_000)), ("monday", None, None)]
    assert history[0]["intake_id"] == old["id"]
    recalled = items(json.loads(memstack("recall", "--subject", "deploy", "--now-ts", NOW, "--json", cwd=store).stdout))
    assert [f["object"] for f in recalled] == ["monday"]
    knowledge = view_entries(store, "knowledge")
    assert [f["object"] for f in knowledge] == ["monday"]
    assert "Memstack-Superseded: 1" in git(store, "log", "-1", "--format=%B").stdout


def test_an_older_record_arrives_already_superseded_and_a_duplicate_adds_no_fact(store: Path) -> None:
    write(store, tier="verified", confidence=0.9, subject="db", predicate="chose", object="postgres",
          created_at="2026-02-01T00:00:00Z")
    promote_cli(store)
    late = write(store, tier="verified", confidence=0.9, subject="db", predicate="chose", object="sqlite",
                 created_at="2026-01-01T00:00:00Z")
    same = write(store, tier="verified", confidence=0.9, subject="db", predicate="chose", object="postgres",
                 created_at="2026-02-05T00:00:00Z")
    promote_cli(store)
    history = items(json.loads(memstack("fact", "history", "--subject", "db", "--json", cwd=store).stdout))
    assert [(f["object"], f["valid_to"]) for f in history] == [("sqlite", 1_769_904_000_000), ("postgres", None)]
    ledger = {x["intake_id"]: x for x in ledger_lines(store)}
    assert ledger[same["id"]]["fact_id"] == history[1]["id"]  # the duplicate points at the fact holding it
    assert ledger[late["id"]]["fact_id"] == history[0]["id"]


def test_two_stores_fed_the_same_records_have_byte_identical_views(store: Path, tmp_path: Path) -> None:
    twin = tmp_path / "twin"
    shutil.copytree(store, twin, symlinks=True)
    for n in range(12):
        write(store, tier=("verified", "observed", "fetched")[n % 3], confidence=0.5 + n / 30,
              subject=f"s{n % 4}", predicate="decided", object=f"v{n}", source="https://x.org" if n % 5 == 0 else "",
              relevance_score=0.6, created_at=f"2026-01-{n + 1:02d}T00:00:00Z")
    shutil.copytree(store / "intake", twin / "intake")
    promote_cli(store)
    promote_cli(twin)
    assert view_files(store) == view_files(twin) and len(view_files(store)) > 3
    assert (store / "willow.md").read_bytes() == (twin / "willow.md").read_bytes()
    assert ledger_files(store) == ledger_files(twin)


def test_a_hand_edited_view_is_caught_by_rebuild_check_and_the_hook(store: Path) -> None:
    write(store, tier="verified", confidence=0.9, subject="a", predicate="b", object="c")
    promote_cli(store)
    assert memstack("rebuild", "--check", cwd=store).returncode == 0
    [view] = (store / "kb/knowledge").glob("*/*.json")
    name = view.relative_to(store).as_posix()
    view.write_text(view.read_text().replace('"object":"c"', '"object":"hacked"'))
    checked = memstack("rebuild", "--check", cwd=store)
    assert checked.returncode == 1 and name in checked.stdout
    git(store, "add", "-A")
    refused = git(store, "commit", "-m", "edit a view", check=False)
    assert refused.returncode != 0 and f"{name}:" in refused.stderr and "I4" in refused.stderr
    assert memstack("rebuild", cwd=store).returncode == 0
    assert memstack("rebuild", "--check", cwd=store).returncode == 0


def set_classifier(store: Path, command: str) -> None:
    config = store / "memstack.yaml"
    config.write_text(config.read_text().replace("  classifier:\n", f"  classifier: '{command}'\n"))


@pytest.mark.parametrize(("script", "expected_tier", "expected_via"), [
    ("print('opus_atoms')", "opus_atoms", "classifier"),
    ("import sys; sys.exit(3)", "knowledge", "rules (classifier exited 3)"),
    ("print('the moon')", "knowledge", "rules (classifier answered 'the moon', not one of"),
])
def test_the_classifier_routes_or_falls_back_to_the_rules(store: Path, tmp_path: Path, script: str,
                                                          expected_tier: str, expected_via: str) -> None:
    program = tmp_path / "classify.py"
    program.write_text("import json, sys\nrecord = json.load(sys.stdin)\nassert record['content']\n" + script + "\n")
    set_classifier(store, f"{sys.executable} {program}")
    rec = write(store, tier="verified", confidence=0.9)
    promote_cli(store)
    [line] = ledger_lines(store)
    assert line["intake_id"] == rec["id"] and line["sub_tier"] == expected_tier
    assert line["via"].startswith(expected_via)


def test_binder_ratify_makes_knowledge_at_the_next_promotion_and_reject_never_routes(store: Path) -> None:
    keep = write(store, content="use tabs", title="indent")
    drop = write(store, content="use emacs", title="editor", created_at="2026-01-02T00:00:00Z")
    promote_cli(store)
    waiting = items(json.loads(memstack("binder", "list", "--json", cwd=store).stdout))
    assert [r["id"] for r in waiting] == [keep["id"], drop["id"]]
    assert memstack("binder", "ratify", keep["id"], "--by", "ada", cwd=store).returncode == 0
    assert memstack("binder", "reject", drop["id"], "--by", "ada", cwd=store).returncode == 0
    twice = memstack("binder", "reject", drop["id"], cwd=store)
    assert twice.returncode == 2 and "already rejected by ada" in twice.stderr
    unknown = memstack("binder", "ratify", "nosuchrecord1", cwd=store)
    assert unknown.returncode == 2 and "not waiting" in unknown.stderr
    git(store, "add", "-A")
    git(store, "commit", "-q", "-m", "binder decisions")
    result = promote_cli(store)
    assert result["ratified"] == 1
    knowledge = view_entries(store, "knowledge")
    assert [(f["subject"], f["tier"], f["intake_id"]) for f in knowledge] == [("indent", "ratified", keep["id"])]
    assert items(json.loads(memstack("binder", "list", "--json", cwd=store).stdout)) == []
    assert view_entries(store, "binder_queue") == []
    assert promote_cli(store)["ratified"] == 0  # never again
    decisions = [json.loads(x) for x in (store / "kb/binder.jsonl").read_text().splitlines()]
    assert [(d["intake_id"], d["decision"], d["by"]) for d in decisions] == \
        [(keep["id"], "ratify", "ada"), (drop["id"], "reject", "ada")]


def _feed(store: Path) -> None:
    for n in range(6):
        write(store, tier="verified", confidence=0.9, subject="svc", predicate="decided", object=f"v{n}",
              created_at=f"2026-01-{n + 1:02d}T00:00:00Z")
    write(store, content="unsure", created_at="2026-01-09T00:00:00Z")


def _state(store: Path) -> dict[str, bytes]:
    return {str(p.relative_to(store)): p.read_bytes() for p in sorted(store.rglob("*"))
            if p.is_file() and p.parts[len(store.parts)] in ("kb", "intake") or p.name == "willow.md"}


def test_an_interrupted_promotion_is_finished_by_the_next_run(store: Path, tmp_path: Path) -> None:
    _feed(store)
    twins = {name: tmp_path / name for name in ("whole", "no_commit", "facts_only")}
    for twin in twins.values():
        shutil.copytree(store, twin, symlinks=True)
    promote_cli(twins["whole"])
    # Killed after writing every file, before the commit.
    promote_cli(twins["no_commit"], "--no-commit")
    assert memstack("check", cwd=twins["no_commit"]).returncode == 0
    # Killed after appending the facts, before the closings, the ledger and the views.
    stopped = twins["facts_only"]
    made = promote.plan(stopped)["made"]
    decided = supersede.supersede(stopped, made)
    for batch in supersede.facts_to_append(made, decided):
        factstore.append_many(stopped, batch, check_ids=False)
    for twin in (twins["no_commit"], stopped):
        result = promote_cli(twin)
        assert result["commit"], result
        assert git(twin, "status", "--porcelain").stdout == ""
        assert _state(twin) == _state(twins["whole"])
        first = git(twin, "rev-list", "--max-parents=0", "HEAD").stdout.strip()
        assert memstack("check", "--range", f"{first}..HEAD", cwd=twin).returncode == 0
        assert memstack("promote", "--now-ts", NOW, cwd=twin).stdout.strip() == "nothing to promote"


def test_a_record_arriving_after_an_interruption_closes_what_the_interrupted_run_left_open(
        store: Path, tmp_path: Path) -> None:
    write(store, tier="verified", confidence=0.9, subject="svc", predicate="decided", object="v0",
          created_at="2025-12-01T00:00:00Z")
    promote_cli(store)  # an earlier promotion: v0 is an open fact on disk
    write(store, tier="verified", confidence=0.9, subject="svc", predicate="decided", object="v1")
    whole = tmp_path / "whole"
    shutil.copytree(store, whole, symlinks=True)
    # Killed after appending v1, before closing v0 and writing the ledger.
    made = promote.plan(store)["made"]
    decided = supersede.supersede(store, made)
    assert decided.closings  # v0 was to be closed
    for batch in supersede.facts_to_append(made, decided):
        factstore.append_many(store, batch, check_ids=False)
    for root in (store, whole):  # then v2 arrives
        intake.write(root, intake.make_record(agent="alice", content="c", created_at="2026-01-02T00:00:00Z",
                                              tier="verified", confidence=0.9, subject="svc", predicate="decided",
                                              object="v2"))
    # The same record on both (the id is random): copy the newest intake file over.
    shutil.copy(store / "intake/alice/2026-01-02.jsonl", whole / "intake/alice/2026-01-02.jsonl")
    promote_cli(store)
    promote_cli(whole)
    assert _state(store) == _state(whole)
    history = items(json.loads(memstack("fact", "history", "--subject", "svc", "--json", cwd=store).stdout))
    assert [(f["object"], f["valid_to"] is None) for f in history] == [("v0", False), ("v1", False), ("v2", True)]


def test_an_empty_handoffs_folder_and_a_draft_in_it_do_not_block_a_promotion(store: Path) -> None:
    (store / "handoffs" / "alice").mkdir(parents=True)
    write(store, tier="verified", confidence=0.9)
    assert promote_cli(store)["commit"]
    (store / "handoffs/alice/draft.md").write_text("not sealed yet\n")
    write(store, tier="verified", confidence=0.9, content="again", created_at="2026-01-05T00:00:00Z")
    assert promote_cli(store)["commit"]
    assert git(store, "status", "--porcelain", "--untracked-files=all").stdout == "?? handoffs/alice/draft.md\n"


def test_two_notes_under_one_title_are_both_kept(store: Path, tmp_path: Path) -> None:
    for n, body in enumerate(("first notes", "second notes")):
        doc = tmp_path / f"notes{n}.md"
        doc.write_text(f"# Notes\n\n{body}\n")
        assert memstack("nest", str(doc), cwd=store).returncode == 0
    assert promote_cli(store)["superseded"] == 0
    knowledge = view_entries(store, "knowledge")
    assert sorted(f["object"].split("\n")[2] for f in knowledge) == ["first notes", "second notes"]


def test_a_ratified_record_takes_its_place_in_time_and_no_windows_overlap(store: Path) -> None:
    write(store, tier="verified", confidence=0.9, subject="k", predicate="chose", object="x",
          created_at="2026-01-10T00:00:00Z")
    waiting = write(store, tier="observed", confidence=0.5, subject="k", predicate="chose", object="r",
                    created_at="2026-01-15T00:00:00Z")
    promote_cli(store)
    assert memstack("binder", "ratify", waiting["id"], "--by", "ada", cwd=store).returncode == 0
    write(store, tier="verified", confidence=0.9, subject="k", predicate="chose", object="p",
          created_at="2026-01-20T00:00:00Z")
    promote_cli(store)
    for day in ("2026-01-12", "2026-01-17", "2026-01-25"):
        valid = items(json.loads(memstack("fact", "get-valid-at", "--ts", f"{day}T00:00:00Z", "--subject", "k",
                                    "--json", cwd=store).stdout))
        assert len(valid) == 1, (day, valid)
    history = items(json.loads(memstack("fact", "history", "--subject", "k", "--json", cwd=store).stdout))
    assert [f["object"] for f in history] == ["x", "r", "p"]


def test_a_bad_pending_record_is_named_and_nothing_is_written(store: Path) -> None:
    path = store / "intake/alice/2026-01-01.jsonl"
    path.parent.mkdir(parents=True)
    good = record()
    bad = {k: v for k, v in record(content="no tier").items() if k != "tier"}
    path.write_text(json.dumps(good) + "\n" + json.dumps(bad) + "\n")
    for extra in ((), ("--dry-run",)):
        result = memstack("promote", *extra, cwd=store)
        assert result.returncode == 2
        assert result.stderr.startswith("memstack: intake/alice/2026-01-01.jsonl:2: I5 invalid intake record")
        assert "Traceback" not in result.stderr
    assert ledger_files(store) == {}


def test_a_conflict_left_in_the_ledger_is_a_clear_error(store: Path) -> None:
    write(store, content="maybe tabs?")  # its queue shard reads the ledger
    shard = store / "kb/promotions/alice/2026-01-01.jsonl"
    shard.parent.mkdir(parents=True, exist_ok=True)
    shard.write_text("<<<<<<< ours\n")
    for args in (("rebuild",), ("rebuild", "--check")):
        result = memstack(*args, cwd=store)
        assert result.returncode == 2, args
        assert "kb/promotions/alice/2026-01-01.jsonl:1: I5" in result.stderr and "Traceback" not in result.stderr


def test_a_classifier_that_cannot_run_is_given_up_once(store: Path) -> None:
    set_classifier(store, "no-such-classifier-command")
    for n in range(3):
        write(store, tier="verified", confidence=0.9, content=f"r{n}", created_at=f"2026-01-0{n + 1}T00:00:00Z")
    result = memstack("promote", "--now-ts", NOW, cwd=store)
    assert result.returncode == 0, result.stderr
    assert result.stderr.count("classifier exited 127") == 1
    vias = [x["via"] for x in ledger_lines(store)]
    assert vias[0].startswith("rules (classifier exited 127") and vias[1:] == ["rules", "rules"]


def test_a_promotion_in_chunks_writes_what_one_pass_writes(store: Path, tmp_path: Path, monkeypatch) -> None:
    # A record that waits in the Binder, then is ratified: it becomes knowledge at its own time, in the
    # middle of the records below, where the object open for its subject is the same (a duplicate then;
    # decided after every other record, it would be a new fact closed at once).
    waiting = write(store, content="maybe", subject="svc", predicate="decided", object="a",
                    created_at="2026-01-01T00:30:30Z")
    promote_cli(store)
    assert memstack("binder", "ratify", waiting["id"], "--by", "ada", cwd=store).returncode == 0
    cycle = ["a", "b", "a", "c"]  # each record supersedes the last, or repeats what is open
    for minute in range(60):
        for agent, subject in (("alice", "svc"), ("bob", "db")):  # two records in each minute's millisecond
            write(store, agent=agent, tier="verified", confidence=0.9, subject=subject, predicate="decided",
                  object=cycle[minute % 4], created_at=f"2026-01-01T00:{minute:02d}:00Z")
    twin = tmp_path / "twin"
    shutil.copytree(store, twin, symlinks=True)
    assert promote_cli(twin)["commit"]  # one chunk: CHUNK is far above 121 records
    chunks: list[tuple[int, int]] = []
    route = planner.Planner.route

    def spy(self: planner.Planner, keys: list[int], ratified: list, shown: object = None) -> tuple:
        chunks.append((len(keys), len(ratified)))
        return route(self, keys, ratified, shown)

    monkeypatch.setattr(gather, "CHUNK", 5)
    monkeypatch.setattr(planner.Planner, "route", spy)
    result = promote.promote(store, parse_ts(NOW, "now"))
    assert result["commit"] and result["ratified"] == 1 and result["routed"] == {"knowledge": 120}
    assert len(chunks) == 20 and all(keys == 6 for keys, _ in chunks)  # a millisecond's two records never split
    assert [ratified for _, ratified in chunks].index(1) == 10  # the ratified record decided at its time
    assert _state(store) == _state(twin)
    assert git(store, "status", "--porcelain").stdout == ""


def test_an_intake_id_read_twice_is_promoted_once(store: Path) -> None:
    once = write(store, tier="verified", confidence=0.9, subject="svc", predicate="decided", object="v1")
    other = write(store, tier="verified", confidence=0.9, content="other", created_at="2026-01-02T00:00:00Z")
    path = store / "intake/alice/2026-01-01.jsonl"
    line = path.read_bytes()
    path.write_bytes(line + line)  # an uncommitted copy of the same record
    result = memstack("promote", "--now-ts", NOW, "--json", "--no-commit", cwd=store)
    assert result.returncode == 0, result.stderr
    assert f"intake/alice/2026-01-01.jsonl:2: intake id {once['id']} appears twice" in result.stderr
    assert json.loads(result.stdout)["routed"] == {"knowledge": 2}
    ledger = [x["intake_id"] for x in ledger_lines(store)]
    assert ledger == [once["id"], other["id"]]
