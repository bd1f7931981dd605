"""Ids are bound to their record's agent and transaction time (memstack/base/ids.py)."""

from memstack.base import ids


def test_a_new_id_is_bound_to_its_agent_and_time() -> None:
    made = ids.new_id(1_767_225_600_000, "alice")
    assert ids.problem(made, 1_767_225_600_000, "alice") is None
    assert "transaction time" in (ids.problem(made, 1_767_225_600_001, "alice") or "")
    assert "tag" in (ids.problem(made, 1_767_225_600_000, "bob") or "")
    assert made != ids.new_id(1_767_225_600_000, "alice")


def test_a_derived_id_keeps_the_base_random_part_and_agent_and_takes_the_new_time() -> None:
    base = ids.new_id(1_000, "alice")
    fact = ids.derived(base, "r", 5_000)
    assert fact == ids.derived(base, "r", 5_000) != ids.derived(base, "f", 5_000)
    assert ids.problem(fact, 5_000, "alice") is None and ids.problem(fact, 1_000, "alice") is not None


def test_ids_of_another_shape_are_refused_with_the_form_named() -> None:
    for bad in ("0123456789abcdef0123456789ab", "x" * 32, 42, ids.new_id(1, "alice").upper()):
        assert ids.problem(bad, 1, "alice") is not None


def test_a_fact_derived_from_a_legacy_intake_id_is_bound_to_its_agent() -> None:
    legacy = "0190a1b2c3d4e5f6a7b8c9d0e1f2"  # 12 hex time + 16 random: an intake id from before ids were bound
    fact = ids.derived(legacy, "f", 5_000, "alice")
    assert ids.problem(fact, 5_000, "alice") is None and fact == ids.derived(legacy, "f", 5_000, "alice")
