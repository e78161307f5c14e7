"""The feedback heuristic (docs/search.md, "dfs"): h(step, verdict, retries, history) -> depth.

It reads a guard's feedback and says how far to backtrack: 0 = retry the same step
with the feedback, d > 0 = go up d levels, -1 = give up the whole search. The
default is the rule table below (`RuleHeuristic`); any callable
`(Failure) -> int` (sync or async) can replace it, and `ModelHeuristic` asks the
model when no rule matches (which spends budget).

The rule table, row by row:

| feedback contains                   | cause                          | depth |
|-------------------------------------|--------------------------------|-------|
| "not parseable" / "missing required field" | formatting error        | 0     |
| "retry_budget <= 0"                 | invalid step structure         | 0     |
| "not satisfiable"                   | missing context / wrong order  | 1     |
| "unreachable"                       | plan doesn't solve the problem | 1     |
| "exceeds r_max"                     | strategy overcommitted         | 1     |
| "dead-end" and "no path"            | fundamental structural problem | 2     |
| "max_explorations"                  | plan too complex to verify     | 1     |
| the same feedback repeated          | misclassification upstream     | min(retries, 3) |

Matching is case-insensitive (both the feedback and the patterns are lower-cased, so
"MAX_EXPLORATIONS" matches however the guard writes it). Formatting rules come before
the repetition check, so a formatting error is always retried in place.

A verdict from dedup (`guard="dedup"`: a regeneration that only repeated earlier
outputs) is not guard feedback: it is retried in place and never escalates. The dfs
strategy does not even ask the heuristic about it (it retries with a fresh seed).

`decide_with_rule(heuristic, failure)` returns the depth and the row that decided it
(`RuleHeuristic.rule`, e.g. `"not satisfiable -> missing context or wrong step
ordering"`), which the dfs strategy records on its backtrack events.
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from guardsearch.core.context import Context
from guardsearch.core.errors import ParseError
from guardsearch.core.guard_result import GuardResult
from guardsearch.core.messages import JUDGE, ModelRequest
from guardsearch.guards.evaluator import resolve_model
from guardsearch.guards.parse import parse_json
from guardsearch.models.base import Model
from guardsearch.models.metered import Metered
from guardsearch.prompts import PromptTemplate

GIVE_UP = -1


@dataclass(frozen=True, kw_only=True)
class Failure:
    """What the heuristic sees: which step failed, its verdict, and this visit's history."""

    step: str
    level: int
    verdict: GuardResult
    retry_count: int
    history: tuple[str, ...] = ()
    steps: tuple[str, ...] = ()
    context: Context | None = None

    @property
    def feedback(self) -> str:
        return self.verdict.feedback


Heuristic = Callable[[Failure], "int | Awaitable[int]"]


@dataclass(frozen=True)
class Rule:
    """Feedback containing every one of `patterns` points `depth` levels up."""

    patterns: tuple[str, ...]
    depth: int
    cause: str

    def matches(self, feedback: str) -> bool:
        text = feedback.lower()
        return all(p.lower() in text for p in self.patterns)

    @property
    def label(self) -> str:
        """The row as text: `not satisfiable -> missing context or wrong step ordering`."""
        return f"{' + '.join(self.patterns)} -> {self.cause}"


FORMAT_RULES: tuple[Rule, ...] = (
    Rule(("not parseable",), 0, "formatting error"),
    Rule(("missing required field",), 0, "formatting error"),
    Rule(("retry_budget <= 0",), 0, "invalid step structure"),
)
RULES: tuple[Rule, ...] = (
    Rule(("not satisfiable",), 1, "missing context or wrong step ordering"),
    Rule(("unreachable",), 1, "plan doesn't solve the problem"),
    Rule(("exceeds r_max",), 1, "strategy overcommitted"),
    Rule(("max_explorations",), 1, "plan too complex to verify"),
    Rule(("dead-end", "no path"), 2, "fundamental structural problem"),
)


DEDUP_GUARD = "dedup"
DUPLICATE_RULE = "duplicate output -> not guard feedback: retry in place"


def repeats(history: Sequence[str], feedback: str) -> int:
    """How many times `feedback` occurs in `history` plus this once."""
    return 1 + sum(1 for h in history if h == feedback)


@dataclass(frozen=True)
class RuleHeuristic:
    """The rule table of this module's docstring, with escalation on repeated identical feedback."""

    format_rules: tuple[Rule, ...] = FORMAT_RULES
    rules: tuple[Rule, ...] = RULES
    escalate_after: int = 2
    max_escalation: int = 3
    default: int = 0

    def match(self, failure: Failure) -> tuple[int, str, str]:
        """The depth, the cause behind it and the row that matched (its label)."""
        feedback = failure.feedback
        if failure.verdict.guard == DEDUP_GUARD:
            return 0, "duplicate output", DUPLICATE_RULE
        for rule in self.format_rules:
            if rule.matches(feedback):
                return rule.depth, rule.cause, rule.label
        if repeats(failure.history, feedback) >= self.escalate_after:
            depth = min(failure.retry_count, self.max_escalation)
            cause = "repeated identical failures"
            return depth, cause, f"same feedback {self.escalate_after}x -> {cause}"
        for rule in self.rules:
            if rule.matches(feedback):
                return rule.depth, rule.cause, rule.label
        return self.default, "no rule matched: retry in place", "no rule matched -> retry in place"

    def explain(self, failure: Failure) -> tuple[int, str]:
        """The depth and the cause behind it."""
        depth, cause, _ = self.match(failure)
        return depth, cause

    def rule(self, failure: Failure) -> str:
        """Which row of the table decides `failure` (`patterns -> cause`)."""
        return self.match(failure)[2]

    def decide_rule(self, failure: Failure) -> tuple[int, str]:
        depth, _, label = self.match(failure)
        return depth, label

    def matched(self, failure: Failure) -> bool:
        return not self.explain(failure)[1].startswith("no rule matched")

    def __call__(self, failure: Failure) -> int:
        return self.explain(failure)[0]


@dataclass
class ModelHeuristic:
    """Asks the model which step caused a failure, when the rule table has no answer.

    Each question is one (small, grammar-constrained) model call booked against the
    search's budget: reserve it for failures the rules cannot place.
    """

    model: Model | Metered | None = None
    rules: RuleHeuristic = field(default_factory=RuleHeuristic)
    only_unmatched: bool = True
    max_tokens: int = 24
    prompt: PromptTemplate | None = None

    async def __call__(self, failure: Failure) -> int:
        return (await self.decide_rule(failure))[0]

    async def decide_rule(self, failure: Failure) -> tuple[int, str]:
        """The depth and what decided it: a rule row, or the model's answer."""
        if self.only_unmatched and self.rules.matched(failure):
            return self.rules.decide_rule(failure)
        steps = failure.steps or (failure.step,)
        metered = resolve_model(self.model, "ModelHeuristic")
        template = self.prompt or PromptTemplate.packaged("search_backtrack")
        context = failure.context or Context(objective="Find the cause of a failed step")
        messages = template.render(
            context,
            failed_step=failure.step,
            steps=list(steps),
            feedback=failure.feedback,
            history=list(failure.history),
        )
        schema: dict[str, Any] = {
            "type": "object",
            "properties": {"cause": {"enum": list(steps)}},
            "required": ["cause"],
        }
        request = ModelRequest(
            messages=messages, max_tokens=self.max_tokens, json_schema=schema, call=JUDGE
        )
        completion = await metered.complete(request, step="backtrack-heuristic")
        try:
            cause = parse_json(completion.text).get("cause")
        except (ParseError, AttributeError):
            return self.rules.decide_rule(failure)
        if cause not in steps:
            return self.rules.decide_rule(failure)
        return max(0, failure.level - list(steps).index(cause)), f"model: {cause} caused it"


async def decide(heuristic: Heuristic, failure: Failure) -> int:
    """Call a sync or async heuristic."""
    out = heuristic(failure)
    if inspect.isawaitable(out):
        out = await out
    return int(out)


async def decide_with_rule(heuristic: Heuristic, failure: Failure) -> tuple[int, str]:
    """The depth and what decided it: the rule row for a rule table (or a heuristic
    with a `decide_rule` method, sync or async), else the heuristic's name."""
    explained = getattr(heuristic, "decide_rule", None)
    if callable(explained):
        out = explained(failure)
        if inspect.isawaitable(out):
            out = await out
        depth, rule = out
        return int(depth), str(rule)
    name = getattr(heuristic, "__name__", None) or type(heuristic).__name__
    return await decide(heuristic, failure), str(name)
