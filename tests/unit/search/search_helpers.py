"""Shared helpers for the search tests: a four-step pipeline and scripted models."""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from guardsearch import Context, GuardResult, ModelRequest, ScriptedModel, Step, StepBudget
from guardsearch.search import BaseSpace, Node, Proposal, Root, StepSpace

PIPELINE = ("analysis", "recon", "strategy", "plan")
OBJECTIVE = "Plan the migration of the billing service"


def verdict_of(value: str) -> GuardResult | bool:
    """The scripted guard: "BAD <feedback>" fails with that feedback, "FATAL ..." is fatal.

    Text after " | " is not feedback: "BAD vague | 1" and "BAD vague | 2" are two
    different outputs (not duplicates) that get the same feedback."""
    value = value.split(" | ")[0]
    if value.startswith("FATAL "):
        return GuardResult.fail(value[6:], "scripted", fatal=True)
    if value.startswith("BAD "):
        return GuardResult.fail(value[4:], "scripted")
    return True


def pipeline(
    steps: Sequence[str] = PIPELINE,
    *,
    budgets: dict[str, StepBudget] | None = None,
    rmax: int = 3,
    guard: Callable[[str], GuardResult | bool] = verdict_of,
) -> StepSpace:
    return StepSpace(
        objective=OBJECTIVE,
        steps=[Step(name=s, prompt=f"STEP:{s}", guard=guard, rmax=rmax) for s in steps],
        budgets=budgets or {},
    )


def step_of(request: ModelRequest) -> str:
    match = re.search(r"STEP:(\w+)", request.messages[-1].content)
    assert match, request.messages[-1].content
    return match.group(1)


@dataclass
class ByStep:
    """Answers per step name from queues; when a queue is empty, a fresh passing text."""

    answers: dict[str, list[str]] = field(default_factory=dict)
    calls: list[str] = field(default_factory=list)

    def __call__(self, request: ModelRequest) -> str:
        step = step_of(request)
        self.calls.append(step)
        queue = self.answers.get(step)
        if queue:
            return queue.pop(0)
        return f"{step} output {self.calls.count(step)}"

    def model(self) -> ScriptedModel:
        return ScriptedModel(self)


@dataclass(kw_only=True)
class CountingSpace(BaseSpace):
    """A space of integer paths: each proposer answer lists children as lines.

    The state is the path of numbers; a goal is a path ending in `goal`. Evaluations
    are counted, so tests can prove which candidates were judged.
    """

    goal: int = 99
    depth_limit: int = 3
    scores: dict[int, float] = field(default_factory=dict)
    hard_fail: set[int] = field(default_factory=set)
    evaluated: list[int] = field(default_factory=list)

    def root(self) -> Root:
        return Root(state=[], context=Context(objective="Reach the goal number"))

    def request(
        self, node: Node, context: Context, *, seed: int, temperature: float
    ) -> ModelRequest:
        from guardsearch import Message

        path = " ".join(str(x) for x in node.state) or "start"
        return ModelRequest(
            messages=(Message("system", context.render()), Message("user", f"PATH:{path}")),
            seed=seed,
            temperature=temperature,
            max_tokens=64,
        )

    def parse(self, node: Node, text: str) -> list[Proposal]:
        out = []
        for line in text.split(","):
            line = line.strip()
            if not line:
                continue
            if not line.lstrip("-").isdigit():
                out.append(Proposal(state=None, text=line, parse_error=f"not parseable: {line!r}"))
                continue
            n = int(line)
            out.append(Proposal(state=[*node.state, n], text=line, value=n))
        return out

    async def evaluate(self, node: Node, proposal: Proposal, context: Context) -> GuardResult:
        n = proposal.value
        self.evaluated.append(n)
        if n in self.hard_fail:
            from guardsearch import Check

            return GuardResult(
                passed=False,
                feedback=f"{n} breaks a hard rule",
                score=0.0,
                checks=(Check(name="rule", passed=False, hard=True),),
            )
        return GuardResult.ok("counting", score=self.scores.get(n, 0.5))

    def is_goal(self, node: Node) -> bool:
        return node.viable and node.value == self.goal

    def answer(self, node: Node) -> object:
        return node.state


def path_of(request: ModelRequest) -> str:
    return request.messages[-1].content.removeprefix("PATH:")
