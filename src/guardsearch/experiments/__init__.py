"""Experiments: run methods over problems × trials × budgets, resumably, and score them.

    from guardsearch.experiments import ExperimentConfig, ExperimentRunner
    card = ExperimentRunner(ExperimentConfig.from_yaml("bench.yaml")).run()

See docs/experiments.md.
"""

from guardsearch.experiments.config import ExperimentConfig
from guardsearch.experiments.executors import (
    Executor,
    LocalExecutor,
    RayExecutor,
    executor_named,
)
from guardsearch.experiments.metrics import newcombe, newcombe_paired, summarize, wilson
from guardsearch.experiments.results import JsonlResults, ResultStore
from guardsearch.experiments.runner import ExperimentRunner
from guardsearch.experiments.suite import MethodSpec, Problem, Suite, resolve_suite
from guardsearch.experiments.trial import TrialResult, TrialSpec, run_trial

__all__ = [
    "Executor",
    "ExperimentConfig",
    "ExperimentRunner",
    "JsonlResults",
    "LocalExecutor",
    "MethodSpec",
    "Problem",
    "RayExecutor",
    "ResultStore",
    "Suite",
    "TrialResult",
    "TrialSpec",
    "executor_named",
    "newcombe",
    "newcombe_paired",
    "resolve_suite",
    "run_trial",
    "summarize",
    "wilson",
]
