"""Structured diffs: JSON Patches that repair values instead of regenerating them."""

from __future__ import annotations

import pytest

from guardsearch import Context, ScriptedModel, Step, run_step
from guardsearch.guards.diff import DiffProcessor, RepairingSchemaGuard, apply_patch, make_patch

SCHEMA = {
    "type": "object",
    "properties": {
        "n": {"type": "integer"},
        "tags": {"type": "array", "items": {"type": "string"}},
        "mode": {"enum": ["fast", "safe"]},
        "retries": {"type": "integer", "default": 3},
    },
    "required": ["n", "mode", "retries"],
    "additionalProperties": False,
}


def test_a_patch_turns_one_value_into_another_and_applies_back() -> None:
    old, new = {"a": 1, "b": [1]}, {"a": 2, "b": [1, 2]}
    patch = make_patch(old, new)
    assert apply_patch(old, patch) == new
    assert old == {"a": 1, "b": [1]}  # the original is untouched


def test_a_patch_that_does_not_apply_is_a_value_error() -> None:
    with pytest.raises(ValueError, match="patch does not apply"):
        apply_patch({"a": 1}, ({"op": "remove", "path": "/zzz"},))


def test_the_diff_processor_repairs_common_schema_slips() -> None:
    value = {"n": "7", "tags": "red", "mode": "FAST", "extra": True}
    patch = DiffProcessor(SCHEMA).repair(value)
    assert patch is not None
    assert apply_patch(value, patch) == {"n": 7, "tags": ["red"], "mode": "fast", "retries": 3}


def test_the_diff_processor_gives_up_when_no_safe_repair_exists() -> None:
    assert DiffProcessor(SCHEMA).repair({"n": "seven", "mode": "fast", "retries": 1}) is None
    assert DiffProcessor(SCHEMA).repair({"n": 1, "mode": "fast", "retries": 1}) is None


async def test_a_step_applies_a_repair_patch_instead_of_asking_again() -> None:
    model = ScriptedModel(['{"n": "7", "mode": "safe"}'])
    step = Step(
        name="cfg",
        prompt="Config?",
        parser=__import__("json").loads,
        guard=RepairingSchemaGuard(SCHEMA),
    )
    outcome = await run_step(step, Context(objective="Configure"), model)
    assert outcome.value == {"n": 7, "mode": "safe", "retries": 3}
    assert model.calls == 1
