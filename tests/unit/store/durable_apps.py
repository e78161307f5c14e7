"""Apps and scripted answers for the durable-run tests (importable by a subprocess).

Each builder follows the app protocol, `build(problem, strategy) -> AppSetup`; runs
name them as `durable_apps:NAME`. `answer_for(strategy)` is the model side.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "search"))

from search_helpers import CountingSpace, path_of, pipeline, step_of

from guardsearch import Artifact, Context, GuardResult, ModelRequest, Step
from guardsearch.registry import AppSetup
from guardsearch.runs import InputNeeded
from guardsearch.search import StepSpace

STRATEGIES = ["dfs", "bfs", "beam", "astar", "best_first", "refine", "consensus"]

# A wider tree than the search tests' so a crash can land at many points.
TREE = {
    "start": "1, 2, 3, 4, x",
    "1": "11, 12, 13",
    "2": "21, 22",
    "3": "31, 32",
    "4": "41",
    "1 11": "0, 5",
    "1 12": "6",
    "2 21": "7, 8",
    "3 31": "99",
    "3 32": "9",
}
SCORES = {1: 0.6, 2: 0.55, 3: 0.58, 4: 0.3, 11: 0.7, 21: 0.6, 31: 0.9, 32: 0.4}


def wide_answer(request: ModelRequest) -> str:
    """Three new children for every node (n -> 3n+1, 3n+2, 3n+3): the frontier only grows."""
    path = path_of(request)
    n = 0 if path == "start" else int(path.split()[-1])
    return ", ".join(str(3 * n + i) for i in (1, 2, 3))


def wide_app(problem: dict[str, Any], strategy: str) -> AppSetup:
    """No goal, every candidate passes: trees (and unbounded frontiers) as big as asked."""
    return AppSetup(space=CountingSpace(goal=-1, depth_limit=12))


def deep_space() -> CountingSpace:
    """`wide_app`'s space, 80 levels deep (dfs goes straight down to the bottom)."""
    return CountingSpace(goal=-1, depth_limit=80)


def tree_answer(request: ModelRequest) -> str:
    return TREE.get(path_of(request), "0")


def pipeline_answer(request: ModelRequest) -> str:
    step = step_of(request)
    prompt = request.messages[0].content
    if step == "plan" and "## Previous Attempt Failed" not in prompt and "rejected" not in prompt:
        return "BAD preconditions {a} not satisfiable"
    if step == "recon" and "rejected" not in prompt:
        return "BAD not parseable as JSON"
    return f"{step} ({len(prompt)})"


def consensus_answer(request: ModelRequest) -> str:
    return ["Paris", "Lyon", "Paris", "Paris", "Nice", "Paris"][(request.seed or 0) % 6]


def answer_for(strategy: str) -> Callable[[ModelRequest], str]:
    if strategy in ("dfs", "refine"):
        return pipeline_answer
    if strategy == "consensus":
        return consensus_answer
    return tree_answer


def search_app(problem: dict[str, Any], strategy: str) -> AppSetup:
    """The search tests' spaces, one per strategy family."""
    if strategy in ("dfs", "refine"):
        return AppSetup(space=pipeline(), options={"rmax": 3} if strategy == "refine" else {})
    if strategy == "consensus":
        space = StepSpace(objective="Capital of France?", steps=pipeline(("answer",)).steps)
        return AppSetup(space=space, options={"n": 6})
    space = CountingSpace(goal=99, depth_limit=3, scores=SCORES)
    return AppSetup(space=space, options={"width": 2} if strategy != "bfs" else {})


class DeployGuard:
    """Asks a person before approving a production deploy; reads their answer."""

    name = "hitl"

    async def check(self, artifact: Artifact, context: Context) -> GuardResult:
        answers = [a for q, a in context.inputs if q.startswith("Deploy")]
        if "production" not in artifact.text:
            return GuardResult.ok(self.name)
        if not answers:
            return GuardResult(
                passed=False, fatal=True, ask="Deploy to production now?", guard=self.name
            )
        if answers[-1].lower().startswith("y"):
            return GuardResult.ok(self.name)
        return GuardResult.fail("the person said no", self.name, fatal=True)


def asking_app(problem: dict[str, Any], strategy: str) -> AppSetup:
    steps = [
        Step(name="analysis", prompt="STEP:analysis"),
        Step(name="deploy", prompt="STEP:deploy", guard=DeployGuard()),
        Step(name="report", prompt="STEP:report"),
    ]
    return AppSetup(space=StepSpace(objective="Ship release 2.1", steps=steps))


def asking_answer(request: ModelRequest) -> str:
    step = step_of(request)
    if step == "deploy":
        return "deploy to production at 10:00"
    return f"{step} done"


def plain_steps_app(problem: dict[str, Any], strategy: str) -> AppSetup:
    """The asking app's steps without a guard: here the proposer itself asks."""
    steps = [
        Step(name="analysis", prompt="STEP:analysis"),
        Step(name="deploy", prompt="STEP:deploy"),
        Step(name="report", prompt="STEP:report"),
    ]
    return AppSetup(space=StepSpace(objective="Ship release 2.1", steps=steps))


def asking_proposer(request: ModelRequest) -> str | Exception:
    """A proposer that cannot write the deploy step without a person's answer."""
    step = step_of(request)
    prompt = request.messages[0].content
    if step == "deploy":
        if "## Input from a person" not in prompt:
            return InputNeeded("Which region should release 2.1 go to?")
        return "deploy to " + prompt.rsplit("go to?: ", 1)[1].split()[0]
    return f"{step} done"
