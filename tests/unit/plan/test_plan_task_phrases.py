"""What a free task asks in lower-case words (task_phrases.py): topics, means, further
acts, diets and dish names become constraints, so a plan that leaves them out fails.

The tasks here are written for these tests (none is a task of the free-task
evaluation), one for each shape of English a rule reads."""

from __future__ import annotations

import pytest
from plan_helpers import judged_free

from guardsearch.apps.plan.task_extract import extract_spec


def asked(task: str) -> dict[str, list[str]]:
    """Each constraint's text → its terms."""
    return {c.text: c.terms for c in extract_spec(task).constraints}


@pytest.mark.parametrize(
    ("task", "text", "terms"),
    [
        ("Write a blog post about container security by June", "container security",
         ["container security"]),
        ("Read 12 articles on soil and irrigation before the course", "irrigation",
         ["irrigation"]),
        ("Stop a spam wave by blocking the sender domains and purging queues", "purging queues",
         ["purging", "queues"]),
        ("Ship the 2.0 release, then tell the beta testers", "tell beta testers",
         ["tell", "testers"]),
        ("Host a gluten-free brunch for 10 friends", "gluten-free", ["gluten-free"]),
        ("Bake a lemon tart for the picnic", "lemon tart", ["lemon"]),
        ("Cook a four-course meal for my parents", "four-course", ["4 course"]),
        ("Cycle 40 km on Saturday", "40 km", ["40", "40000"]),
        ("Patch the fleet during the Tuesday release window", "Tuesday",
         ["Tuesday", "release window"]),
        ("Upgrade the site from Django 3 to 5", "Django", ["Django", "3"]),
    ],
)  # fmt: skip
def test_lower_case_asks_become_constraints(task: str, text: str, terms: list[str]) -> None:
    assert asked(task).get(text) == terms, asked(task)


@pytest.mark.parametrize(
    "task",
    [
        "Finish the report on time and share it with the team",  # a manner, no topic
        "Write a newsletter about gardening and publish it on Friday",  # "publish it": a clause
        "Fix the roof on the shed before winter",  # "on the": a place, not a topic
        "Pass the exam by doing 20 past papers",  # a light verb: the count is the ask
    ],
)
def test_what_is_no_ask_is_not_read_as_one(task: str) -> None:
    texts = set(asked(task))
    assert not texts & {"time", "publish it", "shed", "doing 20 past papers", "gardening and"}
    assert "on time" not in " ".join(texts)


def test_a_delay_after_an_act_is_an_order_after_the_first_act() -> None:
    spec = extract_spec("Switch the DNS to the new host and delete the old zone after 48 hours")
    assert [(d.before, d.after) for d in spec.order] == [("Switch the DNS", "delete the old zone")]
    assert extract_spec("Back up the files before Friday").order == []


async def test_a_plan_leaving_out_the_diet_or_the_topic_fails_with_it_named() -> None:
    task = "Cook a vegan lasagna for 6 guests"
    passed, feedback = await judged_free(
        task, ("buy_ingredients", "pasta and tomatoes for 6"), ("bake_lasagna", "one hour at 180C")
    )
    assert not passed and "vegan (say 'vegan')" in feedback
    passed, _ = await judged_free(
        task, ("buy_ingredients", "vegan cheese and pasta for 6"), ("bake_lasagna", "at 180C")
    )
    assert passed

    task = "Interview 10 teachers about homework load within 4 weeks"
    passed, feedback = await judged_free(
        task, ("recruit_teachers", "10 teachers from two schools"),
        ("run_interviews", "one hour each, over 4 weeks"),
    )  # fmt: skip
    assert not passed and "homework load" in feedback


async def test_an_action_that_starts_with_no_verb_is_not_concrete() -> None:
    passed, feedback = await judged_free(
        "Cut page load to under 2 seconds",
        ("p95_budget", "under 2 seconds"), ("compress_images", "resize to under 2 seconds load"),
    )  # fmt: skip
    assert not passed and "p95_budget) does not start with a verb" in feedback
