"""The accuracy arithmetic of benchmarks/guard_accuracy.py: Wilson intervals, false
reject / false accept counting, splits, and the stratified model sample."""

from __future__ import annotations

import random

import guard_accuracy
from guardbench.cases import Case, balanced, with_splits
from guardbench.rates import Outcome, Rate, by_shape, false_accept, false_reject, wilson
from guardbench.registry import GuardSpec


def test_wilson_matches_known_values() -> None:
    low, high = wilson(5, 10)
    assert (round(low, 4), round(high, 4)) == (0.2366, 0.7634)
    low, high = wilson(0, 10)
    assert low == 0.0 and round(high, 4) == 0.2775
    low, high = wilson(10, 10)
    assert round(low, 4) == 0.7225 and round(high, 4) == 1.0
    assert wilson(0, 0) == (0.0, 1.0)


def test_interval_narrows_with_more_cases() -> None:
    small = wilson(1, 20)
    large = wilson(10, 200)
    assert large[1] - large[0] < small[1] - small[0]


def test_false_reject_and_false_accept_count_the_right_cases() -> None:
    outcomes = [
        Outcome("pass", "a", True),
        Outcome("pass", "a", False),  # a false reject
        Outcome("pass", "b", True),
        Outcome("fail", "c", True),  # a false accept
        Outcome("fail", "c", False),
    ]
    assert false_reject(outcomes) == Rate(1, 3)
    assert false_accept(outcomes) == Rate(1, 2)
    assert by_shape(outcomes) == {"a": Rate(1, 2), "b": Rate(0, 1), "c": Rate(1, 2)}
    assert Rate(1, 4).as_dict()["rate"] == 0.25
    assert Rate(0, 0).value is None


def _cases(n: int) -> list[Case]:
    return [
        Case(guard="g", id=f"{label}-{shape}-{i}", label=label, shape=shape, input={"i": i})
        for label in ("pass", "fail")
        for shape in ("x", "y")
        for i in range(n)
    ]


def test_splits_are_deterministic_balanced_and_disjoint() -> None:
    cases = _cases(7)
    first = with_splits(cases, 1)
    assert first == with_splits(list(reversed(cases)), 1)[::-1]
    tune = {c.id for c in first if c.split == "tune"}
    held = {c.id for c in first if c.split == "heldout"}
    assert not tune & held and len(tune | held) == len(cases)
    for label in ("pass", "fail"):
        for shape in ("x", "y"):
            stratum = [c for c in first if c.label == label and c.shape == shape]
            assert sum(c.split == "tune" for c in stratum) == 4  # 7 cut at 4 / 3
    assert {c.id for c in with_splits(cases, 2) if c.split == "tune"} != tune


def test_balanced_takes_shapes_in_turn() -> None:
    cases = _cases(10)
    chosen = balanced(
        [c for c in cases if c.label == "pass"],
        [c for c in cases if c.label == "fail"],
        6,
        random.Random(0),
    )
    assert sum(c.label == "pass" for c in chosen) == sum(c.label == "fail" for c in chosen) == 6
    assert sum(c.shape == "x" for c in chosen if c.label == "pass") == 3


def test_sample_is_half_each_label() -> None:
    picked = guard_accuracy.sample(_cases(20), 10)
    assert len(picked) == 10
    assert sum(c.label == "pass" for c in picked) == 5
    assert picked == guard_accuracy.sample(_cases(20), 10)


async def test_measure_reports_rates_per_split_and_shape() -> None:
    async def judge(case: Case, model: object) -> bool:
        return case.shape.endswith("x")  # accepts every *x, rejects every *y

    spec = GuardSpec(name="g", where="here", what="it", build=lambda ctx: [], judge=judge)
    cases = with_splits(
        [
            Case(guard="g", id=f"{shape}-{i}", label=label, shape=shape, input={})
            for label, shape in (
                ("pass", "ok-x"),
                ("pass", "ok-y"),
                ("fail", "bad-x"),
                ("fail", "bad-y"),
            )
            for i in range(4)
        ],
        3,
    )
    verdicts = [await judge(c, None) for c in cases]
    row = guard_accuracy.measure(spec, cases, verdicts)
    assert (row["false_reject"]["k"], row["false_reject"]["n"]) == (4, 8)
    assert (row["false_accept"]["k"], row["false_accept"]["n"]) == (4, 8)
    assert row["shapes"]["ok-y"] | {} == {"label": "pass", **Rate(4, 4).as_dict()}
    assert row["shapes"]["bad-y"]["k"] == 0
    assert row["splits"]["tune"]["false_reject"]["n"] == 4
    assert sorted(row["wrong"]) == sorted(c.id for c in cases if c.shape in ("ok-y", "bad-x"))
