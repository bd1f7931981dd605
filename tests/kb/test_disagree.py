"""When agents disagree: two clones close one fact differently, and every way of meeting merges it the same.

Real clones of a real bare remote guarded by hooks/pre-receive, commits through the
installed pre-commit hook, pushes through the pre-push hook; `git pull` and
`git pull --rebase` in both directions.
"""

import json
from pathlib import Path

import pytest

from check_support import committed
from helpers import git, items, memstack
from mcp_support import HANDOFF
from memstack.kb import merge
from team_support import check_history, clone, fact_files, guarded_remote, pushed

SUBJECT, PREDICATE = "deploy-day", "decided"
ORIGINAL = "kb/facts/alice/2026-11.jsonl"


def capture(repo: Path, agent: str, obj: str, valid_from: str, recorded_at: str, contradicts: bool = True) -> dict:
    result = memstack("capture", "--json", "--agent", agent, "--subject", SUBJECT, "--predicate", PREDICATE,
                      "--object", obj, "--valid-from", valid_from, "--recorded-at", recorded_at,
                      *(["--contradicts"] if contradicts else []), cwd=repo)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)[0]


def start(store: Path, tmp_path: Path) -> dict[str, dict]:
    """Alice and Bob each contradict `tuesday` on their own clone of the remote, and commit."""
    tuesday = capture(store, "alice", "tuesday", "2026-11-01T00:00:00Z", "2026-11-01T09:00:00Z", contradicts=False)
    committed(store, "deploy day")
    remote = guarded_remote(store, tmp_path)
    a, b = clone(remote, tmp_path / "alice"), clone(remote, tmp_path / "bob")
    wednesday = capture(a, "alice", "wednesday", "2026-11-10T00:00:00Z", "2026-11-10T10:00:00Z")
    committed(a, "alice: wednesday")
    friday = capture(b, "bob", "friday", "2026-11-13T00:00:00Z", "2026-11-10T11:00:00Z")
    committed(b, "bob: friday")
    return {"tuesday": tuesday, "wednesday": wednesday, "friday": friday}


def meet(tmp_path: Path, first: str, how: str) -> Path:
    """`first` pushes, the other pulls (`how`: merge or rebase) and pushes; returns the second clone."""
    a, b = tmp_path / "alice", tmp_path / "bob"
    pusher, puller = (a, b) if first == "alice" else (b, a)
    pushed(pusher)
    pulled = git(puller, "pull", "-q", "--no-edit", "--rebase" if how == "rebase" else "--no-rebase", check=False)
    assert pulled.returncode == 0, pulled.stdout + pulled.stderr
    assert git(puller, "status", "--porcelain").stdout == ""
    assert "<<<<<<<" not in (puller / ORIGINAL).read_text()
    pushed(puller)
    check_history(puller)
    return puller


@pytest.fixture(scope="module")
def outcomes(tmp_path_factory: pytest.TempPathFactory, _store_template: Path) -> dict[tuple[str, str], tuple]:
    """The same two commits, met in each of the four ways (a copy of the clones and remote for each)."""
    import shutil

    origin = tmp_path_factory.mktemp("start")
    shutil.copytree(_store_template, origin / "store", symlinks=True)
    names = start(origin / "store", origin)
    found = {}
    for first in ("alice", "bob"):
        for how in ("merge", "rebase"):
            tmp = tmp_path_factory.mktemp(f"{first}-{how}")
            shutil.copytree(origin, tmp, symlinks=True, dirs_exist_ok=True)
            for name in ("store", "alice", "bob"):
                git(tmp / name, "remote", "set-url", "origin", str(tmp / "remote.git"))
            found[(first, how)] = (meet(tmp, first, how), names)
    return found


def test_every_direction_gives_byte_identical_fact_files(outcomes: dict) -> None:
    files = {way: fact_files(repo) for way, (repo, _) in outcomes.items()}
    first = files[("alice", "merge")]
    assert set(first) == {ORIGINAL, "kb/facts/bob/2026-11.jsonl"}
    for way, found in files.items():
        assert found == first, way


def test_the_predecessor_is_closed_once_by_the_first_closing_recorded(outcomes: dict) -> None:
    for repo, names in outcomes.values():
        history = {f["object"]: f for f in items(json.loads(memstack("fact", "history", "--subject", SUBJECT, "--json",
                                                                cwd=repo).stdout))}
        assert sorted(history) == ["friday", "tuesday", "wednesday"]  # all three values
        tuesday, wednesday, friday = history["tuesday"], history["wednesday"], history["friday"]
        assert tuesday["superseded_by"] == names["wednesday"]["id"]  # alice's closing was recorded first
        assert tuesday["valid_to"] == wednesday["valid_from"] and tuesday["expired_at"] == wednesday["recorded_at"]
        # Bob's closing is kept in his successor: it names what it closed, and when.
        assert friday["supersedes"] == [tuesday["id"]] and wednesday["supersedes"] == [tuesday["id"]]
        assert wednesday["valid_to"] is None and friday["valid_to"] is None


def test_the_disagreement_waits_in_the_binder_and_recall_shows_both_sides_marked(outcomes: dict) -> None:
    repo, names = outcomes[("alice", "merge")]
    waiting = items(json.loads(memstack("binder", "list", "--json", cwd=repo).stdout))
    [dispute] = [item for item in waiting if item.get("kind") == "dispute"]
    assert dispute["id"] == names["tuesday"]["id"]
    assert [s["object"] for s in dispute["sides"]] == ["wednesday", "friday"]
    assert dispute["kept_closing"] == names["wednesday"]["id"]
    text = memstack("binder", "list", cwd=repo).stdout
    assert "dispute" in text and "'tuesday' was closed by 2 facts" in text
    recalled = items(json.loads(memstack("recall", "--subject", SUBJECT, "--now-ts", "2026-11-20T00:00:00Z", "--json",
                                   cwd=repo).stdout))
    assert {f["object"]: f["disputed_with"] for f in recalled} == {
        "friday": [names["wednesday"]["id"]], "wednesday": [names["friday"]["id"]]}
    assert "DISPUTED with" in memstack("recall", "--subject", SUBJECT, "--now-ts", "2026-11-20T00:00:00Z",
                                       cwd=repo).stdout


def test_willow_boot_show_and_session_start_mark_both_sides_disputed_as_recall_does(outcomes: dict) -> None:
    """An agent that reads willow.md with `cat` (or its anchor at session start) sees the disagreement, not two
    plain decisions of which the newest looks decided."""
    repo, names = outcomes[("alice", "merge")]
    wednesday, friday = names["wednesday"]["id"], names["friday"]["id"]
    assert memstack("handoff", "write", "--agent", "alice", cwd=repo, input=HANDOFF).returncode == 0
    assert memstack("rebuild", cwd=repo).returncode == 0  # the knowledge view, then the boot files
    willow = (repo / "willow.md").read_text()
    assert f"- **{SUBJECT}** {PREDICATE} friday (since 2026-11-13T00:00:00.000Z)  DISPUTED with {wednesday}" in willow
    assert f"- **{SUBJECT}** {PREDICATE} wednesday (since 2026-11-10T00:00:00.000Z)  DISPUTED with {friday}" in willow
    anchor = json.loads((repo / "session_anchor_alice.json").read_text())
    assert {f["object"]: f.get("disputed_with") for f in anchor["knowledge"]} == {
        "friday": [wednesday], "wednesday": [friday]}
    shown = memstack("boot", "show", "--agent", "alice", cwd=repo).stdout
    assert f"{SUBJECT} {PREDICATE} friday (since 2026-11-13T00:00:00.000Z)  DISPUTED with {wednesday}" in shown
    start = json.dumps({"hook_event_name": "SessionStart", "session_id": "s1", "cwd": str(repo), "source": "startup"})
    told = json.loads(memstack("hook", "session-start", "--agent", "alice", cwd=repo, input=start).stdout)
    assert f"- {SUBJECT} {PREDICATE} wednesday (since 2026-11-10T00:00:00.000Z)  DISPUTED with {friday}" in \
        told["hookSpecificOutput"]["additionalContext"]
    committed(repo, "handoff and boot files")  # the marks are what a rebuild makes: the hooks pass them


def test_a_rebuild_writes_no_disagreement_into_a_view_and_passes_the_checks(outcomes: dict) -> None:
    """A disagreement is found in the facts where it is shown (binder list), never written into a view: no
    file grows with the store's disagreements, and each view shard stays a function of its own source."""
    repo, names = outcomes[("bob", "rebase")]
    assert memstack("rebuild", cwd=repo).returncode == 0
    for path in (repo / "kb").glob("*/*/*.json"):
        assert names["tuesday"]["id"] not in path.read_text() or path.parent.parent.name == "knowledge", path
    waiting = items(json.loads(memstack("binder", "list", "--json", cwd=repo).stdout))
    assert [(d["id"], [s["id"] for s in d["sides"]]) for d in waiting if d.get("kind") == "dispute"] == \
        [(names["tuesday"]["id"], [names["wednesday"]["id"], names["friday"]["id"]])]
    committed(repo, "rebuild")
    pushed(repo)
    check_history(repo)


@pytest.mark.parametrize("side", ["wednesday", "friday"])
def test_ratifying_one_side_settles_it(outcomes: dict, side: str) -> None:
    repo, names = outcomes[("bob", "merge")] if side == "friday" else outcomes[("alice", "rebase")]
    other = "wednesday" if side == "friday" else "friday"
    decided = memstack("binder", "ratify", names[side]["id"], "--by", "lead", "--json", cwd=repo)
    assert decided.returncode == 0, decided.stderr
    assert json.loads(decided.stdout)["closed"] == [names[other]["id"]]
    committed(repo, f"ratify {side}")
    pushed(repo)
    check_history(repo)
    assert [i for i in items(json.loads(memstack("binder", "list", "--json", cwd=repo).stdout))
            if i.get("kind") == "dispute"] == []
    recalled = items(json.loads(memstack("recall", "--subject", SUBJECT, "--json", cwd=repo).stdout))
    assert [(f["object"], "disputed_with" in f) for f in recalled] == [(side, False)]
    history = {f["object"]: f for f in items(json.loads(memstack("fact", "history", "--subject", SUBJECT, "--json",
                                                            cwd=repo).stdout))}
    assert sorted(history) == ["friday", "tuesday", "wednesday"]
    assert history[other]["superseded_by"] == names[side]["id"]
    again = memstack("binder", "ratify", names[other]["id"], cwd=repo)
    assert again.returncode == 2 and "not waiting" in again.stderr
    decisions = [json.loads(x) for x in (repo / "kb/binder.jsonl").read_text().splitlines()]
    assert decisions[-1]["fact_id"] == names[side]["id"] and decisions[-1]["decision"] == "ratify"


def fact(fid: str, **closing: object) -> dict:
    record = {"id": fid, "subject": "s", "predicate": "decided", "object": "o", "valid_from": 1000, "valid_to": None,
              "confidence": 1.0, "recorded_at": 2000, "table": "knowledge", "expired_at": None,
              "superseded_by": None, "source": None, "agent": "alice", "intake_id": None}
    return {**record, **closing}


def line(record: dict) -> bytes:
    return json.dumps(record, sort_keys=True, separators=(",", ":")).encode() + b"\n"


def test_the_driver_keeps_the_first_closing_recorded_whichever_side_merges() -> None:
    base = fact("fact-pppp-0000")
    early = fact("fact-pppp-0000", valid_to=9000, expired_at=3000, superseded_by="fact-wwww-0000")
    late = fact("fact-pppp-0000", valid_to=5000, expired_at=4000, superseded_by="fact-ffff-0000")
    for ours, theirs in ((early, late), (late, early)):
        result = merge.merge(ORIGINAL, line(base), line(ours), line(theirs))
        assert result.conflicts == [] and result.data == line(early)
    tie = fact("fact-pppp-0000", valid_to=5000, expired_at=3000, superseded_by="fact-aaaa-0000")
    assert merge.merge(ORIGINAL, line(base), line(early), line(tie)).data == line(tie)  # then the smaller id


def test_a_closing_without_successor_against_another_is_still_a_conflict() -> None:
    base = fact("fact-pppp-0000")
    invalidated = fact("fact-pppp-0000", valid_to=9000, expired_at=3000, superseded_by=None)
    superseded = fact("fact-pppp-0000", valid_to=5000, expired_at=4000, superseded_by="fact-ffff-0000")
    result = merge.merge(ORIGINAL, line(base), line(invalidated), line(superseded))
    assert result.conflicts and b"<<<<<<<" in result.data


def test_the_check_refuses_a_re_closing_that_is_not_the_merge_rule(store: Path) -> None:
    from memstack.integrity import rules

    early = fact("fact-pppp-0000", valid_to=9000, expired_at=3000, superseded_by="fact-wwww-0000")
    late = fact("fact-pppp-0000", valid_to=5000, expired_at=4000, superseded_by="fact-ffff-0000")
    assert rules.closing_problems(late, early) == []  # what a merge (or rebase) of the two lands on
    assert rules.closing_problems(early, late)  # the other way round is an edit of history
    edited = {**early, "object": "x"}
    assert rules.closing_problems(late, edited)
    reopened = {**early, "superseded_by": None}
    assert rules.closing_problems(late, reopened)


def test_rejecting_one_side_closes_it_and_settles_a_two_sided_disagreement(outcomes: dict) -> None:
    repo, names = outcomes[("alice", "merge")]  # (last in the module: the read-only tests above use it too)
    decided = memstack("binder", "reject", names["wednesday"]["id"], "--by", "lead", "--note", "friday it is",
                       "--json", cwd=repo)
    assert decided.returncode == 0, decided.stderr
    assert json.loads(decided.stdout)["closed"] == [names["wednesday"]["id"]]
    [wednesday] = [f for f in items(json.loads(memstack("fact", "history", "--subject", SUBJECT, "--json",
                                                        cwd=repo).stdout))
                   if f["object"] == "wednesday"]
    assert wednesday["valid_to"] is not None and wednesday["superseded_by"] is None
    assert [i for i in items(json.loads(memstack("binder", "list", "--json", cwd=repo).stdout))
            if i.get("kind") == "dispute"] == []
    committed(repo, "reject wednesday")
    pushed(repo)
    check_history(repo)


def test_decisions_on_one_side_merge_once_and_two_different_ones_are_both_kept() -> None:
    ratify = line({"fact_id": "fact-wwww-0000", "decision": "ratify", "decided_at": 5, "by": "ada"})
    reject = line({"fact_id": "fact-wwww-0000", "decision": "reject", "decided_at": 6, "by": "bob"})
    assert merge.merge("kb/binder.jsonl", b"", ratify, ratify).data == ratify
    assert merge.merge("kb/binder.jsonl", b"", ratify, reject).data == ratify + reject  # each a person's word
