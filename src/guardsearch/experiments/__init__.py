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
from guardsearch.experiments.results import JsonlResults
from guardsearch.experiments.runner import ExperimentRunner
from guardsearch.experiments.suite import MethodSpec, Problem, Suite, resolve_suite
from guardsearch.experiments.trial import TrialResult, TrialSpec

__all__ = [
    "Executor",
    "ExperimentConfig",
    "ExperimentRunner",
    "JsonlResults",
    "LocalExecutor",
    "MethodSpec",
    "Problem",
    "RayExecutor",
    "Suite",
    "TrialResult",
    "TrialSpec",
    "executor_named",
    "resolve_suite",
]
