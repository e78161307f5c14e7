"""Context: immutable, objective first, two feedback channels kept apart."""

from __future__ import annotations

import dataclasses

import pytest

from guardsearch import ConfigError, Context, PromptTemplate

RETRY = "## Your previous output for this step was rejected"
FAILURES = "## Downstream failures of earlier attempts"


def busy_context() -> Context:
    return (
        Context(objective="Plan a trip", constraints=("under 500 EUR",))
        .amend(artifact=("draft", "Lisbon, 3 days"))
        .amend(human_input=("when?", "May"))
        .amend(failure="booking failed: no flights")
        .amend(feedback="too expensive")
    )


def test_the_rendered_prompt_starts_with_the_primary_objective() -> None:
    assert busy_context().render().startswith("Primary objective: Plan a trip\n")


def test_a_template_cannot_push_the_objective_out_of_the_first_message() -> None:
    template = PromptTemplate.parse("[system]\nYou are terse.\n[user]\nGo.")
    first, user = template.render(busy_context())
    assert first.content.startswith("Primary objective: Plan a trip")
    assert first.content.endswith("You are terse.")
    assert user.content == "Go."


def test_amend_returns_a_new_context_and_never_mutates_the_original() -> None:
    original = Context(objective="Plan a trip")
    snapshot = dataclasses.replace(original)
    amended = original.amend(
        artifact=("a", "b"), constraint="c", feedback="f", failure="x", human_input=("q", "a")
    )
    assert amended is not original
    assert original == snapshot
    assert amended.feedback == ("f",)
    assert amended.failures == ("x",)


def test_a_context_is_frozen() -> None:
    with pytest.raises(dataclasses.FrozenInstanceError):
        Context(objective="x").objective = "y"  # type: ignore[misc]


def test_amending_changes_the_digest() -> None:
    ctx = Context(objective="Plan a trip")
    assert ctx.amend(feedback="no").digest != ctx.digest
    assert Context(objective="Plan a trip").digest == ctx.digest


def test_the_failure_window_keeps_the_most_recent_n() -> None:
    ctx = Context(objective="o", window=3)
    for i in range(1, 6):
        ctx = ctx.amend(failure=f"failure {i}")
    assert ctx.failures == ("failure 3", "failure 4", "failure 5")


def test_older_failures_are_counted_and_summarised() -> None:
    ctx = Context(objective="o", window=3)
    for i in range(1, 6):
        ctx = ctx.amend(failure=f"failure {i}")
    assert ctx.dropped_failures == 2
    assert "failure 1" in ctx.older_failures
    assert "failure 2" in ctx.older_failures
    rendered = ctx.render()
    assert "(2 older failure(s), summarised)" in rendered
    assert "failure 1" in rendered


def test_the_failure_summary_stays_bounded_however_many_failures_pile_up() -> None:
    ctx = Context(objective="o", window=2)
    for i in range(500):
        ctx = ctx.amend(failure=f"failure {i}: " + "x" * 400)
    assert ctx.dropped_failures == 498
    assert len(ctx.older_failures) <= 600
    assert len(ctx.render()) < 600 + 2 * 450 + 500


def test_a_summarised_failure_is_flattened_to_one_short_line() -> None:
    ctx = Context(objective="o", window=1)
    ctx = ctx.amend(failure="first\nline " + "y" * 300).amend(failure="second")
    assert "\n" not in ctx.older_failures
    assert len(ctx.older_failures) <= 2 + 120


def test_the_retry_and_failure_channels_render_in_separate_sections() -> None:
    rendered = busy_context().render()
    failures_at, retry_at = rendered.index(FAILURES), rendered.index(RETRY)
    failure_section = rendered[failures_at:retry_at]
    retry_section = rendered[retry_at:]
    assert "booking failed: no flights" in failure_section
    assert "too expensive" not in failure_section
    assert "too expensive" in retry_section
    assert "booking failed" not in retry_section


def test_an_empty_channel_renders_no_section() -> None:
    rendered = Context(objective="o").render()
    assert RETRY not in rendered
    assert FAILURES not in rendered


def test_for_next_step_clears_only_the_retry_channel() -> None:
    ctx = busy_context()
    following = ctx.for_next_step()
    assert following.feedback == ()
    assert following == dataclasses.replace(ctx, feedback=())
    assert "booking failed: no flights" in following.render()
    assert RETRY not in following.render()


def test_without_failures_clears_only_the_failure_channel() -> None:
    ctx = busy_context().amend(failure="a").amend(failure="b").amend(failure="c")
    cleared = ctx.without_failures()
    assert (cleared.failures, cleared.older_failures, cleared.dropped_failures) == ((), "", 0)
    assert cleared.feedback == ctx.feedback


def test_an_empty_objective_is_a_config_error() -> None:
    with pytest.raises(ConfigError, match="objective"):
        Context(objective="  ")


def test_a_window_below_one_is_a_config_error() -> None:
    with pytest.raises(ConfigError, match="window"):
        Context(objective="o", window=0)


def test_a_listed_verdict_keeps_its_fix() -> None:
    # The fix follows the finding; cut at the output's 160 characters it was lost.
    finding = "dead-end: if s4 (enable_feature_flag) fails, no path reaches the goal or the safe facts (lost {app_live}, no recovery step)"  # noqa: E501
    fix = "Fix: add a recovery step disable_feature_flag after the main steps"
    ctx = Context(objective="o").amend(tried=("x" * 400, f"rejected: {finding}. {fix}"))
    assert fix in ctx.render()
    assert "x" * 161 not in ctx.render()  # the output itself is still cut
