"""Finding the store: --store, MEMSTACK_HOME, WILLOW_HOME, then the nearest ancestor."""

import json
from pathlib import Path

import pytest

from helpers import memstack
from memstack.base.errors import MemstackError
from memstack.repo.store import locate


def test_the_order_is_flag_then_memstack_home_then_willow_home_then_ancestor(
        store: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    other = tmp_path / "other"
    from memstack.workflows import install

    install.init(other, ["carol"])
    inside = store / "kb"
    assert locate(None, inside) == store.resolve()
    monkeypatch.setenv("WILLOW_HOME", str(other))
    assert locate(None, inside) == other.resolve()
    monkeypatch.setenv("MEMSTACK_HOME", str(store))
    assert locate(None, inside) == store.resolve()
    assert locate(str(other), inside) == other.resolve()


def test_no_store_anywhere_is_none(tmp_path: Path) -> None:
    assert locate(None, tmp_path) is None


def test_a_named_path_that_is_not_a_store_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(MemstackError, match="not a memstack store"):
        locate(str(tmp_path))
    monkeypatch.setenv("MEMSTACK_HOME", str(tmp_path))
    with pytest.raises(MemstackError, match="MEMSTACK_HOME"):
        locate(None)


def test_cli_store_flag_after_the_verb(store: Path, tmp_path: Path) -> None:
    result = memstack("intake", "list", "--store", str(store), "--json", cwd=tmp_path)
    assert result.returncode == 0 and json.loads(result.stdout) == {"items": [], "next_cursor": None, "remaining": 0}
    result = memstack("intake", "list", "--store", str(tmp_path), cwd=tmp_path)
    assert result.returncode == 2 and "not a memstack store" in result.stderr


def test_agent_comes_from_flag_then_env_then_config(store: Path) -> None:
    import json

    written = json.loads(memstack("intake", "write", "--content", "x", "--json", cwd=store).stdout)
    assert written["record"]["agent"] == "alice"
    written = json.loads(memstack("intake", "write", "--content", "x", "--json", cwd=store,
                                  env={"MEMSTACK_AGENT": "bob"}).stdout)
    assert written["record"]["agent"] == "bob"
    written = json.loads(memstack("intake", "write", "--content", "x", "--agent", "alice", "--json", cwd=store,
                                  env={"MEMSTACK_AGENT": "bob"}).stdout)
    assert written["record"]["agent"] == "alice"
