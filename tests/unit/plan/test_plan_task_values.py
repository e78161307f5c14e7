"""How a free task's values are read and matched (task_text.py, task_extract.py,
task_checks.py): fractions of a time unit, counts said in words, a name's kind noun,
and the steps the `concrete` check rejects for naming no act (a name for a verb, a bare
value for a detail).

The tasks here are written for these tests (none is a task of the free-task
evaluation), one for each behaviour."""

from __future__ import annotations

import pytest
from plan_helpers import judged_free

from guardsearch.apps.plan.task_extract import extract_spec
from guardsearch.apps.plan.task_text import words


@pytest.mark.parametrize(
    ("said", "same"),
    [
        ("half an hour", "30 minutes"),
        ("a quarter of an hour", "15 minutes"),
        ("three quarters of an hour", "45 minutes"),
        ("an hour and a half", "90 minutes"),
        ("one and a half hours", "90 minutes"),
        ("half a day", "12 hours"),
        ("a week and a half", "10.5 days"),
    ],
)
def test_a_fraction_of_a_time_unit_is_that_time_in_the_smaller_unit(said: str, same: str) -> None:
    assert words(said) == words(same)


def test_a_fraction_of_something_else_is_left_as_written() -> None:
    assert words("half a pizza") == ("half", "pizza")


async def test_a_task_asking_half_an_hour_is_met_by_30_minutes_not_by_an_hour() -> None:
    task = "Practise piano for half an hour a day over 3 weeks"
    spec = extract_spec(task)
    said = {c.text: c.terms for c in spec.constraints}
    assert said.get("half an hour") == ["0.5 hour", "30 minute"], said
    assert "a day" not in said  # "half an hour a day" is a rate: no one-day duration
    passed, _ = await judged_free(task, ("play_scales", "30 minutes each evening for 3 weeks"))
    assert passed
    passed, feedback = await judged_free(task, ("play_scales", "1 hour each evening for 3 weeks"))
    assert not passed and "half an hour" in feedback


async def test_a_count_said_in_words_must_be_said_as_a_count() -> None:
    task = "Knit a scarf in three colours by Christmas"
    assert {c.text: c.terms for c in extract_spec(task).constraints}["three colours"] == ["3"]
    passed, feedback = await judged_free(
        task, ("buy_wool", "colours for the scarf stripes"),
        ("cast_on_stitches", "done by Christmas eve"),
    )  # fmt: skip
    assert not passed and "three colours" in feedback
    passed, _ = await judged_free(
        task, ("buy_wool", "three colours for the stripes"),
        ("cast_on_stitches", "done by Christmas eve"),
    )  # fmt: skip
    assert passed


@pytest.mark.parametrize(
    ("task", "name", "terms"),
    [
        ("Cut the error rate of the billing API to 1%", "API", ["API", "billing"]),
        ("Move the team chat to the new Slack", "Slack", ["Slack"]),  # "new" describes
        ("Learn the basics of an online Python course", "Python", ["Python", "course"]),
    ],
)
def test_a_name_ending_its_phrase_is_also_named_by_its_kind(
    task: str, name: str, terms: list[str]
) -> None:
    assert {c.text: c.terms for c in extract_spec(task).constraints}.get(name) == terms


async def test_an_action_starting_with_a_name_the_task_uses_is_no_act() -> None:
    task = "Speed up the Postgres queries behind the sales dashboard"
    passed, feedback = await judged_free(
        task, ("postgres_indexes", "add indexes on the sales tables"),
        ("profile_dashboard_queries", "the slowest queries of the dashboard"),
    )  # fmt: skip
    assert not passed and "postgres_indexes) starts with a name" in feedback
    passed, _ = await judged_free(
        task, ("add_postgres_indexes", "on the sales tables"),
        ("profile_dashboard_queries", "the slowest queries of the dashboard"),
    )  # fmt: skip
    assert passed


async def test_a_detail_that_is_only_a_value_says_nothing_done() -> None:
    task = "Bring the checkout page load under 2 seconds for 300 users"
    passed, feedback = await judged_free(
        task, ("measure_page_load", "2 seconds"), ("load_test_checkout", "300 users at once")
    )
    assert not passed and "measure_page_load) has only a value" in feedback
    passed, _ = await judged_free(
        task, ("measure_page_load", "time it under 2 seconds"),
        ("load_test_checkout", "300 users at once"),
    )  # fmt: skip
    assert passed
