"""The scorecard: JSON figures, the Markdown report, the deltas and the PNG plots."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from helpers import result

from guardsearch.experiments.metrics import newcombe, newcombe_paired, wilson
from guardsearch.experiments.scorecard import build_scorecard, markdown, write_scorecard

PNG = b"\x89PNG\r\n\x1a\n"


def card() -> dict:
    results = [
        result(problem="a", method="linear", succeeded=False, calls=1, budget=60),
        result(problem="b", method="linear", succeeded=True, calls=1, budget=60),
        result(problem="a", method="search", succeeded=True, calls=12, budget=60),
        result(problem="b", method="search", succeeded=True, calls=40, budget=60),
        result(problem="c", method="search", succeeded=False, calls=60, budget=60),
    ]
    return build_scorecard(
        results,
        methods=["linear", "search"],
        problems=["a", "b", "c"],
        budgets=[10, 20, 60],
        derived={"linear": True, "search": True},
        meta={"name": "demo", "suite": "s", "model": "fake", "reference": "linear"},
    )


def test_each_method_has_its_figures_and_curve() -> None:
    c = card()
    search = c["methods"]["search"]
    assert (search["n"], search["successes"]) == (3, 2)
    assert (search["ci_low"], search["ci_high"]) == pytest.approx(wilson(2, 3))
    assert [p["successes"] for p in search["curve"]] == [0, 1, 2]
    assert [p["budget"] for p in search["curve"]] == [10, 20, 60]
    assert c["methods"]["linear"]["curve"][0]["successes"] == 1
    assert c["models"] == ["fake"]


def test_the_delta_is_paired_on_the_common_problems() -> None:
    (delta,) = card()["deltas"]
    assert (delta["method"], delta["vs"], delta["n"]) == ("search", "linear", 2)
    assert (delta["successes"], delta["successes_vs"]) == (2, 1)
    assert (delta["only_method"], delta["only_vs"]) == (1, 0)
    assert delta["delta"] == pytest.approx(0.5)
    assert delta["mean_tokens"] == pytest.approx((12 + 40) * 12 / 2)


def test_the_delta_interval_is_for_paired_outcomes() -> None:
    # Ten problems; both methods solved the same three (no discordant pair).
    results = [
        result(problem=f"p{i}", method=m, succeeded=i < 3, budget=60)
        for m in ("tuned", "plain")
        for i in range(10)
    ]
    (delta,) = build_scorecard(
        results,
        methods=["plain", "tuned"],
        problems=[f"p{i}" for i in range(10)],
        budgets=[60],
        derived={},
        meta={"reference": "plain"},
    )["deltas"]
    assert (delta["delta"], delta["only_method"], delta["only_vs"]) == (0.0, 0, 0)
    assert (delta["ci_low"], delta["ci_high"]) == pytest.approx(newcombe_paired(3, 0, 0, 7)[1:])
    _, low, high = newcombe(3, 10, 3, 10)  # the unpaired interval: about ±36 points
    assert delta["ci_high"] - delta["ci_low"] < 0.6 * (high - low)


def test_the_markdown_states_model_budgets_rates_and_prefix_reuse() -> None:
    text = markdown(card())
    assert "model spec: `fake`" in text
    assert "| search | 3 | 2 | 66.7% [20.8%, 93.9%]" in text
    assert "| linear | 50.0% (1/2) | 50.0% (1/2) | 50.0% (1/2) |" in text
    assert "| search | linear | 2 | 2 / 1 | 1 / 0 | +50.0 pts" in text
    assert "| search | 1,120 | 560 | 560 | 50.0% |" in text


def test_writing_gives_json_markdown_and_three_pngs(tmp_path: Path) -> None:
    paths = write_scorecard(card(), tmp_path, "demo")
    assert json.loads(paths["json"].read_text())["methods"]["search"]["successes"] == 2
    assert paths["markdown"].read_text().startswith("# Scorecard: demo")
    for key in ("budget_plot", "calls_plot", "prefix_plot"):
        data = paths[key].read_bytes()
        assert data.startswith(PNG)
        assert len(data) > 5_000


def test_the_steering_counts_of_the_trials_add_up_per_method() -> None:
    # issue 16: repeats, repairs and prevented failures flow from each trial's trace
    steered = {"outputs": 10, "repeats": 4, "repeat_share": 0.4, "repairs": 1, "prevented": 2}
    results = [
        result(problem="a", method="search", budget=60, steering=steered),
        result(problem="b", method="search", budget=60, steering=steered),
        result(problem="a", method="linear", budget=60),  # stored before the counts existed
    ]
    built = build_scorecard(
        results,
        methods=["linear", "search"],
        problems=["a", "b"],
        budgets=[60],
        derived={},
        meta={"name": "demo"},
    )
    assert built["methods"]["search"]["steering"] == {
        "outputs": 20,
        "repeats": 8,
        "repeat_share": 0.4,
        "repairs": 2,
        "prevented": 4,
    }
    assert built["methods"]["linear"]["steering"]["outputs"] == 0
    assert "| search | 20 | 8 (40.0%) | 2 | 4 |" in markdown(built)
