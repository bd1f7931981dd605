"""The derived views in shards, one per source file, as a user meets them: several agents and months
promoted, a promotion's diff holding only the shards it touched, the Binder queue read a day at a time,
`rebuild --check`, `check --all` and `export knowledge`."""

import json
from pathlib import Path

import pytest

from helpers import copied_to, git, items, made_from, memstack, view_entries, view_files

DAYS = ("2026-01-15", "2026-02-10", "2026-03-05")
Filled = tuple[Path, dict[str, str]]  # a store after `filled`, and what it returned


def note(store: Path, agent: str, when: str, text: str, *, sure: bool, subject: str | None = None) -> str:
    args = ["intake", "write", "--agent", agent, "--content", text, "--title", text, "--created-at", when,
            "--tier", "verified" if sure else "observed", "--confidence", "0.9" if sure else "0.3", "--json"]
    if subject:
        args += ["--subject", subject, "--predicate", "decided", "--object", text]
    result = memstack(*args, cwd=store)
    assert result.returncode == 0, result.stderr
    return str(json.loads(result.stdout)["record"]["id"])


def promote(store: Path) -> dict:
    result = memstack("promote", "--now-ts", "2026-04-01T00:00:00Z", "--json", cwd=store)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


def filled(store: Path) -> dict[str, str]:
    """Two agents, three months: a knowledge record and a Binder record each day; promoted."""
    waiting = {}
    for agent in ("alice", "bob"):
        for day in DAYS:
            note(store, agent, f"{day}T10:00:00Z", f"sure {agent} {day}", sure=True)
            waiting[f"{agent} {day}"] = note(store, agent, f"{day}T11:00:00Z", f"unsure {agent} {day}", sure=False)
    promote(store)
    return waiting


@pytest.fixture(scope="module")
def _made_filled(_store_template: Path, tmp_path_factory: pytest.TempPathFactory) -> Filled:
    return made_from(_store_template, tmp_path_factory, "made_filled", filled)


@pytest.fixture
def made_filled(store: Path, _made_filled: Filled) -> Filled:
    """`store` after `filled` (made once for the module, copied in), and what `filled` returned."""
    made, value = _made_filled
    return copied_to(made, store), value

def changed(store: Path) -> list[str]:
    return git(store, "show", "--name-only", "--format=", "HEAD").stdout.split()


def test_each_source_file_has_its_shard_and_a_promotion_rewrites_only_those_it_touched(made_filled: Filled) -> None:
    store, _ = made_filled
    shards = view_files(store)
    assert sorted(shards) == sorted(
        [f"kb/knowledge/{a}/{d[:7]}.json" for a in ("alice", "bob") for d in DAYS]
        + [f"kb/binder_queue/{a}/{d}.json" for a in ("alice", "bob") for d in DAYS])
    for data in shards.values():  # a JSON array, one entry a line
        lines = data.decode().split("\n")
        assert lines[0] == "[" and lines[-2:] == ["]", ""] and len(json.loads(data)) == len(lines) - 3
    for fact in view_entries(store, "knowledge"):
        assert fact["distilled_at"] == fact["recorded_at"]  # a function of the fact's own file
    note(store, "alice", "2026-03-06T10:00:00Z", "later alice", sure=True)
    promote(store)
    touched = [p for p in changed(store) if p.startswith("kb/") and p.endswith(".json")]
    assert touched == ["kb/knowledge/alice/2026-03.json"]
    assert "later alice" in (store / "kb/knowledge/alice/2026-03.json").read_text()
    assert memstack("rebuild", "--check", cwd=store).returncode == 0
    assert memstack("check", "--all", cwd=store).returncode == 0
    first = git(store, "rev-list", "--max-parents=0", "HEAD").stdout.strip()
    assert memstack("check", "--range", f"{first}..HEAD", cwd=store).returncode == 0


def test_a_decided_record_leaves_the_queue_at_once_and_its_empty_shard_goes_at_the_next_promotion(
        made_filled: Filled) -> None:
    store, waiting = made_filled
    ident = waiting["bob 2026-03-05"]
    assert memstack("binder", "ratify", ident, "--by", "ada", cwd=store).returncode == 0
    listed = [r["id"] for r in items(json.loads(memstack("binder", "list", "--json", cwd=store).stdout))]
    assert ident not in listed and len(listed) == 5
    page = json.loads(memstack("binder", "list", "--json", "--limit", "1", cwd=store).stdout)
    assert page["remaining"] == 4  # the later days' shards counted, less the record decided since
    git(store, "add", "-A")
    git(store, "commit", "-q", "-m", "ratify")
    assert promote(store)["ratified"] == 1
    assert not (store / "kb/binder_queue/bob/2026-03-05.json").exists()
    assert "kb/binder_queue/bob/2026-03-05.json" in changed(store)
    assert memstack("rebuild", "--check", cwd=store).returncode == 0


def test_binder_list_pages_walk_the_queue_across_days_and_count_what_is_left(made_filled: Filled) -> None:
    store, waiting = made_filled
    seen, cursor = [], None
    while True:
        args = ["binder", "list", "--json", "--limit", "2"] + (["--cursor", cursor] if cursor else [])
        page = json.loads(memstack(*args, cwd=store).stdout)
        seen += [r["id"] for r in page["items"]]
        assert page["remaining"] == 6 - len(seen)
        cursor = page["next_cursor"]
        if cursor is None:
            break
    whole = [r["id"] for r in items(json.loads(memstack("binder", "list", "--json", cwd=store).stdout))]
    assert seen == whole and sorted(seen) == sorted(waiting.values())
    assert [seen.index(waiting[f"alice {d}"]) // 2 for d in DAYS] == [0, 1, 2]  # oldest day first
    assert [r.split()[0] for r in memstack("binder", "list", cwd=store).stdout.splitlines()] == whole
    # the later shards' counts are remembered locally; a shard a promotion rewrites is counted again
    note(store, "bob", "2026-03-05T12:00:00Z", "unsure again", sure=False)
    promote(store)
    assert json.loads(memstack("binder", "list", "--json", "--limit", "1", cwd=store).stdout)["remaining"] == 6


def test_a_hand_edited_shard_is_named_and_refused_alone(made_filled: Filled) -> None:
    store, _ = made_filled
    shard = store / "kb/knowledge/bob/2026-02.json"
    shard.write_text(shard.read_text().replace("sure bob", "edited bob"))
    checked = memstack("rebuild", "--check", cwd=store)
    assert checked.returncode == 1 and "kb/knowledge/bob/2026-02.json" in checked.stdout
    git(store, "add", "-A")
    refused = git(store, "commit", "-m", "edit", check=False)
    assert refused.returncode != 0
    assert [line.split(":")[0] for line in refused.stderr.splitlines() if ": I4 " in line] == \
        ["kb/knowledge/bob/2026-02.json"]
    git(store, "reset", "-q", "--hard")
    (store / "kb/knowledge/bob/2099-01.json").write_text("[\n]\n")  # a shard no source makes
    assert "kb/knowledge/bob/2099-01.json" in memstack("rebuild", "--check", cwd=store).stdout
    assert memstack("rebuild", cwd=store).returncode == 0
    assert not (store / "kb/knowledge/bob/2099-01.json").exists()


def test_export_knowledge_is_every_shard_as_one_array_in_view_order(made_filled: Filled, tmp_path: Path) -> None:
    store, _ = made_filled
    note(store, "bob", "2026-02-11T10:00:00Z", "b", sure=True, subject="aa")
    note(store, "alice", "2026-03-07T10:00:00Z", "a", sure=True, subject="ab")
    promote(store)
    out = memstack("export", "knowledge", cwd=store)
    assert out.returncode == 0, out.stderr
    exported = json.loads(out.stdout)
    entries = view_entries(store, "knowledge")
    key = [(f["subject"], f["predicate"], f["valid_from"], f["id"]) for f in exported]
    assert key == sorted(key) and sorted(key) == sorted((f["subject"], f["predicate"], f["valid_from"], f["id"])
                                                        for f in entries)
    assert [(f["subject"], f["agent"]) for f in exported[:2]] == [("aa", "bob"), ("ab", "alice")]  # merged shards
    assert all("distilled_at" in f for f in exported)
    written = memstack("export", "knowledge", "--table", "opus_atoms", "--output", str(tmp_path / "o.json"),
                       "--json", cwd=store)
    assert json.loads(written.stdout)["facts"] == 0 and (tmp_path / "o.json").read_text() == "[]\n"
    bad = memstack("export", "knowledge", "--table", "binder", cwd=store)
    assert bad.returncode == 2 and "--table" in bad.stderr


def test_an_audit_builds_and_compares_the_shards_a_few_sources_at_a_time(made_filled: Filled, monkeypatch) -> None:
    """`check --all` checks every shard of the store: it builds and compares them a few source files at a
    time (SOURCES_AT_ONCE), so what it holds stays bounded; a shard edited by hand is still the one named."""
    from memstack.integrity import check, derived, rebuilt

    store, _ = made_filled
    shard = store / "kb/knowledge/bob/2026-02.json"
    shard.write_text(shard.read_text().replace("sure bob", "edited bob"))
    git(store, "add", "-A")
    git(store, "commit", "-q", "--no-verify", "-m", "a view edited by hand, past the hook")
    asked: list[int] = []
    real = derived.Derived.build
    monkeypatch.setattr(derived.Derived, "build", lambda self, source, paths: asked.append(len(list(paths))) or
                        real(self, source, paths) if self.shards else real(self, source, paths))
    monkeypatch.setattr(rebuilt, "SOURCES_AT_ONCE", 1)
    report = check.audit(store)
    assert [p for p in report.stale if p.startswith("kb/")] == ["kb/knowledge/bob/2026-02.json"]
    assert not [v for r in report.results for v in r.violations]
    assert len(asked) == 12 and max(asked) == 1  # 6 fact files and 6 intake days, one at a time


def test_a_commit_check_takes_the_shards_built_from_the_same_blobs_and_builds_the_rest(made_filled: Filled) -> None:
    """A promotion rebuilds the shards, then its commit's check must know they are what a rebuild makes
    from the staged sources: shards built from the very blobs staged are compared by id (kb/views.py,
    `remembering`); a source or a decision changed since names its shards unknown, and a shard edited
    after it was built is still refused."""
    from memstack.integrity import check
    from memstack.kb import views
    from memstack.repo import objects
    from memstack.repo.sources import GitSource, WorktreeSource

    store, waiting = made_filled
    paths = list(view_files(store)) + ["kb/opus_atoms/alice/2026-03.json"]  # one its source makes empty
    with views.remembering(), objects.CatFile(store) as cat, objects.CatFile(store) as cat_later:
        built = views.Shards(WorktreeSource(store)).of(paths)
        known = views.Shards(GitSource(store, cat, None)).remembered(paths)
        assert known == {p: (None if built.get(p) is None else objects.blob_id(built[p] or b"", "0" * 40))
                         for p in paths if p in built}
        assert known["kb/opus_atoms/alice/2026-03.json"] is None and set(known) == set(paths)
        # A fact file and a decision staged since: their shards (the decision: every queue shard) unknown.
        assert memstack("fact", "add", "--subject", "s", "--predicate", "p", "--object", "o", "--agent", "bob",
                        "--valid-from", "2026-02-20T00:00:00Z", "--recorded-at", "2026-02-20T00:00:00Z",
                        cwd=store).returncode == 0
        assert memstack("binder", "reject", waiting["alice 2026-01-15"], cwd=store).returncode == 0
        git(store, "add", "-A")
        later = views.Shards(GitSource(store, cat_later, None)).remembered(paths)
        assert set(later) == set(known) - {p for p in known if p.startswith("kb/binder_queue/")} \
            - {f"kb/{t}/bob/2026-02.json" for t in ("knowledge", "jeles_atoms", "opus_atoms")}
        # A shard edited after it was built: its id is not the one remembered, so it is built and refused.
        git(store, "reset", "-q", "--hard")
        shard = store / "kb/knowledge/alice/2026-03.json"
        shard.write_text(shard.read_text().replace("sure alice", "edited alice"))
        git(store, "add", "-A")
        found = [str(v) for v in check.staged(store).violations]
    assert len(found) == 1 and found[0].startswith("kb/knowledge/alice/2026-03.json:") and " I4 " in found[0]
