"""`memstack review`: a team can trust what it shows. Every Binder decision with the content it decided, what
the range decided never listed as waiting, one count of superseded facts shared with `promote`, and a
bounded report unless every item is asked for (`--full`)."""

import json
from pathlib import Path

from fact_support import fact, line
from helpers import git, ledger_lines, memstack
from mcp_support import ok as mcp_ok
from mcp_support import run, server

FACTS = "kb/facts/alice/2026-01.jsonl"


def ok(store: Path, *args: str) -> str:
    result = memstack(*args, cwd=store)
    assert result.returncode == 0, result.stderr
    return result.stdout


def commit(store: Path, message: str) -> str:
    git(store, "add", "-A")
    done = git(store, "commit", "-q", "-m", message, check=False)  # through the installed pre-commit hook
    assert done.returncode == 0, done.stdout + done.stderr
    return git(store, "rev-parse", "HEAD").stdout.strip()


def capture(store: Path, agent: str, obj: str, valid_from: str, recorded_at: str, *more: str) -> dict:
    return json.loads(ok(store, "capture", "--json", "--agent", agent, "--subject", "deploy-day", "--predicate",
                         "decided", "--object", obj, "--valid-from", valid_from, "--recorded-at", recorded_at,
                         *more))[0]


def review(store: Path, spec: str, *more: str) -> dict:
    return json.loads(ok(store, "review", spec, "--format", "json", *more))


def test_a_disagreement_decided_in_the_range_shows_the_fact_it_decided(store: Path) -> None:
    """Alice and Bob close one fact differently on two branches; the merge makes a disagreement; a person
    ratifies Bob's side. The decision names the fact, its subject, predicate and object, never `None`."""
    capture(store, "alice", "tuesday", "2026-11-01T00:00:00Z", "2026-11-01T09:00:00Z")
    commit(store, "deploy day")
    git(store, "checkout", "-q", "-b", "bob-side")
    friday = capture(store, "bob", "friday", "2026-11-13T00:00:00Z", "2026-11-10T11:00:00Z", "--contradicts")
    commit(store, "bob: friday")
    git(store, "checkout", "-q", "main")
    wednesday = capture(store, "alice", "wednesday", "2026-11-10T00:00:00Z", "2026-11-10T10:00:00Z",
                        "--contradicts")
    commit(store, "alice: wednesday")
    merged = git(store, "merge", "-q", "--no-edit", "bob-side", check=False)  # the memstack merge driver
    assert merged.returncode == 0, merged.stdout + merged.stderr
    base = git(store, "rev-parse", "HEAD").stdout.strip()
    ok(store, "binder", "ratify", friday["id"], "--by", "Pat (lead)", "--note", "Friday it is")
    commit(store, "Pat ratifies friday")

    [decision] = review(store, f"{base}..HEAD")["binder"]
    assert decision["fact_id"] == friday["id"] and "intake_id" not in decision
    assert (decision["decision"], decision["by"], decision["note"]) == ("ratify", "Pat (lead)", "Friday it is")
    assert {k: decision["fact"][k] for k in ("id", "subject", "predicate", "object", "agent")} == {
        "id": friday["id"], "subject": "deploy-day", "predicate": "decided", "object": "friday", "agent": "bob"}
    text = ok(store, "review", f"{base}..HEAD")
    [shown] = [x for x in text.splitlines() if x.startswith("- ratify by Pat (lead) at ")]
    assert f"fact `{friday['id']}` bob: deploy-day decided friday [2026-11-13T00:00:00.000Z, open)" in shown
    assert shown.endswith(" — Friday it is") and "None" not in shown
    assert wednesday["id"] not in shown


def test_a_record_decided_in_the_range_is_listed_as_decided_not_waiting(store: Path) -> None:
    """Records routed to the Binder and decided in one range are decisions, not waiting; each shows its
    content, also when it was recorded before the range (read from the store at the range's end)."""
    base = git(store, "rev-parse", "HEAD").stdout.strip()
    for n in range(3):
        ok(store, "intake", "write", "--content", f"maybe idea {n}", "--created-at", f"2026-01-01T10:00:0{n}Z")
    commit(store, "ideas")
    ok(store, "promote", "--now-ts", "2026-01-02T00:00:00Z")
    waiting = [x["intake_id"] for x in ledger_lines(store)]
    ok(store, "binder", "ratify", waiting[0], "--by", "Pat")
    promoted = commit(store, "Pat ratifies idea 0")

    report = review(store, f"{base}..HEAD")
    assert report["counts"]["binder_waiting"] == 2 and report["counts"]["binder"] == 1
    assert [w["intake_id"] for w in report["binder_waiting"]] == waiting[1:]
    assert [w["record"]["content"] for w in report["binder_waiting"]] == ["maybe idea 1", "maybe idea 2"]
    [decision] = report["binder"]
    assert decision["intake_id"] == waiting[0] and decision["record"]["content"] == "maybe idea 0"
    text = ok(store, "review", f"{base}..HEAD")
    assert "### Waiting in the Binder for a human (2 records)" in text
    assert f"`{waiting[0]}`" not in text.split("### Waiting")[1].split("###")[0]
    [shown] = [x for x in text.split("### Binder decisions")[1].splitlines() if x.startswith("- ratify by Pat at ")]
    assert shown.endswith(f": `{waiting[0]}` alice: maybe idea 0")

    ok(store, "binder", "reject", waiting[1], "--by", "Pat")
    commit(store, "Pat rejects idea 1")
    later = review(store, f"{promoted}..HEAD")  # the record was written and routed before this range
    [decision] = later["binder"]
    assert decision["record"]["content"] == "maybe idea 1" and later["binder_waiting"] == []
    text = ok(store, "review", f"{promoted}..HEAD")
    assert f"`{waiting[1]}` alice: maybe idea 1" in text and "recorded before this range" not in text


def test_a_decision_an_agent_made_over_mcp_is_shown_as_the_agent_s(store: Path) -> None:
    """A Binder line made over MCP is the agent's (`via: mcp`): the review says so, so no reader takes it
    for a person's decision."""
    base = git(store, "rev-parse", "HEAD").stdout.strip()
    ok(store, "intake", "write", "--content", "maybe idea", "--created-at", "2026-01-01T10:00:00Z")
    commit(store, "idea")
    ok(store, "promote", "--now-ts", "2026-01-02T00:00:00Z")
    [waiting] = [x["intake_id"] for x in ledger_lines(store)]

    async def session() -> None:
        async with server("--agent", "alice", cwd=store) as client:
            assert (await mcp_ok(client, "binder_ratify", id=waiting))["via"] == "mcp"
    run(session)
    commit(store, "alice ratifies over MCP")

    [decision] = review(store, f"{base}..HEAD")["binder"]
    assert (decision["by"], decision["via"]) == ("alice", "mcp")
    text = ok(store, "review", f"{base}..HEAD")
    assert any(x.startswith("- ratify by alice (agent, over MCP) at ") for x in text.splitlines()), text


def test_promote_and_review_of_its_commit_count_the_same_facts_superseded(store: Path) -> None:
    """Three kinds of superseding in one promotion: an open fact already in the store closed, a new fact
    closed by a newer one of the same promotion, and a new fact older than an open one, added closed."""
    for subject, obj, when in (("module-a", "9 s", "2026-01-05T00:00:00Z"),
                               ("module-b", "1 s", "2026-01-09T00:00:00Z")):
        ok(store, "fact", "add", "--subject", subject, "--predicate", "takes", "--object", obj,
           "--valid-from", when, "--recorded-at", when)
    commit(store, "facts")
    for subject, obj, day in (("module-a", "7 s", "06"), ("module-a", "5 s", "07"), ("module-b", "3 s", "02")):
        ok(store, "intake", "write", "--content", f"{subject} takes {obj}", "--tier", "verified", "--confidence",
           "0.9", "--subject", subject, "--predicate", "takes", "--object", obj,
           "--created-at", f"2026-01-{day}T00:00:00Z")
    commit(store, "observations")
    promoted = json.loads(ok(store, "promote", "--now-ts", "2026-01-10T00:00:00Z", "--json"))
    assert promoted["superseded"] == 3 and promoted["facts_added"] == 3
    report = review(store, "HEAD~1..HEAD")
    assert report["counts"]["facts_superseded"] == promoted["superseded"]
    assert report["counts"]["facts_added"] == promoted["facts_added"]
    closed = {(f["after"]["subject"], f["after"]["object"]): f["before"] is None for f in report["facts_superseded"]}
    assert closed == {("module-a", "9 s"): False, ("module-a", "7 s"): True, ("module-b", "3 s"): True}
    text = ok(store, "review", "HEAD~1..HEAD")
    assert "3 facts added, 3 superseded," in text and "### Facts superseded (3)" in text


def test_the_json_review_is_bounded_by_default_and_full_lists_everything(store: Path) -> None:
    """Default: counts of everything and the first 50 items of each list; `--limit N` another bound;
    `--full` every item. The Markdown likewise, with a line counting the rest."""
    from memstack import review as module

    base = git(store, "rev-parse", "HEAD").stdout.strip()
    total = module.LIMIT + 7
    (store / FACTS).parent.mkdir(parents=True, exist_ok=True)
    (store / FACTS).write_bytes(b"".join(line(fact(f"many-{n:04d}", f"s{n:04d}", f"o{n}")) for n in range(total)))
    for n in range(4):
        ok(store, "intake", "write", "--content", f"note {n}", "--created-at", f"2026-01-01T10:00:0{n}Z")
    commit(store, "many facts")

    bounded = review(store, f"{base}..HEAD")
    assert bounded["limit"] == module.LIMIT == 50
    assert bounded["counts"]["facts_added"] == total and bounded["counts"]["intake_records"] == 4
    assert [f["subject"] for f in bounded["facts_added"]] == [f"s{n:04d}" for n in range(module.LIMIT)]
    assert len(bounded["intake_records"]) == 4
    assert all(len(v) <= module.LIMIT for v in bounded.values() if isinstance(v, list))
    small = review(store, f"{base}..HEAD", "--limit", "3")
    assert small["limit"] == 3 and len(small["facts_added"]) == 3 and len(small["intake_records"]) == 3
    assert small["counts"] == bounded["counts"]
    full = review(store, f"{base}..HEAD", "--full")
    assert full["limit"] is None and full["counts"] == bounded["counts"]
    assert [f["subject"] for f in full["facts_added"]] == [f"s{n:04d}" for n in range(total)]

    text = ok(store, "review", f"{base}..HEAD")
    table = text.split("### Facts added")[1].split("###")[0]
    assert table.count("| s0") == module.LIMIT
    assert f"… and 7 more facts (`memstack review {base}..HEAD --full` lists all)" in table
    text = ok(store, "review", f"{base}..HEAD", "--limit", "2")
    assert "- … and 2 more records from alice (`memstack intake list --agent alice`)" in text
    text = ok(store, "review", f"{base}..HEAD", "--full")
    assert text.split("### Facts added")[1].split("###")[0].count("| s0") == total and "more facts" not in text
    assert f"default {module.LIMIT};" in " ".join(ok(store, "review", "--help").split())
    refused = memstack("review", f"{base}..HEAD", "--limit", "2", "--full", cwd=store)
    assert refused.returncode == 2 and "--full" in refused.stderr


def test_a_note_holding_control_characters_is_shown_escaped(store: Path) -> None:
    """A note is a person's or an agent's text: an escape sequence in it is no command to the terminal of
    whoever reads the review, and a newline in it does not end the line that shows it."""
    base = git(store, "rev-parse", "HEAD").stdout.strip()
    ok(store, "intake", "write", "--content", "maybe idea", "--created-at", "2026-01-01T10:00:00Z")
    commit(store, "idea")
    ok(store, "promote", "--now-ts", "2026-01-02T00:00:00Z")
    [waiting] = [x["intake_id"] for x in ledger_lines(store)]
    ok(store, "binder", "ratify", waiting, "--by", "Pat", "--note", "fine\x1b[2J|first\nsecond")
    commit(store, "Pat ratifies")
    text = ok(store, "review", f"{base}..HEAD")
    assert "\x1b" not in text
    [shown] = [x for x in text.splitlines() if x.startswith("- ratify by Pat at ")]
    assert shown.endswith(" — fine\\x1b[2J\\|first\\nsecond")
    [decision] = review(store, f"{base}..HEAD")["binder"]
    assert decision["note"] == "fine\x1b[2J|first\nsecond"  # the JSON keeps the note as written
