"""The multi-signal evaluator (docs/guards.md): objective checks, a rubric, critic -> judge.

LLMs are poor at raw 0..1 scores, so the score is built from verifiable signals:

1. **Objective checks** (code: schema, regex, unit tests) run first and weigh more
   (default weight 3, hard): a failed hard check gives score 0 at once, with no
   model call at all (a cheap pre-filter before any expensive judge).
2. **Critic** (optional): the model lists the candidate's flaws.
3. **Judge**: the model answers the rubric checklist, one true/false per question,
   grammar-constrained to a JSON object (with the critic's report in view).

Score = weighted share of passed checks; passes when no hard check failed and the
score reaches `threshold`. Feedback names every failed check, so it can steer a retry.

With `model=None` the evaluator uses the model of the search (or loop) it runs in,
so its calls are booked against the same budget and trace (`using_model`).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any

from guardsearch.core.artifact import Artifact
from guardsearch.core.context import Context
from guardsearch.core.errors import ConfigError, ParseError
from guardsearch.core.guard_result import Check, GuardResult
from guardsearch.core.messages import JUDGE, ModelRequest
from guardsearch.guards.base import Guard, GuardFn
from guardsearch.guards.composite import Member, member
from guardsearch.guards.parse import parse_json
from guardsearch.models.base import Model
from guardsearch.models.metered import Metered
from guardsearch.prompts import PromptTemplate

_ACTIVE: ContextVar[Metered | None] = ContextVar("guardsearch_active_model", default=None)
_CANDIDATE_CHARS = 4000


@contextmanager
def using_model(model: Model | Metered) -> Iterator[Metered]:
    """Make `model` the one model-backed guards use when they were given none."""
    metered = model if isinstance(model, Metered) else Metered(model)
    token = _ACTIVE.set(metered)
    try:
        yield metered
    finally:
        _ACTIVE.reset(token)


def active_model() -> Metered | None:
    """The model set by the innermost `using_model` (a running search sets it)."""
    return _ACTIVE.get()


def resolve_model(model: Model | Metered | None, who: str) -> Metered:
    """`model` as a Metered, or the active model; ConfigError when there is neither."""
    if model is not None:
        return model if isinstance(model, Metered) else Metered(model)
    active = _ACTIVE.get()
    if active is None:
        raise ConfigError(
            f"{who} needs a model: pass model=..., or run it inside a search "
            "(or `with using_model(model):`)"
        )
    return active


@dataclass(frozen=True)
class RubricItem:
    """One yes/no question of the checklist, with its weight."""

    question: str
    weight: float = 1.0
    id: str = ""

    def __post_init__(self) -> None:
        if not self.question.strip():
            raise ConfigError("a rubric question must not be empty")
        if self.weight <= 0:
            raise ConfigError(f"rubric weight must be > 0, got {self.weight}")


def _items(rubric: Sequence[str | RubricItem]) -> tuple[RubricItem, ...]:
    out = []
    for i, item in enumerate(rubric, 1):
        it = item if isinstance(item, RubricItem) else RubricItem(str(item))
        out.append(RubricItem(it.question, it.weight, f"q{i}"))
    return tuple(out)


def _objective(guards: Sequence[Guard | GuardFn | Member], weight: float) -> tuple[Member, ...]:
    return tuple(g if isinstance(g, Member) else member(g, weight, hard=True) for g in guards)


def _truthy(value: Any) -> bool | None:
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.strip().lower() in ("yes", "true", "pass", "y"):
        return True
    if isinstance(value, str) and value.strip().lower() in ("no", "false", "fail", "n"):
        return False
    return None


@dataclass
class Evaluator:
    """A Guard that scores by objective checks, a model-answered rubric and a critic."""

    rubric: Sequence[str | RubricItem] = ()
    objective: Sequence[Guard | GuardFn | Member] = ()
    critic: bool = False
    model: Model | Metered | None = None
    threshold: float = 0.7
    objective_weight: float = 3.0
    name: str = "evaluator"
    max_tokens: int = 96
    critic_max_tokens: int = 96
    judge_prompt: PromptTemplate | None = None
    critic_prompt: PromptTemplate | None = None
    items: tuple[RubricItem, ...] = field(init=False)
    members: tuple[Member, ...] = field(init=False)

    def __post_init__(self) -> None:
        if not self.rubric and not self.objective:
            raise ConfigError("an Evaluator needs a rubric, objective checks, or both")
        if not 0.0 <= self.threshold <= 1.0:
            raise ConfigError(f"threshold must be in 0..1, got {self.threshold}")
        self.items = _items(self.rubric)
        self.members = _objective(self.objective, self.objective_weight)
        self._judge = self.judge_prompt or PromptTemplate.packaged("evaluator_judge")
        self._critic = self.critic_prompt or PromptTemplate.packaged("evaluator_critic")

    @property
    def judge_schema(self) -> dict[str, Any]:
        """The JSON Schema the judge's answer is constrained to: one boolean per question."""
        return {
            "type": "object",
            "properties": {it.id: {"type": "boolean"} for it in self.items},
            "required": [it.id for it in self.items],
            "additionalProperties": False,
        }

    async def check(self, artifact: Artifact, context: Context) -> GuardResult:
        checks: list[Check] = []
        ordered = sorted(self.members, key=lambda m: not m.hard)
        for m in ordered:
            result = await m.guard.check(artifact, context)
            checks.append(
                Check(
                    name=m.name,
                    passed=result.passed,
                    weight=m.weight,
                    hard=m.hard,
                    detail=result.feedback,
                )
            )
            if m.hard and not result.passed:
                # Veto: the objective signal settles it; no model call is spent.
                return self._verdict(checks, critique="", fatal=result.fatal)
        critique = ""
        if self.items:
            metered = resolve_model(self.model, f"evaluator {self.name!r}")
            candidate = (artifact.text or "")[:_CANDIDATE_CHARS]
            if self.critic:
                critique = await self._ask_critic(metered, context, candidate, artifact.id)
            checks += await self._ask_judge(metered, context, candidate, critique, artifact.id)
        return self._verdict(checks, critique=critique, fatal=False)

    async def _ask_critic(
        self, metered: Metered, context: Context, candidate: str, node: str
    ) -> str:
        messages = self._critic.render(context, candidate=candidate, items=self.items)
        request = ModelRequest(messages=messages, max_tokens=self.critic_max_tokens, call=JUDGE)
        completion = await metered.complete(request, step=f"{self.name}:critic", node=node)
        return completion.text.strip()

    async def _ask_judge(
        self, metered: Metered, context: Context, candidate: str, critique: str, node: str
    ) -> list[Check]:
        messages = self._judge.render(
            context, candidate=candidate, critique=critique, items=self.items
        )
        request = ModelRequest(
            messages=messages, max_tokens=self.max_tokens, json_schema=self.judge_schema, call=JUDGE
        )
        completion = await metered.complete(request, step=f"{self.name}:judge", node=node)
        try:
            answers = parse_json(completion.text)
            if not isinstance(answers, dict):
                raise ParseError("judge answer is not a JSON object")
        except ParseError as exc:
            return [
                Check(name=it.question, passed=False, weight=it.weight, detail=f"judge: {exc}")
                for it in self.items
            ]
        checks = []
        for it in self.items:
            verdict = _truthy(answers.get(it.id))
            detail = "" if verdict else ("no answer" if verdict is None else "judged no")
            checks.append(
                Check(name=it.question, passed=bool(verdict), weight=it.weight, detail=detail)
            )
        return checks

    def _verdict(self, checks: list[Check], *, critique: str, fatal: bool) -> GuardResult:
        vetoed = any(c.hard and not c.passed for c in checks)
        total = sum(c.weight for c in checks)
        score = 0.0 if vetoed or total == 0 else sum(c.weight for c in checks if c.passed) / total
        passed = not vetoed and score >= self.threshold
        failed = [c for c in checks if not c.passed]
        parts = [
            f"{c.name}: {c.detail}" if c.detail and c.hard else f"{c.name} -> {c.detail or 'no'}"
            for c in failed
        ]
        if critique and not passed and critique.lower().rstrip(".") != "no flaws":
            parts.append(f"critic: {critique}")
        feedback = "" if passed else "; ".join(parts) or f"score {score:.2f} below threshold"
        return GuardResult(
            passed=passed,
            feedback=feedback,
            score=max(0.0, min(1.0, score)),
            fatal=fatal and not passed,
            checks=tuple(checks),
            guard=self.name,
        )
