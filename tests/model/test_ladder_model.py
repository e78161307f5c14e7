"""Smoke test of a model ladder on the real embedded models (0.5B, then 1.5B), when the
1.5B's extra is installed: escalation after two rejections, one budget, a swap."""

from __future__ import annotations

import asyncio

import pytest

from guardsearch import Budget, Context, GuardResult, Metered, Step, StepFailed, Trace, run_step
from guardsearch.core.model_usage import model_usage
from guardsearch.models.embedded import embedded_info, embedded_status
from guardsearch.models.ladder import ModelLadder
from guardsearch.models.spec import model_from_spec

pytestmark = pytest.mark.model
pytest.importorskip("llama_cpp")

# A repeated answer is dropped unjudged (a repeat, not a rejection), so the ladder also
# climbs on one repeat: either way the third call goes to the 1.5B.
SPEC = "ladder:embedded,embedded:1.5b?after=2&repeat=1&memory=swap"


def test_the_ladder_climbs_to_the_1_5b_after_two_rejections() -> None:
    if not embedded_status(embedded_info("1.5b"))["installed"]:
        pytest.skip("pip install 'guardsearch[embedded-1-5b]' to run the ladder smoke test")
    ladder = model_from_spec(SPEC)
    assert isinstance(ladder, ModelLadder) and ladder.memory == "swap"
    cheap, strong = ladder.rungs
    metered = Metered(ladder, Budget.of(calls=3), Trace())

    def guard(value: object) -> GuardResult:
        # The 0.5B's answers (the first two calls) are rejected whatever they say, so
        # the third call must go to the 1.5B; that one passes when it is right.
        if metered.budget.used.calls < 3:
            return GuardResult.fail("rejected to climb the ladder", "smoke")
        ok = isinstance(value, dict) and value.get("answer") == 42
        return GuardResult.ok("smoke") if ok else GuardResult.fail("not 42", "smoke")

    step = Step(
        name="multiply",
        prompt="What is 6 times 7? Answer as JSON.",
        schema={
            "type": "object",
            "properties": {"answer": {"type": "integer"}},
            "required": ["answer"],
        },
        guard=guard,
        rmax=3,
        max_tokens=24,
    )
    try:
        outcome = asyncio.run(run_step(step, Context(objective="multiply"), metered))
    except StepFailed:
        # The 1.5B may give the answer the 0.5B already gave (and had rejected): a
        # repeat, dropped unjudged. The climb itself is what this test checks.
        pass
    else:
        assert outcome.attempts == 3 and outcome.value == {"answer": 42}
    usage = model_usage(metered.trace.events)
    assert list(usage) == [cheap.name, strong.name]
    assert usage[cheap.name]["calls"] == 2 and usage[strong.name]["calls"] == 1
    assert usage[strong.name]["escalations"] == 1 and metered.budget.used.calls == 3
    # memory=swap: the 0.5B was let go before the 1.5B answered. Earlier tests in the
    # same process may have left the 1.5B loaded too (models are cached per process);
    # then the first call let it go as well, so one or two swaps.
    assert ladder.swaps in (1, 2)
    assert getattr(strong, "loaded", False) and not getattr(cheap, "loaded", True)
