"""base/synced.py: many files written at once, their fsyncs made together; each file as write_atomic
and append_held leave it, and undone with the rest when the work fails."""

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from memstack.base import files, synced


def a_store(tmp_path: Path) -> Path:
    store = tmp_path / "store"
    store.mkdir()
    (store / "memstack.yaml").write_text("version: 1\n")  # where files.py puts its temporary files
    return store


def test_many_files_replaced_and_made_hold_their_bytes_and_leave_no_temporary_file(tmp_path: Path) -> None:
    store = a_store(tmp_path)
    wanted = {store / "kb" / f"v{n % 3}" / f"{n:03}.json": f"[{n}]\n".encode() * (n + 1) for n in range(150)}
    for path in list(wanted)[::2]:  # half of them there already, with other bytes
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(b"old\n")
    synced.write_atomic_many((path, [data[:3], data[3:]] if n % 5 == 0 else data)
                             for n, (path, data) in enumerate(wanted.items()))
    assert {path: path.read_bytes() for path in wanted} == wanted
    assert all(oct(path.stat().st_mode & 0o777) == "0o644" for path in wanted)
    assert os.listdir(store / ".memstack" / "tmp") == []


def test_appends_to_many_logs_land_in_order(tmp_path: Path) -> None:
    store = a_store(tmp_path)
    logs = [store / "kb" / "promotions" / f"a{n % 2}" / f"2026-01-{n // 2 + 1:02}.jsonl" for n in range(60)]
    for path in logs:
        path.parent.mkdir(parents=True, exist_ok=True)
    synced.append_many_held((path, str(path.relative_to(store)), f'{{"n":{n}}}\n'.encode())
                            for n, path in enumerate(logs + logs))
    assert [path.read_bytes() for path in logs] == [f'{{"n":{n}}}\n{{"n":{n + 60}}}\n'.encode() for n in range(60)]


def test_work_that_fails_midway_puts_every_file_back_and_leaves_no_temporary_file(tmp_path: Path) -> None:
    store = a_store(tmp_path)
    old = store / "kb" / "old.json"
    old.parent.mkdir(parents=True)
    old.write_bytes(b"before\n")
    log = store / "kb" / "log.jsonl"
    log.write_bytes(b'{"n":0}\n')

    def items() -> Iterator[tuple[Path, bytes]]:
        yield old, b"after\n"
        for n in range(synced.GROUP + 10):  # a whole group moved into place, then part of the next written
            yield store / "kb" / "new" / f"{n}.json", b"{}\n"
        raise RuntimeError("the builder failed")

    with pytest.raises(RuntimeError), files.undone_on_error(store):
        synced.append_many_held([(log, "kb/log.jsonl", b'{"n":1}\n')])
        synced.write_atomic_many(items())
    assert old.read_bytes() == b"before\n" and log.read_bytes() == b'{"n":0}\n'
    assert not (store / "kb" / "new").exists()
    assert [name for name in os.listdir(store / ".memstack" / "tmp") if name.endswith(".tmp")] == []
