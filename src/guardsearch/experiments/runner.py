"""ExperimentRunner: plan problem × method × trial × budget, run what is not finished,
score what is stored.

    runner = ExperimentRunner(ExperimentConfig.from_yaml("bench.yaml"))
    card = runner.run()          # resumable: finished trials are skipped

A deterministic method (the suite says which) runs once per problem at the largest
budget when `derive_budgets` is on; its pass rate at a smaller budget B is read off
that run (a trial that succeeded with c calls succeeds under any B >= c, because the
search is the same call for call until the cap). Other methods run at every budget.

A stored trial is reused only when its config fingerprint (suite, model spec, method,
options) is the one the experiment now plans; a trial stored under another config is
not done, so it runs again (and is left in the store beside the new one), and the
scorecard never mixes the two. `stale()` says which and what changed. Trials stored
before fingerprints existed are reused while their label's config matches the out
directory's manifest, which records each label's config on the first run into it.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

from guardsearch.core.errors import ConfigError
from guardsearch.experiments.config import ExperimentConfig
from guardsearch.experiments.executors import Executor, LocalExecutor
from guardsearch.experiments.results import JsonlResults, ManifestStore, ResultStore
from guardsearch.experiments.runlog import RunStoreMirror
from guardsearch.experiments.scorecard import build_scorecard, write_scorecard
from guardsearch.experiments.suite import MethodSpec, Problem, Suite, resolve_suite
from guardsearch.experiments.trial import (
    TrialResult,
    TrialSpec,
    describe_change,
    fingerprint,
    trial_config,
)
from guardsearch.store.base import RunStore

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
        run_store: RunStore | None = None,
    ) -> None:
        """`run_store`: also record every finished trial as a run there (`runlog`)."""
        self.config = config
        self.suite: Suite = resolve_suite(config.suite)
        self.store: ResultStore = store if store is not None else JsonlResults(config.out_dir)
        if run_store is not None:
            self.store = RunStoreMirror(self.store, run_store, suite=config.suite)
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

    def method_configs(self) -> dict[str, dict[str, Any]]:
        """Per method label, the trial config this experiment runs it with."""
        return {
            m.label: trial_config(self.config.suite, self.config.model, m) for m in self.methods
        }

    def manifest(self) -> dict[str, dict[str, Any]]:
        """The config per label that trials without a fingerprint ran with: the stored
        manifest, plus this experiment's config for the labels it does not name yet
        (what the first run writes). Without a manifest store, trials without a
        fingerprint are taken to match (as before fingerprints)."""
        stored = self.store.manifest() if isinstance(self.store, ManifestStore) else {}
        merged = dict(stored)
        for label, config in self.method_configs().items():
            merged.setdefault(label, {"config": config, "fingerprint": fingerprint(config)})
        return merged

    def _match(
        self,
    ) -> tuple[list[tuple[TrialSpec, TrialResult | None]], dict[str, list[TrialResult]]]:
        """Each planned trial with the stored result it may reuse (or None), and the
        stored results under the planned keys, by key."""
        manifest = self.manifest()
        stored: dict[tuple[str, str | None], TrialResult] = {}
        by_key: dict[str, list[TrialResult]] = {}
        for r in self.store.load():
            stored[(r.key, r.fingerprint)] = r
            by_key.setdefault(r.key, []).append(r)
        matched: list[tuple[TrialSpec, TrialResult | None]] = []
        for spec in self.plan():
            found = stored.get((spec.key, spec.fingerprint))
            if found is None:
                legacy = stored.get((spec.key, None))
                entry = manifest.get(spec.method.label, {})
                if legacy is not None and entry.get("fingerprint") == spec.fingerprint:
                    found = legacy
            matched.append((spec, found))
        return matched, by_key

    def pending(self) -> list[TrialSpec]:
        """The planned trials with no stored result under the same config."""
        return [spec for spec, found in self._match()[0] if found is None]

    def stale(self) -> list[dict[str, Any]]:
        """Per method: planned trials that are stored, but under another config (so they
        run again), with what changed, e.g. `model 'a' -> 'b'`."""
        manifest = self.manifest()
        matched, by_key = self._match()
        counts: Counter[tuple[str, str]] = Counter()
        for spec, found in matched:
            if found is not None or spec.key not in by_key:
                continue
            old = by_key[spec.key][-1]
            before = old.config
            if old.fingerprint is None:
                before = manifest.get(spec.method.label, {}).get("config")
            counts[(spec.method.label, describe_change(before, spec.config))] += 1
        return [
            {"method": label, "trials": n, "changed": changed}
            for (label, changed), n in sorted(counts.items())
        ]

    def run(self) -> dict[str, Any]:
        """Run the unfinished trials, then write and return the scorecard."""
        if isinstance(self.store, ManifestStore) and self.manifest() != self.store.manifest():
            self.store.write_manifest(self.manifest())
        todo = self.pending()
        total, count = len(todo), 0

        def save(result: TrialResult, events: list[dict[str, Any]]) -> None:
            nonlocal count
            self.store.save(result, events)
            count += 1
            if self.progress is not None:
                self.progress(result, count, total)

        if isinstance(self.store, RunStoreMirror):
            try:
                self.executor.run(todo, save, self.store.start)
            finally:
                self.store.abandon()
        else:
            self.executor.run(todo, save)
        return self.score()

    def results(self) -> list[TrialResult]:
        """The stored results that belong to this experiment's plan (same key, same
        config), one per planned trial."""
        return [found for _, found in self._match()[0] if found is not None]

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
