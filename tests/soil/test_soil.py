"""L4 SOIL: put, get, update, expire, list."""

import json
from pathlib import Path

import pytest

from helpers import items, memstack, tree_snapshot


def test_put_get_update_expire_list_through_the_cli(store: Path) -> None:
    put = memstack("soil", "put", "session", "current", "--value", '{"task": "lexer", "step": 1}', "--json",
                   cwd=store)
    assert put.returncode == 0, put.stderr
    on_disk = json.loads((store / "store/session/current.json").read_text())
    assert on_disk == json.loads(put.stdout)
    assert on_disk["value"] == {"task": "lexer", "step": 1} and on_disk["expires_at"] is None

    update = memstack("soil", "update", "session", "current", "--value", '{"step": 2}', "--json", cwd=store)
    record = json.loads(update.stdout)
    assert record["value"] == {"task": "lexer", "step": 2}
    assert record["created_at"] == on_disk["created_at"] and record["updated_at"] >= on_disk["updated_at"]

    got = memstack("soil", "get", "session", "current", "--json", cwd=store)
    assert json.loads(got.stdout) == record

    assert memstack("soil", "put", "session", "other", "--value", "[1, 2]", cwd=store).returncode == 0
    keys = [r["key"] for r in items(json.loads(memstack("soil", "list", "session", "--json", cwd=store).stdout))]
    assert keys == ["current", "other"]

    expired = memstack("soil", "expire", "session", "other", "--json", cwd=store)
    assert json.loads(expired.stdout)["expires_at"] is not None
    assert (store / "store/session/other.json").exists()  # expired, never deleted
    keys = [r["key"] for r in items(json.loads(memstack("soil", "list", "session", "--json", cwd=store).stdout))]
    assert keys == ["current"]
    everything = items(json.loads(memstack("soil", "list", "session", "--include-expired", "--json", cwd=store).stdout))
    assert [r["key"] for r in everything] == ["current", "other"]
    gone = memstack("soil", "get", "session", "other", cwd=store)
    assert gone.returncode == 2 and gone.stderr == (f"memstack: bad key 'other': session/other expired at"
                                                   f" {json.loads(expired.stdout)['expires_at']} (it is kept:"
                                                   " --include-expired reads it)\n")
    assert memstack("soil", "update", "session", "other", "--value", "1", cwd=store).returncode == 2


def test_a_non_object_update_replaces_the_value(store: Path) -> None:
    memstack("soil", "put", "notes", "n1", "--value", '{"a": 1}', cwd=store)
    record = json.loads(memstack("soil", "update", "notes", "n1", "--value", '"plain"', "--json", cwd=store).stdout)
    assert record["value"] == "plain"


def test_value_from_a_file_and_from_stdin(store: Path, tmp_path: Path) -> None:
    value = tmp_path / "v.json"
    value.write_text('{"from": "file"}')
    assert memstack("soil", "put", "c", "k", "--file", str(value), cwd=store).returncode == 0
    assert memstack("soil", "put", "c", "j", "--file", "-", input='{"from": "stdin"}', cwd=store).returncode == 0
    assert json.loads((store / "store/c/k.json").read_text())["value"] == {"from": "file"}
    assert json.loads((store / "store/c/j.json").read_text())["value"] == {"from": "stdin"}


@pytest.mark.parametrize(("args", "field"), [
    (["put", "session", "k", "--value", "{not json"], "--value"),
    (["put", "session", "k", "--value", "NaN"], "--value"),
    (["put", "../x", "k", "--value", "1"], "collection"),
    (["put", "session", "../../etc/passwd", "--value", "1"], "key"),
    (["put", "Session", "k", "--value", "1"], "collection"),
    (["put", "session", "a b", "--value", "1"], "key"),
    (["update", "session", "missing", "--value", "1"], "missing"),
    (["get", "session", "missing"], "missing"),
    (["expire", "session", "missing"], "missing"),
])
def test_bad_soil_input_is_refused_and_writes_nothing(store: Path, args: list[str], field: str) -> None:
    before = tree_snapshot(store)
    result = memstack("soil", *args, cwd=store)
    assert result.returncode == 2 and field in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1
    assert tree_snapshot(store) == before


@pytest.mark.parametrize("edited, said", [
    ('{"v": 23}\n', "invalid soil record: (record): 'key' is a required property"),
    ("[1]\n", "invalid soil record: (record): [1] is not of type 'object'"),
])
def test_a_soil_file_edited_by_hand_into_no_record_is_named(store: Path, edited: str, said: str) -> None:
    """JSON that is no SOIL record (a conflict resolved by hand, an editor): each verb that reads it names the file
    and what is wrong, exit 2, never a traceback."""
    assert memstack("soil", "put", "notes", "k", "--value", "1", cwd=store).returncode == 0
    (store / "store/notes/k.json").write_text(edited)
    before = tree_snapshot(store)
    for args in (["get", "notes", "k"], ["list", "notes"], ["update", "notes", "k", "--value", "2"]):
        done = memstack("soil", *args, cwd=store)
        assert done.returncode == 2 and "Traceback" not in done.stderr, (args, done.stderr)
        assert done.stderr.strip() == f"memstack: store/notes/k.json: {said}", args
    assert tree_snapshot(store) == before
