"""Composite guards: all_of / any_of / majority / weighted, hard vetoes, fatal and patches."""

from __future__ import annotations

import pytest

from guardsearch import (
    Artifact,
    ConfigError,
    Context,
    FunctionGuard,
    GuardResult,
    all_of,
    any_of,
    hard,
    majority,
    member,
    weighted,
)

CTX = Context(objective="judge the artifact")
ART = Artifact(id="a1", step="s", text="hello", value={"n": 1})


def passing(value: object) -> bool:
    return True


def failing(value: object) -> str:
    return "failing said no"


def fatal(value: object) -> GuardResult:
    return GuardResult.fail("unrecoverable", fatal=True)


PATCH = ({"op": "replace", "path": "/n", "value": 2},)


def patching(value: object) -> GuardResult:
    return GuardResult(passed=False, feedback="n must be 2", score=0.0, patch=PATCH)


class Counting:
    """A guard that counts how often it is asked."""

    def __init__(self, verdict: bool = True) -> None:
        self.calls = 0
        self.verdict = verdict
        self.guard = FunctionGuard(self._check, name="counting")

    def _check(self, value: object) -> bool:
        self.calls += 1
        return self.verdict


# all_of


async def test_all_of_passes_when_every_member_passes() -> None:
    result = await all_of(passing, passing).check(ART, CTX)
    assert result.passed
    assert result.score == 1.0


async def test_all_of_fails_when_one_member_fails_with_that_members_feedback() -> None:
    result = await all_of(passing, failing).check(ART, CTX)
    assert not result.passed
    assert result.feedback == "failing said no"


async def test_all_of_reports_one_check_per_member() -> None:
    result = await all_of(passing, failing).check(ART, CTX)
    assert [(c.name, c.passed) for c in result.checks] == [("passing", True), ("failing", False)]


async def test_all_of_score_is_the_weighted_mean_of_member_scores() -> None:
    result = await all_of(member(passing, 3), member(failing, 1)).check(ART, CTX)
    assert result.score == pytest.approx(0.75)


# any_of


async def test_any_of_passes_when_one_member_passes_and_drops_the_others_feedback() -> None:
    result = await any_of(failing, passing).check(ART, CTX)
    assert result.passed
    assert result.feedback == ""


async def test_any_of_fails_when_every_member_fails() -> None:
    result = await any_of(failing, failing).check(ART, CTX)
    assert not result.passed
    assert "failing said no" in result.feedback


async def test_any_of_is_vetoed_by_a_failed_hard_member() -> None:
    result = await any_of(hard(failing), passing).check(ART, CTX)
    assert not result.passed
    assert result.score == 0.0


async def test_any_of_is_vetoed_by_a_failed_hard_member_even_when_another_hard_one_passes() -> None:
    result = await any_of(hard(passing), hard(failing)).check(ART, CTX)
    assert not result.passed
    assert result.score == 0.0


# majority


async def test_majority_passes_when_more_than_half_pass() -> None:
    result = await majority(passing, passing, failing).check(ART, CTX)
    assert result.passed
    assert result.score == pytest.approx(2 / 3)


async def test_majority_fails_when_more_than_half_fail() -> None:
    result = await majority(passing, failing, failing).check(ART, CTX)
    assert not result.passed


async def test_majority_tie_fails() -> None:
    result = await majority(passing, failing).check(ART, CTX)
    assert not result.passed
    assert result.score == 0.5


async def test_majority_counts_weights_not_heads() -> None:
    result = await majority(member(passing, 3), failing, failing).check(ART, CTX)
    assert result.passed


# weighted


async def test_weighted_passes_when_the_weighted_mean_reaches_the_threshold() -> None:
    result = await weighted(member(passing, 3), member(failing, 1), threshold=0.75).check(ART, CTX)
    assert result.passed
    assert result.score == pytest.approx(0.75)


async def test_weighted_fails_below_the_threshold_and_says_so() -> None:
    result = await weighted(member(passing, 1), member(failing, 3), threshold=0.5).check(ART, CTX)
    assert not result.passed
    assert result.score == pytest.approx(0.25)
    assert "failing said no" in result.feedback


async def test_weighted_uses_member_scores_not_just_pass_fail() -> None:
    def half(value: object) -> GuardResult:
        return GuardResult(passed=True, score=0.5)

    result = await weighted(half, half, threshold=0.6).check(ART, CTX)
    assert not result.passed
    assert result.score == pytest.approx(0.5)
    assert "below threshold 0.60" in result.feedback


async def test_weighted_failed_hard_member_gives_score_zero_and_vetoes() -> None:
    result = await weighted(hard(failing), member(passing, 100), threshold=0.1).check(ART, CTX)
    assert not result.passed
    assert result.score == 0.0
    assert result.hard_failed


async def test_weighted_runs_hard_members_first_whatever_their_position() -> None:
    order: list[str] = []

    def soft(value: object) -> bool:
        order.append("soft")
        return True

    def objective(value: object) -> bool:
        order.append("hard")
        return True

    await weighted(soft, hard(objective)).check(ART, CTX)
    assert order == ["hard", "soft"]


async def test_a_hard_failure_short_circuits_so_later_members_are_never_called() -> None:
    counting = Counting()
    result = await weighted(counting.guard, hard(failing)).check(ART, CTX)
    assert not result.passed
    assert counting.calls == 0
    assert [c.name for c in result.checks] == ["failing"]


async def test_a_passing_hard_member_lets_later_members_run() -> None:
    counting = Counting()
    await weighted(counting.guard, hard(passing)).check(ART, CTX)
    assert counting.calls == 1


# fatal


async def test_all_of_propagates_a_fatal_member_failure() -> None:
    result = await all_of(passing, fatal).check(ART, CTX)
    assert not result.passed
    assert result.fatal
    assert result.feedback == "unrecoverable"


async def test_all_of_stops_at_a_fatal_failure() -> None:
    counting = Counting()
    result = await all_of(fatal, counting.guard).check(ART, CTX)
    assert result.fatal
    assert counting.calls == 0


async def test_weighted_propagates_a_fatal_member_failure_when_it_fails() -> None:
    result = await weighted(fatal, failing).check(ART, CTX)
    assert not result.passed
    assert result.fatal


async def test_a_fatal_member_does_not_make_a_passing_composite_fatal() -> None:
    result = await any_of(fatal, passing).check(ART, CTX)
    assert result.passed
    assert not result.fatal


async def test_a_passing_majority_is_never_fatal() -> None:
    result = await majority(passing, passing, fatal).check(ART, CTX)
    assert result.passed
    assert not result.fatal


# patch


async def test_a_failing_composite_carries_its_members_patch() -> None:
    result = await all_of(passing, patching).check(ART, CTX)
    assert not result.passed
    assert result.patch == PATCH


async def test_a_passing_composite_carries_no_patch() -> None:
    result = await any_of(patching, passing).check(ART, CTX)
    assert result.passed
    assert result.patch is None


# configuration


def test_a_composite_needs_at_least_one_member() -> None:
    with pytest.raises(ConfigError, match="at least one member"):
        all_of()


def test_a_threshold_outside_zero_to_one_is_a_config_error() -> None:
    with pytest.raises(ConfigError, match="threshold"):
        weighted(passing, threshold=1.5)


def test_a_non_positive_weight_is_a_config_error() -> None:
    with pytest.raises(ConfigError, match="weight"):
        member(passing, 0)


def test_a_composite_is_named_after_its_mode_and_members() -> None:
    assert all_of(passing, failing).name == "all(passing, failing)"
