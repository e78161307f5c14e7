"""The Game of 24 as an experiment suite: Tree of Thoughts' puzzles and its baselines.

Problems: `{"range": "900:1000", "every": 1}` selects data-set rows by index in ToT's
convention (row i is rank i + 1; ToT's test set is 900:1000), `every: n` keeps every
n-th; a list of strings gives puzzles directly ("4 5 6 10").

Methods: `io`, `cot`, `cot-sc` (`k`, `temperature`), `tot-bfs` (`width`, `evaluations`),
`cot-distilled` (`examples`: a JSON file or a list of {numbers, steps, answer}), and
every search strategy (`dfs`, `beam`, `astar`, ...; options go to `search`, plus
`weights` / `threshold` for the tuned soft score).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from fractions import Fraction
from pathlib import Path
from typing import Any

from guardsearch.apps.game24 import baselines
from guardsearch.apps.game24.baselines import Example
from guardsearch.apps.game24.score import DEFAULT_WEIGHTS, features
from guardsearch.apps.game24.solve import puzzles
from guardsearch.apps.game24.space import Game24Space
from guardsearch.apps.game24.weighted import WeightedGame24Space
from guardsearch.core.errors import ConfigError
from guardsearch.experiments.suite import MethodSpec, Problem
from guardsearch.experiments.trial import TrialResult
from guardsearch.models.metered import Metered
from guardsearch.search import strategy_names

LINEAR = ("io", "cot", "cot-sc", "cot-distilled")


def select(selector: Any) -> list[Problem]:
    """Problems for a selector (see the module docstring)."""
    if isinstance(selector, list):
        return [Problem(id=str(p), input=str(p)) for p in selector]
    if isinstance(selector, dict) and "exclude" in selector:
        rest = {k: v for k, v in selector.items() if k != "exclude"}
        dropped = {p.id for p in select(selector["exclude"])}
        return [p for p in select(rest) if p.id not in dropped]
    if selector is None:
        selector = {"range": "900:1000"}
    if isinstance(selector, str):
        selector = {"range": selector}
    if not isinstance(selector, dict):
        raise ConfigError(f"game24 problems: a range, a dict or a list, got {selector!r}")
    start_text, _, end_text = str(selector.get("range", "900:1000")).partition(":")
    try:
        start, end = int(start_text), int(end_text)
        every = int(selector.get("every", 1))
    except ValueError as exc:
        raise ConfigError(f"game24 range is START:END (row indices), got {selector}") from exc
    rows = puzzles()
    if not 0 <= start < end <= len(rows) or every < 1:
        raise ConfigError(f"game24 range must lie in 0:{len(rows)} with every >= 1")
    return [
        Problem(
            id=f"{i:04d}",
            input=rows[i].numbers,
            meta={"rank": rows[i].rank, "solved_rate": rows[i].solved_rate},
        )
        for i in range(start, end, every)
    ]


def load_examples(value: Any) -> list[Example]:
    if isinstance(value, str | Path):
        try:
            value = json.loads(Path(value).read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise ConfigError(f"cannot read examples from {value}: {exc}") from exc
    if not isinstance(value, list) or not value:
        raise ConfigError("cot-distilled needs examples: a JSON file or a non-empty list")
    return [Example(e["numbers"], tuple(e["steps"]), e["answer"]) for e in value]


class Game24Suite:
    """Suite protocol for the Game of 24 (see `guardsearch.experiments.suite`)."""

    name = "game24"

    def node_features(self, node: Mapping[str, Any]) -> dict[str, float]:
        """Tuning features of a stored node: those `WeightedGame24Space` can weigh."""
        return features([Fraction(v) for v in node.get("left") or []])

    def examples(self, results: Sequence[TrialResult]) -> list[dict[str, Any]]:
        """Winning paths as chain-of-thought examples for `cot-distilled`."""
        return [
            Example(str(r.detail["numbers"]), tuple(r.detail["path"]), str(r.answer)).as_dict()
            for r in results
        ]

    def problems(self, selector: Any) -> list[Problem]:
        return select(selector)

    def method_names(self) -> list[str]:
        return [*LINEAR, "tot-bfs", *strategy_names()]

    def deterministic(self, method: MethodSpec) -> bool:
        # Every method is seeded. cot-sc is a method of k calls: under a budget below k
        # it is counted as not solved (a cut-short vote would be another method).
        return True

    async def run(
        self, method: MethodSpec, problem: Problem, model: Metered, trial: int
    ) -> dict[str, Any]:
        numbers = str(problem.input)
        options = dict(method.options)
        name = method.method
        if name == "io":
            return await baselines.io(numbers, model, seed=trial)
        if name == "cot":
            return await baselines.cot(numbers, model, seed=trial)
        if name == "cot-distilled":
            examples = load_examples(options.pop("examples", None))
            return await baselines.cot(numbers, model, examples=examples, seed=trial)
        if name == "cot-sc":
            return await baselines.cot_sc(numbers, model, seed=trial * 1000, **options)
        if name == "tot-bfs":
            return await baselines.tot_bfs(numbers, model, **options)
        if name in strategy_names():
            weights = options.pop("weights", None)
            threshold = options.pop("threshold", None)
            space = None
            if weights is not None or threshold is not None:

                def space(values: tuple[Fraction, ...]) -> Game24Space:
                    return WeightedGame24Space(
                        numbers=values,
                        weights=dict(weights) if weights else dict(DEFAULT_WEIGHTS),
                        threshold=threshold,
                    )

            if trial:
                options.setdefault("seed", trial)
            return await baselines.search_method(numbers, name, model, space=space, **options)
        raise ConfigError(f"unknown game24 method {name!r}")


suite = Game24Suite()
