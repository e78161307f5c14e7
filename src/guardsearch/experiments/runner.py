"""ExperimentRunner: plan problem × method × trial × budget, run what is not finished,
score what is stored.

    runner = ExperimentRunner(ExperimentConfig.from_yaml("bench.yaml"))
    card = runner.run()          # resumable: finished trials are skipped

A deterministic method (the suite says which) runs once per problem at the largest
budget when `derive_budgets` is on; its pass rate at a smaller budget B is read off
that run (a trial that succeeded with c calls succeeds under any B >= c, because the
search is the same call for call until the cap). Other methods run at every budget.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from guardsearch.core.errors import ConfigError
from guardsearch.experiments.config import ExperimentConfig
from guardsearch.experiments.executors import Executor, LocalExecutor
from guardsearch.experiments.results import JsonlResults, ResultStore
from guardsearch.experiments.scorecard import build_scorecard, write_scorecard
from guardsearch.experiments.suite import MethodSpec, Problem, Suite, resolve_suite
from guardsearch.experiments.trial import TrialResult, TrialSpec

Progress = Callable[[TrialResult, int, int], None]


class ExperimentRunner:
    """Runs an experiment into a result store and scores it."""

    def __init__(
        self,
        config: ExperimentConfig,
        *,
        store: ResultStore | None = None,
        executor: Executor | None = None,
        progress: Progress | None = None,
    ) -> None:
        self.config = config
        self.suite: Suite = resolve_suite(config.suite)
        self.store: ResultStore = store if store is not None else JsonlResults(config.out_dir)
        self.executor: Executor = executor if executor is not None else LocalExecutor()
        self.progress = progress
        self.methods = config.method_specs()
        known = set(self.suite.method_names())
        for spec in self.methods:
            if spec.method not in known:
                raise ConfigError(
                    f"unknown method {spec.method!r} for suite {self.suite.name}; "
                    f"choose from {', '.join(sorted(known))}"
                )
        self.problems: list[Problem] = self.suite.problems(config.problems)
        self.method_problems: dict[str, list[Problem]] = {
            entry.spec().label: (
                self.suite.problems(entry.problems) if entry.problems is not None else self.problems
            )
            for entry in config.methods
        }

    def budgets_for(self, method: MethodSpec) -> list[int | None]:
        budgets = self.config.budgets
        if not budgets:
            return [None]
        if self.config.derive_budgets and self.suite.deterministic(method):
            return [max(budgets)]
        return list(budgets)

    def plan(self) -> list[TrialSpec]:
        """Every trial of the experiment, method by method (cheap methods first if listed so)."""
        return [
            TrialSpec(
                suite=self.config.suite,
                problem=problem,
                method=method,
                trial=trial,
                budget=budget,
                model=self.config.model,
            )
            for method in self.methods
            for budget in self.budgets_for(method)
            for trial in range(self.config.trials)
            for problem in self.method_problems[method.label]
        ]

    def pending(self) -> list[TrialSpec]:
        done = self.store.finished()
        return [spec for spec in self.plan() if spec.key not in done]

    def run(self) -> dict[str, Any]:
        """Run the unfinished trials, then write and return the scorecard."""
        todo = self.pending()
        total, count = len(todo), 0

        def save(result: TrialResult, events: list[dict[str, Any]]) -> None:
            nonlocal count
            self.store.save(result, events)
            count += 1
            if self.progress is not None:
                self.progress(result, count, total)

        self.executor.run(todo, save)
        return self.score()

    def results(self) -> list[TrialResult]:
        """The stored results that belong to this experiment's plan."""
        wanted = {spec.key for spec in self.plan()}
        return [r for r in self.store.load() if r.key in wanted]

    def score(self, *, write: bool = True) -> dict[str, Any]:
        card = build_scorecard(
            self.results(),
            methods=[m.label for m in self.methods],
            problems=sorted({p.id for ps in self.method_problems.values() for p in ps}),
            budgets=self.config.budgets,
            derived={m.label: len(self.budgets_for(m)) == 1 for m in self.methods},
            meta={
                "name": self.config.name,
                "suite": self.config.suite,
                "model": self.config.model,
                "problems": self.config.problems,
                "trials": self.config.trials,
                "executor": self.executor.name,
                "reference": self.config.reference,
                "compare": [list(pair) for pair in self.config.compare],
            },
        )
        if write:
            where = self.config.report_dir or self.config.out
            write_scorecard(card, Path(where), self.config.name)
        return card
