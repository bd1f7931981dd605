"""`memstack import ferrox FILE`, `memstack export ferrox|jsonl`: a ferrox fact store in and out.

Through the real command (and, for the property test, the real `main`): windows and closings
kept, successors linked, idempotent, checked whole before anything is written, and what it
writes passes every check and a real commit through the hooks.
"""

import json
import resource
import shutil
import string
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from helpers import MEMSTACK, git, memstack, tree_snapshot
from memstack.base.times import month
from memstack.cli.main import main
from memstack.kb import factfiles
from memstack.kb.ferrox import importing
from team_support import check_history, clone, guarded_remote

SEED = ("subject", "predicate", "object", "valid_from", "valid_to", "confidence", "recorded_at")
Y2024 = 1_704_067_200_000  # 2024-01-01T00:00:00Z
DAY = 86_400_000


def seed_fact(subject: str, predicate: str, object: str, valid_from: int, valid_to: int | None,
              recorded_at: int, confidence: float = 1.0) -> dict[str, Any]:
    return {"subject": subject, "predicate": predicate, "object": object, "valid_from": valid_from,
            "valid_to": valid_to, "confidence": confidence, "recorded_at": recorded_at}


STORE_FILE = {"facts": [
    seed_fact("auth", "decided", "use-jwt", 100, 200, 100),
    seed_fact("auth", "decided", "jose-lib", 200, None, 200, 0.9),
    seed_fact("auth", "chose", "rs256", Y2024, Y2024 + 40 * DAY, Y2024),  # closed, no successor
    seed_fact("db", "prefers", "postgres", Y2024, None, Y2024 + 35 * DAY, 0.5),
]}


def write(path: Path, document: Any) -> Path:
    path.write_text(document if isinstance(document, str) else json.dumps(document))
    return path


def run_json(store: Path, *args: str, input: str | None = None) -> Any:
    result = memstack(*args, "--json", cwd=store, input=input)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


def exported(store: Path, *args: str) -> Any:
    result = memstack("export", "ferrox", *args, cwd=store)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


def test_import_keeps_windows_and_closings_and_links_successors(store: Path, tmp_path: Path) -> None:
    done = run_json(store, "import", "ferrox", str(write(tmp_path / "memory-facts.json", STORE_FILE)))
    assert (done["facts"], done["added"], done["closed"], done["present"], done["differs"]) == (4, 4, 0, 0, 0)
    assert done["files"] == ["kb/facts/alice/1970-01.jsonl", "kb/facts/alice/2024-01.jsonl",
                             "kb/facts/alice/2024-02.jsonl"]
    old, new = run_json(store, "fact", "history", "--subject", "auth")["items"][:2]
    assert (old["object"], new["object"]) == ("use-jwt", "jose-lib")
    assert old["valid_to"] == 200 and old["superseded_by"] == new["id"] and old["expired_at"] == new["recorded_at"]
    assert new["valid_to"] is None and new["source"] == "ferrox" and new["agent"] == "alice"
    rs256 = run_json(store, "fact", "history", "--subject", "auth")["items"][2]
    assert rs256["valid_to"] == Y2024 + 40 * DAY and rs256["superseded_by"] is None
    assert rs256["expired_at"] == rs256["recorded_at"]  # the seed does not say when it learned the closing
    assert [f["object"] for f in run_json(store, "fact", "get-valid-at", "--ts", "199")["items"]] == ["use-jwt"]
    assert [f["object"] for f in run_json(store, "fact", "get-valid-at", "--ts", "200")["items"]] == ["jose-lib"]
    assert exported(store) == STORE_FILE  # the round trip, in order


def test_importing_twice_adds_nothing_and_the_result_passes_the_hooks(store: Path, tmp_path: Path) -> None:
    path = write(tmp_path / "facts.json", STORE_FILE)
    assert memstack("import", "ferrox", str(path), cwd=store).stdout.strip() == \
        "imported 4 ferrox facts: 4 added, 0 closed, 0 already present"
    assert memstack("check", cwd=store).returncode == 0
    git(store, "add", "-A")
    committed = git(store, "commit", "-m", "import the ferrox store", check=False)
    assert committed.returncode == 0, committed.stdout + committed.stderr
    assert memstack("check", "--all", cwd=store).returncode == 0
    before = tree_snapshot(store)
    again = run_json(store, "import", "ferrox", "-", input=path.read_text())  # stdin, another name: same facts
    assert (again["added"], again["closed"], again["present"], again["files"]) == (0, 0, 4, [])
    assert tree_snapshot(store) == before and git(store, "status", "--porcelain").stdout == ""


def test_a_later_file_closes_what_an_earlier_import_left_open(store: Path, tmp_path: Path) -> None:
    first = {"facts": [seed_fact("auth", "decided", "use-jwt", 100, None, 100)]}
    run_json(store, "import", "ferrox", str(write(tmp_path / "v1.json", first)))
    git(store, "add", "-A")
    git(store, "commit", "-m", "v1")
    later = {"facts": [seed_fact("auth", "decided", "use-jwt", 100, 200, 100),
                       seed_fact("auth", "decided", "jose", 200, None, 200)]}
    done = run_json(store, "import", "ferrox", str(write(tmp_path / "v2.json", later)))
    assert (done["added"], done["closed"], done["present"]) == (1, 1, 0)
    assert exported(store) == later
    git(store, "add", "-A")
    committed = git(store, "commit", "-m", "v2: the closing", check=False)  # an I2-legal closing in place
    assert committed.returncode == 0, committed.stdout + committed.stderr
    assert memstack("check", "--all", cwd=store).returncode == 0
    # the older file again: the store never reopens a fact; it says so
    done = run_json(store, "import", "ferrox", str(tmp_path / "v1.json"))
    assert (done["added"], done["closed"], done["present"], done["differs"]) == (0, 0, 0, 1)
    assert "1 left as the store has them" in memstack("import", "ferrox", str(tmp_path / "v1.json"), cwd=store).stdout


def test_facts_memstack_wrote_come_back_from_ferrox_once_and_a_closing_there_closes_them(
        store: Path, tmp_path: Path) -> None:
    """memstack -> ferrox -> memstack: a fact memstack wrote itself (its own id, any agent, a promotion's
    `-f` id) is found again, not copied; one the ferrox tool closed since is closed here, its successor added."""
    def run(*args: str) -> None:
        assert memstack(*args, cwd=store).returncode == 0, args

    run("capture", "--subject", "deploy", "--predicate", "decided", "--object", "monday", "--valid-from", "2026-01-05",
        "--recorded-at", "2026-01-05")
    run("capture", "--subject", "deploy", "--predicate", "decided", "--object", "tuesday", "--valid-from",
        "2026-02-02", "--recorded-at", "2026-02-02", "--contradicts")
    run("fact", "add", "--agent", "bob", "--subject", "db", "--predicate", "prefers", "--object", "postgres",
        "--valid-from", "2026-01-01", "--recorded-at", "2026-01-01")
    run("intake", "write", "--content", "lint on commit", "--subject", "ci", "--predicate", "chose", "--object",
        "ruff", "--tier", "verified", "--confidence", "0.9", "--created-at", "2026-03-01")
    run("promote", "--now-ts", "2026-03-02")
    out = exported(store)
    assert len(out["facts"]) == 4
    before = tree_snapshot(store)
    again = run_json(store, "import", "ferrox", str(write(tmp_path / "back.json", out)))
    assert (again["added"], again["closed"], again["present"], again["differs"]) == (0, 0, 4, 0), again
    assert tree_snapshot(store) == before
    tuesday = next(f for f in out["facts"] if f["object"] == "tuesday")
    later = {"facts": [*out["facts"], seed_fact("deploy", "decided", "friday", tuesday["valid_from"] + DAY, None,
                                               tuesday["recorded_at"] + DAY)]}
    tuesday["valid_to"] = tuesday["valid_from"] + DAY  # the ferrox tool closed it
    done = run_json(store, "import", "ferrox", str(write(tmp_path / "later.json", later)))
    assert (done["added"], done["closed"], done["present"]) == (1, 1, 3), done
    history = run_json(store, "fact", "history", "--subject", "deploy")["items"]
    assert [(f["object"], f["valid_to"] is None) for f in history] == [("monday", False), ("tuesday", False),
                                                                      ("friday", True)]
    assert history[1]["superseded_by"] == history[2]["id"]
    assert memstack("check", cwd=store).returncode == 0


def test_two_clones_importing_one_file_merge_into_one_copy(store: Path, tmp_path: Path) -> None:
    remote = guarded_remote(store, tmp_path)
    a, b = clone(remote, tmp_path / "a"), clone(remote, tmp_path / "b")
    later = {"facts": [*STORE_FILE["facts"], seed_fact("db", "chose", "pgbouncer", Y2024, None, Y2024 + DAY)]}
    for repo, name, document in ((a, "memory-facts.json", STORE_FILE), (b, "copy-of-it.json", later)):
        run_json(repo, "import", "ferrox", str(write(tmp_path / name, document)))
        git(repo, "add", "-A")
        git(repo, "commit", "-m", "import the ferrox store")
    git(a, "push", "-q", "origin", "main")
    pulled = git(b, "pull", "--no-rebase", "--no-edit", "origin", "main", check=False)  # through the merge driver
    assert pulled.returncode == 0, pulled.stdout + pulled.stderr
    assert sorted(map(json.dumps, exported(b)["facts"])) == sorted(map(json.dumps, later["facts"]))  # each once
    pushed = git(b, "push", "-q", "origin", "main", check=False)  # the guarded remote accepts the merge
    assert pushed.returncode == 0, pushed.stdout + pushed.stderr
    check_history(b)


def test_identical_records_stay_two_facts(store: Path, tmp_path: Path) -> None:
    twice = {"facts": [seed_fact("s", "p", "o", 100, None, 100)] * 2}
    path = write(tmp_path / "twice.json", twice)
    assert run_json(store, "import", "ferrox", str(path))["added"] == 2
    assert run_json(store, "import", "ferrox", str(path))["present"] == 2
    assert exported(store) == twice


def test_export_jsonl_every_fact_and_at(store: Path, tmp_path: Path) -> None:
    run_json(store, "import", "ferrox", str(write(tmp_path / "f.json", STORE_FILE)))
    every = [json.loads(line) for line in memstack("export", "jsonl", cwd=store).stdout.splitlines()]
    assert [f["object"] for f in every] == ["use-jwt", "jose-lib", "rs256", "postgres"]
    assert every == list(factfiles.scan(store))  # each fact as memstack keeps it
    at = memstack("export", "jsonl", "--at", "150", cwd=store).stdout.splitlines()
    assert [json.loads(line)["object"] for line in at] == ["use-jwt"]
    now = memstack("export", "jsonl", "--at", "now", cwd=store).stdout.splitlines()
    assert [json.loads(line)["object"] for line in now] == ["jose-lib", "postgres"]
    assert exported(store, "--at", str(Y2024)) == {"facts": [STORE_FILE["facts"][i] for i in (1, 2, 3)]}
    out = tmp_path / "out" / "all.jsonl"
    out.parent.mkdir()
    done = run_json(store, "export", "jsonl", "--output", str(out))
    assert done == {"facts": 4, "format": "jsonl", "output": str(out)}
    assert [json.loads(line) for line in out.read_text().splitlines()] == every
    assert [p.name for p in out.parent.iterdir()] == ["all.jsonl"]  # no temporary file left
    bad = memstack("export", "jsonl", "--at", "whenever", cwd=store)
    assert bad.returncode == 2 and "at" in bad.stderr


def test_export_of_a_store_without_facts(store: Path, tmp_path: Path) -> None:
    assert exported(store) == {"facts": []}
    assert memstack("export", "jsonl", cwd=store).stdout == ""
    out = tmp_path / "facts.json"
    assert "exported 0 facts" in memstack("export", "ferrox", "--output", str(out), cwd=store).stdout
    assert json.loads(out.read_text()) == {"facts": []}
    # what ferrox writes, memstack reads back: an empty store imports to nothing
    assert run_json(store, "import", "ferrox", str(out))["facts"] == 0


BAD = [
    ("not json {{{", "invalid JSON"),
    ('{"fact": []}', "not a ferrox fact store"),
    ("[]", "not a ferrox fact store"),
    ('{"facts": {}}', "facts must be a list"),
    ('{"facts": [42]}', "facts[0]: a fact is a JSON object"),
    # read as a stream: what follows the document, a second list, a file cut short, an empty file
    ('{"facts": []} {"facts": []}', "invalid JSON"),
    ('{"facts": [], "facts": []}', "facts given twice"),
    ('{"facts": [{"subject": "a"', "invalid JSON"),
    ("", "invalid JSON"),
]


def _bad_record(index: int, **change: Any) -> dict[str, Any]:
    records = [dict(f) for f in STORE_FILE["facts"]]
    for key, value in change.items():
        if value is ...:
            del records[index][key]
        else:
            records[index][key] = value
    return {"facts": records}


BAD_RECORDS = [
    (_bad_record(2, confidence=...), "facts[2]: missing field confidence"),
    (_bad_record(1, valid_to=...), "facts[1]: missing field valid_to"),
    (_bad_record(3, subject=7), "facts[3].subject"),
    (_bad_record(0, predicate="  "), "facts[0].predicate"),
    (_bad_record(1, object=None), "facts[1].object"),
    (_bad_record(1, valid_from="200"), "facts[1].valid_from"),
    (_bad_record(1, valid_from=200.5), "facts[1].valid_from"),
    (_bad_record(1, recorded_at=True), "facts[1].recorded_at"),
    (_bad_record(1, recorded_at=-1), "facts[1].recorded_at"),
    (_bad_record(3, recorded_at=4_070_908_800_000), "facts[3].recorded_at"),  # 2099: in the future
    (_bad_record(0, valid_to=100), "facts[0].valid_to 100: must be after valid_from 100"),
    (_bad_record(0, valid_to=50), "facts[0].valid_to"),
    (_bad_record(3, confidence=1.5), "facts[3].confidence"),
    (_bad_record(3, confidence="high"), "facts[3].confidence"),
    (_bad_record(2, object="AKIAIOSFODNN7EXAMPLE"), "facts[2].object"),  # pragma: allowlist secret
    (_bad_record(1, object="x" * 70_000), "bad facts[1].object: 70,000 bytes"),  # past limits.text_bytes
]


@pytest.mark.parametrize(("content", "named"), BAD + [(json.dumps(d), n) for d, n in BAD_RECORDS])
def test_a_bad_file_is_refused_naming_the_record_and_field_and_nothing_is_written(
        store: Path, tmp_path: Path, content: str, named: str) -> None:
    before = tree_snapshot(store)
    result = memstack("import", "ferrox", str(write(tmp_path / "bad.json", content)), cwd=store)
    assert result.returncode == 2, result.stdout
    assert named in result.stderr and "Traceback" not in result.stderr, result.stderr
    assert "AKIA" not in result.stderr  # a credential is never echoed
    assert tree_snapshot(store) == before and git(store, "status", "--porcelain").stdout == ""


@pytest.mark.parametrize("data", [b"\xff\xfe", b'{"facts": [{"subject": "\xff\xfe"}]}', b'{"facts": [1e400]}'])
def test_bytes_that_are_no_json_are_refused_in_one_line_from_stdin(store: Path, data: bytes) -> None:
    result = subprocess.run([MEMSTACK, "import", "ferrox", "-"], cwd=store, input=data, capture_output=True)
    err = result.stderr.decode()
    assert result.returncode == 2 and err.startswith("memstack: stdin: invalid JSON (") and err.count("\n") == 1, err
    assert "b'" not in err and "\\n" not in err  # the parser's words, not a repr of its bytes
    assert git(store, "status", "--porcelain").stdout == ""


def test_values_the_seed_does_not_know_are_skipped_however_deep(store: Path, tmp_path: Path) -> None:
    deep = '{"a": ' * 100_000 + "[]" + "}" * 100_000  # read without recursion, skipped without being built
    record = json.dumps(STORE_FILE["facts"][0])[:-1] + f', "notes": {{"k": {deep}}}}}'
    path = write(tmp_path / "deep.json", f'{{"meta": {deep}, "facts": [{record}], "after": {{"x": {deep}}}}}')
    assert run_json(store, "import", "ferrox", str(path))["added"] == 1


def test_a_missing_file_or_no_agent_is_refused(store: Path, tmp_path: Path) -> None:
    result = memstack("import", "ferrox", str(tmp_path / "nowhere.json"), cwd=store)
    assert result.returncode == 2 and "no such file" in result.stderr
    result = memstack("import", "ferrox", str(write(tmp_path / "f.json", STORE_FILE)), "--agent", "Bad Name",
                      cwd=store)
    assert result.returncode == 2 and "agent" in result.stderr
    assert git(store, "status", "--porcelain").stdout == ""


# ---- the property: any ferrox store round-trips, and importing it twice adds nothing ------------

TEXT = st.text(alphabet=string.ascii_letters + string.digits + " -_.:é中", min_size=1, max_size=8).filter(str.strip)
TIMES = st.integers(min_value=0, max_value=Y2024 + 400 * DAY)


@st.composite
def chains(draw: Any) -> list[dict[str, Any]]:
    """One subject and predicate's versions: each closed at the next one's start (a linked successor),
    the last open or closed with no successor."""
    subject, predicate = draw(TEXT), draw(TEXT)
    starts = sorted(draw(st.sets(TIMES, min_size=1, max_size=4)))
    last_end = draw(st.one_of(st.none(), st.integers(min_value=1, max_value=DAY)))
    records = []
    for index, start in enumerate(starts):
        end = starts[index + 1] if index + 1 < len(starts) else (None if last_end is None else start + last_end)
        records.append(seed_fact(subject, predicate, draw(TEXT), start, end, draw(TIMES),
                                 draw(st.floats(min_value=0, max_value=1))))
    return records


@st.composite
def ferrox_stores(draw: Any) -> list[dict[str, Any]]:
    records = [r for chain in draw(st.lists(chains(), max_size=4)) for r in chain]
    records += draw(st.lists(st.sampled_from(records), max_size=2)) if records else []  # exact duplicates
    return draw(st.permutations(records))


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(records=ferrox_stores(), staged=st.booleans())
def test_any_ferrox_store_round_trips_and_imports_once(records: list[dict[str, Any]], staged: bool, tmp_path: Path,
                                                       _store_template: Path, capsys: pytest.CaptureFixture[str],
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(importing, "BATCH", 3)  # several batches even for a small file
    root = tmp_path / "store"
    shutil.rmtree(root, ignore_errors=True)
    shutil.copytree(_store_template, root, symlinks=True)

    def imported(document: dict[str, Any]) -> dict[str, Any]:
        capsys.readouterr()
        source = write(tmp_path / "in.json", document)
        assert main(["--store", str(root), "--json", "import", "ferrox", str(source)]) == 0
        return json.loads(capsys.readouterr().out)  # type: ignore[no-any-return]

    closed = sum(r["valid_to"] is not None for r in records)
    if staged:  # first the file as it was before its closings, then as it is: the import closes them
        assert imported({"facts": [{**r, "valid_to": None} for r in records]})["added"] == len(records)
        done = imported({"facts": records})
        assert (done["added"], done["closed"], done["present"]) == (0, closed, len(records) - closed)
    else:
        assert imported({"facts": records})["added"] == len(records)
    out = tmp_path / "out.json"
    assert main(["--store", str(root), "export", "ferrox", "--output", str(out)]) == 0
    # equal on the seed's fields, in the store's order: by month of recorded_at, then as in the file
    assert json.loads(out.read_text()) == {"facts": sorted(records, key=lambda r: month(r["recorded_at"]))}
    before = tree_snapshot(root)
    again = imported({"facts": records})
    assert (again["added"], again["closed"], again["present"]) == (0, 0, len(records))
    assert tree_snapshot(root) == before
    assert main(["--store", str(root), "check"]) == 0  # what it wrote passes every check
    for fact in factfiles.scan(root):  # every closing names its successor when the file has one
        if fact["valid_to"] is not None:
            successors = [r for r in records if (r["subject"], r["predicate"], r["valid_from"])
                          == (fact["subject"], fact["predicate"], fact["valid_to"])]
            assert (fact["superseded_by"] is not None) == bool(successors)


def test_export_names_a_bad_line_of_a_fact_file(store: Path, tmp_path: Path) -> None:
    run_json(store, "import", "ferrox", str(write(tmp_path / "f.json", STORE_FILE)))
    path = store / "kb/facts/alice/2024-01.jsonl"
    path.write_bytes(path.read_bytes() + b"{not json\n")
    result = memstack("export", "jsonl", cwd=store)
    assert result.returncode == 2 and "kb/facts/alice/2024-01.jsonl:2" in result.stderr, result.stderr
    path.write_bytes(path.read_bytes()[:-1])  # torn: no final newline
    result = memstack("export", "ferrox", "--output", str(tmp_path / "out.json"), cwd=store)
    assert result.returncode == 2 and "incomplete" in result.stderr
    assert not (tmp_path / "out.json").exists()  # a failed export leaves no file


def test_an_output_in_no_folder_or_that_is_a_folder_is_named_as_given(store: Path, tmp_path: Path) -> None:
    for target, why in ((tmp_path / "nowhere" / "x.json", "No such file or directory"), (tmp_path, "a folder")):
        result = memstack("export", "ferrox", "--output", str(target), cwd=store)
        assert result.returncode == 2, result.stderr
        assert result.stderr.startswith(f"memstack: bad --output {str(target)!r}: {why}"), result.stderr
        assert ".tmp" not in result.stderr  # the temporary file beside it was named


# ---- a file larger than the memory the import is given -----------------------------------------

LIMIT_MIB = 64  # the address space the import gets (a tiny import runs in it)


def test_a_file_larger_than_the_memory_limit_imports_streamed_from_a_file_and_from_stdin(
        store: Path, tmp_path: Path) -> None:
    """The file is read as a stream, twice (checked whole, then written a batch at a time), never held: an
    import of a file larger than its address space completes (a parse of the whole document dies), from a
    path and from stdin (spooled to a temporary file). Fields the seed does not know, nested ones
    included, and top-level keys beside `facts` are ignored."""
    pad = " ".join(["what the service runs on and why it moved there"] * 200)  # ~10 KB a record
    count = 7_200
    path = tmp_path / "big.json"
    with path.open("w") as out:
        out.write('{"meta": {"written_by": ["ferrox", {"v": 1}]}, "facts": [\n')
        for n in range(count):
            record = seed_fact(f"svc-{n // 2}", "runs on", f"host {n % 2} {pad}", Y2024 + (n // 2) * 1000 + n % 2
                               * DAY, Y2024 + (n // 2) * 1000 + DAY if n % 2 == 0 else None, Y2024 + n)
            record["extra"] = {"nested": [n, {"deep": None}]}
            out.write(("" if n == 0 else ",\n") + json.dumps(record))
        out.write("\n]}\n")
    assert path.stat().st_size > LIMIT_MIB << 20

    def limit() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (LIMIT_MIB << 20, LIMIT_MIB << 20))

    hog = subprocess.run([sys.executable, "-c", f"import orjson; orjson.loads(open({str(path)!r}, 'rb').read())"],
                         capture_output=True, text=True, preexec_fn=limit)
    assert hog.returncode != 0 and "MemoryError" in hog.stderr  # the limit is real: the whole document dies
    ran = subprocess.run([MEMSTACK, "import", "ferrox", str(path), "--json"], cwd=store, capture_output=True,
                         text=True, preexec_fn=limit)
    assert ran.returncode == 0, ran.stderr[-2000:]
    assert json.loads(ran.stdout) | {"files": []} == {"facts": count, "added": count, "closed": 0,
                                                        "present": 0, "differs": 0, "files": []}
    facts = [json.loads(line) for f in sorted((store / "kb/facts").rglob("*.jsonl"))
             for line in f.read_bytes().splitlines()]
    assert len(facts) == count
    by_id = {f["id"]: f for f in facts}
    closed = [f for f in facts if f["valid_to"] is not None]
    assert len(closed) == count // 2  # each first version closed, its successor (the second) named
    assert all(by_id[f["superseded_by"]]["valid_from"] == f["valid_to"] for f in closed)
    assert all("extra" not in f for f in facts)
    with path.open("rb") as stdin:  # again, through stdin: every fact already there
        ran = subprocess.run([MEMSTACK, "import", "ferrox", "-", "--json"], cwd=store, stdin=stdin,
                             capture_output=True, text=True, preexec_fn=limit)
    assert ran.returncode == 0, ran.stderr[-2000:]
    assert json.loads(ran.stdout)["present"] == count
