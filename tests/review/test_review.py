"""`memstack review A..B`: a known range gives the expected Markdown and JSON."""

import hashlib
import json
from pathlib import Path

from fact_support import bound, closed, fact, line
from helpers import HANDOFF, git, items, memstack
from memstack.base.ids import agent_tag

FACTS = "kb/facts/alice/2026-01.jsonl"


def iid(rid: str, agent: str = "alice") -> str:
    """The id `intake_line(rid, ...)` gives its record: bound to its created_at and agent (memstack/base/ids.py)."""
    return f"{1_767_261_600_000:012x}{hashlib.sha256(rid.encode()).hexdigest()[:12]}{agent_tag(agent)}"


def intake_line(rid: str, tier: str, agent: str = "alice") -> bytes:
    return line({"id": iid(rid, agent), "content": f"record {rid}", "title": f"t-{rid}", "source": "", "agent": agent,
                 "tier": tier, "confidence": 0.9, "keywords": [], "tags": [],
                 "created_at": "2026-01-01T10:00:00.000Z"})


def write(root: Path, rel: str, data: bytes, mode: str = "ab") -> None:
    (root / rel).parent.mkdir(parents=True, exist_ok=True)
    with (root / rel).open(mode) as handle:
        handle.write(data)


def commit(root: Path, message: str) -> str:
    git(root, "add", "-A")
    result = git(root, "commit", "-q", "-m", message, check=False)
    assert result.returncode == 0, result.stdout + result.stderr
    return git(root, "rev-parse", "HEAD").stdout.strip()


def test_review_of_a_known_range(store: Path) -> None:
    old = fact("fact-old-0001", "deploy", "friday")
    write(store, FACTS, line(old))
    base = commit(store, "base")
    write(store, "intake/alice/2026-01-01.jsonl", intake_line("rec-aaaa-0001", "verified")
          + intake_line("rec-aaaa-0002", "observed"))
    write(store, "intake/bob/2026-01-01.jsonl", intake_line("rec-bbbb-0001", "observed", "bob"))
    new = fact("fact-new-0002", "deploy", "monday", valid_from=5000)
    write(store, FACTS, line(closed(old, 5000, new["id"])) + line(new), mode="wb")
    commit(store, "learned things")
    write(store, "kb/promotions/alice/2026-01-01.jsonl", line({
        "intake_id": iid("rec-aaaa-0001"), "agent": "alice", "sub_tier": "knowledge", "fact_id": new["id"],
        "promoted_at": 9000}))
    memstack("soil", "put", "session", "now", "--value", "1", cwd=store)
    write(store, "handoffs/alice/session_handoff-2026-01-01_alice.md",
          ("---\nagent: alice\ndate: 2026-01-01\nsession: s1\n---\n" + HANDOFF).encode())
    commit(store, "session end")

    result = memstack("review", f"{base}..HEAD", cwd=store)
    assert result.returncode == 0, result.stderr
    assert result.stdout == f"""## memstack review of `{base}..HEAD` (2 commits)

3 intake records, 1 fact added, 1 superseded, 1 promotion, 1 handoff sealed, 1 SOIL change, no invariant violations.

### Facts added (1)

| subject | predicate | object | valid | table | agent |
|---|---|---|---|---|---|
| deploy | p | monday | [1970-01-01T00:00:05.000Z, open) | knowledge | alice |

### Facts superseded (1)

| subject | predicate | before | window now | after | window |
|---|---|---|---|---|---|
| deploy | p | friday | [1970-01-01T00:00:01.000Z, 1970-01-01T00:00:05.000Z) | monday | [1970-01-01T00:00:05.000Z, open) |

### Intake (3 records)

#### alice: 2 records (1 observed, 1 verified)

- `{iid('rec-aaaa-0001')}` verified 0.9, 2026-01-01T10:00:00.000Z: **t-rec-aaaa-0001**: record rec-aaaa-0001
- `{iid('rec-aaaa-0002')}` observed 0.9, 2026-01-01T10:00:00.000Z: **t-rec-aaaa-0002**: record rec-aaaa-0002

#### bob: 1 record (1 observed)

- `{iid('rec-bbbb-0001', 'bob')}` observed 0.9, 2026-01-01T10:00:00.000Z: **t-rec-bbbb-0001**: record rec-bbbb-0001

### Promotions

| sub-tier | records |
|---|---|
| knowledge | 1 |

| ledger shard | lines added |
|---|---|
| `kb/promotions/alice/2026-01-01.jsonl` | 1 |

### Handoffs sealed

- `handoffs/alice/session_handoff-2026-01-01_alice.md`

### SOIL

- added `store/session/now.json`
"""  # noqa: E501 (the expected review, compared byte for byte: a table row is one line)
    data = json.loads(memstack("review", f"{base}..HEAD", "--format", "json", cwd=store).stdout)
    assert data["commits"] == 2 and data["violations"] == []
    assert data["intake"] == {"alice": {"observed": 1, "verified": 1}, "bob": {"observed": 1}}
    assert [r["id"] for r in data["intake_records"]] == sorted([iid("rec-aaaa-0001"), iid("rec-aaaa-0002"),
                                                                iid("rec-bbbb-0001", "bob")])  # by created_at, id
    [superseded] = data["facts_superseded"]
    assert superseded["before"] == old and superseded["after"] == closed(old, 5000, new["id"])
    assert superseded["successor"] == new
    assert data["facts_added"] == [new]
    assert data["promotions"] == {"knowledge": 1}
    assert data["ledger_shards"] == {"kb/promotions/alice/2026-01-01.jsonl": 1}
    assert data["soil"] == [{"path": "store/session/now.json", "change": "added"}]


def test_review_lists_violations_of_commits_that_skipped_the_hook(store: Path) -> None:
    write(store, "intake/alice/2026-01-01.jsonl", intake_line("rec-aaaa-0001", "verified"))
    base = commit(store, "base")
    write(store, "intake/alice/2026-01-01.jsonl", intake_line("rec-aaaa-0009", "verified"), mode="wb")
    git(store, "commit", "-q", "--no-verify", "-am", "rewrote the log")
    result = memstack("review", f"{base}..HEAD", cwd=store)
    assert result.returncode == 0
    assert "### ❌ Invariant violations" in result.stdout
    assert "intake/alice/2026-01-01.jsonl:1: I1 line 1 was edited or deleted" in result.stdout


def test_review_of_a_bad_range_is_bad_usage(store: Path) -> None:
    result = memstack("review", "nope..HEAD", cwd=store)
    assert result.returncode == 2 and "nope" in result.stderr


def test_review_of_a_branch_behind_main_shows_only_the_branchs_changes(store: Path) -> None:
    base = commit(store, "base") if git(store, "status", "--porcelain").stdout else \
        git(store, "rev-parse", "HEAD").stdout.strip()
    git(store, "checkout", "-q", "-b", "feature")
    write(store, "intake/bob/2026-01-01.jsonl", intake_line("rec-bbbb-0001", "observed", "bob"))
    commit(store, "feature work")
    git(store, "checkout", "-q", "main")
    memstack("soil", "put", "session", "main-only", "--value", "1", cwd=store)
    commit(store, "main moves on")
    data = json.loads(memstack("review", "main..feature", "--format", "json", cwd=store).stdout)
    assert data["soil"] == [] and [r["id"] for r in data["intake_records"]] == [iid("rec-bbbb-0001", "bob")]
    assert data["commits"] == 1 and base


def test_review_survives_malformed_facts_and_reports_them(store: Path) -> None:
    base = git(store, "rev-parse", "HEAD").stdout.strip()
    write(store, FACTS, b'{"subject": "no id"}\n{"id": ["a"], "subject": 3}\n' + line(fact("fact-ok-00001")))
    git(store, "add", "-A")
    git(store, "commit", "-q", "--no-verify", "-m", "bad facts")
    result = memstack("review", f"{base}..HEAD", "--format", "json", cwd=store)
    assert result.returncode == 0, result.stderr
    data = json.loads(result.stdout)
    assert [f["id"] for f in data["facts_added"]] == [bound("fact-ok-00001")] and data["violations"]


def test_review_shows_what_was_learned_and_what_waits_bounded_by_agent(store: Path) -> None:
    """Content, not counts: each agent's records, the Binder's waiting items and decisions (ISO times),
    at most --limit of each with a count of the rest; plurals that read right; the record decided is not
    waiting."""
    base = git(store, "rev-parse", "HEAD").stdout.strip()
    for n in range(25):
        assert memstack("intake", "write", "--content", f"maybe idea {n}", "--created-at",
                        f"2026-01-01T10:00:{n:02d}Z", cwd=store).returncode == 0
    assert memstack("intake", "write", "--agent", "bob", "--content", "bob's only note", "--created-at",
                    "2026-01-01T11:00:00Z", cwd=store).returncode == 0
    commit(store, "ideas")
    assert memstack("promote", "--now-ts", "2026-01-02T00:00:00Z", cwd=store).returncode == 0
    first = items(json.loads(memstack("binder", "list", "--json", cwd=store).stdout))
    waiting = first["items"] if isinstance(first, dict) else first
    assert memstack("binder", "reject", waiting[0]["id"], "--by", "carol", cwd=store).returncode == 0
    commit(store, "a decision")
    result = memstack("review", f"{base}..HEAD", "--limit", "20", cwd=store)
    assert result.returncode == 0, result.stderr
    text = result.stdout
    assert "26 intake records, 0 facts added" in text and "26 promotions" in text and "(3 commits)" in text
    assert "#### alice: 25 records (25 observed)" in text and "#### bob: 1 record (1 observed)" in text
    assert "maybe idea 0" in text and "maybe idea 19" in text and "maybe idea 20" not in text.split("### Waiting")[0]
    assert "- … and 5 more records from alice (`memstack intake list --agent alice`)" in text
    assert "bob's only note" in text
    assert "### Waiting in the Binder for a human (25 records)" in text
    assert "- … and 5 more records (`memstack binder list`)" in text
    assert "### Binder decisions (1 decision)" in text
    [decision] = [line for line in text.splitlines() if " by carol at " in line]
    assert f"`{waiting[0]['id']}` alice: maybe idea" in decision and "2026" not in decision.split(" at ")[0]
    assert decision.split(" at ")[1][:4].isdigit() and "T" in decision.split(" at ")[1][:11]  # ISO, not ms


def test_review_bounds_its_facts_tables_and_counts_the_rest(store: Path) -> None:
    from memstack import review

    base = git(store, "rev-parse", "HEAD").stdout.strip()
    extra = review.LIMIT + 3
    # written as fact lines (one process, not one `fact add` each); the commit's hook checks them all
    write(store, FACTS, b"".join(line(fact(f"many-{n:04d}", f"s{n:04d}", f"o{n}")) for n in range(extra)))
    commit(store, "many facts")
    text = memstack("review", f"{base}..HEAD", cwd=store).stdout
    table = text.split("### Facts added")[1].split("###")[0]
    assert table.count("| s0") == review.LIMIT and "… and 3 more facts" in table
    data = json.loads(memstack("review", f"{base}..HEAD", "--format", "json", "--full", cwd=store).stdout)
    assert len(data["facts_added"]) == extra


def test_the_json_report_is_written_as_one_indented_document(store: Path) -> None:
    """Written row by row, the report has the bytes of one document rendered whole (keys sorted, indented),
    empty lists and counts included."""
    from memstack.base.output import render_json

    base = git(store, "rev-parse", "HEAD").stdout.strip()
    write(store, "intake/alice/2026-01-01.jsonl", intake_line("rec-aaaa-0001", "verified"))
    write(store, FACTS, line(fact("fact-one-0001")))
    commit(store, "one of each")
    result = memstack("review", f"{base}..HEAD", "--format", "json", cwd=store)
    assert result.returncode == 0, result.stderr
    data = json.loads(result.stdout)
    assert result.stdout == render_json(data) + "\n"
    assert len(data["intake_records"]) == 1 and len(data["facts_added"]) == 1 and data["binder"] == []
    empty = memstack("review", "HEAD..HEAD", "--json", cwd=store)
    assert empty.stdout == render_json(json.loads(empty.stdout)) + "\n" and '"intake_records": [],' in empty.stdout


def test_review_of_appends_to_existing_logs_shows_only_what_was_appended(store: Path) -> None:
    """A log the base already holds: its appended lines are the range's records; a rewritten one (no hook)
    shows the lines the base did not hold."""
    write(store, "intake/alice/2026-01-01.jsonl", intake_line("rec-aaaa-0001", "verified")
          + intake_line("rec-aaaa-0002", "observed"))
    write(store, "intake/bob/2026-01-01.jsonl", intake_line("rec-bbbb-0001", "observed", "bob")
          + intake_line("rec-bbbb-0002", "observed", "bob"))
    base = commit(store, "base")
    write(store, "intake/alice/2026-01-01.jsonl", intake_line("rec-aaaa-0003", "observed"))
    commit(store, "one more")
    data = json.loads(memstack("review", f"{base}..HEAD", "--format", "json", cwd=store).stdout)
    assert [r["id"] for r in data["intake_records"]] == [iid("rec-aaaa-0003")] and data["violations"] == []
    write(store, "intake/bob/2026-01-01.jsonl", intake_line("rec-bbbb-0002", "observed", "bob")
          + intake_line("rec-bbbb-0003", "observed", "bob"), mode="wb")
    git(store, "commit", "-q", "--no-verify", "-am", "rewrote bob's log")
    data = json.loads(memstack("review", f"{base}..HEAD", "--format", "json", cwd=store).stdout)
    assert sorted(r["id"] for r in data["intake_records"]) == sorted([iid("rec-aaaa-0003"),
                                                                       iid("rec-bbbb-0003", "bob")])
    assert data["intake"] == {"alice": {"observed": 1}, "bob": {"observed": 1}} and data["violations"]


def test_a_store_of_its_own_has_no_code_to_check_for_stale_anchors(store: Path) -> None:
    write(store, FACTS, line(fact("fact-old-0001", "deploy", "friday")))
    commit(store, "a fact")
    found = json.loads(memstack("review", "HEAD~1..HEAD", "--format", "json", cwd=store).stdout)
    assert found["code_anchors_stale"] is None and found["counts"]["code_anchors_stale"] == 0
