"""StepSpace: a search space built from guarded Steps (a pipeline: step i expands depth i).

Depth i is expanded by `steps[i]`: a node at depth i holds the artifacts of steps
0..i-1 in its context, and a path that passes every step's guard up to the last
one is a goal. A single-step space is what `consensus` and `refine` work over.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar

from guardsearch.core.artifact import Artifact
from guardsearch.core.budget import StepBudget
from guardsearch.core.context import Context
from guardsearch.core.digest import canonical_json, stable_digest
from guardsearch.core.errors import ConfigError
from guardsearch.core.guard_result import GuardResult
from guardsearch.core.messages import ModelRequest
from guardsearch.core.schedule import Schedule
from guardsearch.guards.base import Guard, GuardFn, as_guard
from guardsearch.search.node import Node
from guardsearch.search.space import BaseSpace, Proposal, Root
from guardsearch.steps.step import Step, make_artifact

_DEFAULT_BACKTRACKS = 2


@dataclass(kw_only=True)
class StepSpace(BaseSpace):
    """Depth i uses `steps[i]`; a goal is a path whose every step passed its guard.

    `budgets` maps step names to their `StepBudget` (default: the step's `rmax` and a
    backtrack budget of 2). `prefilter` is an optional cheap guard run before each
    step's own guard; `variables` are passed to every prompt template.
    """

    # One proposal per answer, whose value is the whole parsed output: the engine may
    # exclude the values a node's children already had from an enum that decides it.
    proposal_is_output: ClassVar[bool] = True
    # The nodes of one depth run the same step on different upstream outputs: what that
    # step answered under an earlier parent (and how far its schedule got) is the level's
    # history, which a regeneration under a new parent goes on from.
    shares_level_history: ClassVar[bool] = True

    objective: str | Context
    steps: Sequence[Step]
    budgets: Mapping[str, StepBudget] = field(default_factory=dict)
    prefilter_guard: Guard | GuardFn | None = None
    variables: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if not self.steps:
            raise ConfigError("a StepSpace needs at least one step")
        names = [s.name for s in self.steps]
        if len(set(names)) != len(names):
            raise ConfigError(f"step names must be unique, got {names}")
        unknown = set(self.budgets) - set(names)
        if unknown:
            raise ConfigError(f"budgets for unknown steps: {sorted(unknown)}")
        self.steps = tuple(self.steps)
        self._prefilter = as_guard(self.prefilter_guard) if self.prefilter_guard else None
        self.depth_limit = len(self.steps)

    def root(self) -> Root:
        ctx = self.objective if isinstance(self.objective, Context) else None
        return Root(state=None, context=ctx or Context(objective=str(self.objective)))

    def level(self, depth: int) -> str:
        return self.steps[min(depth, len(self.steps) - 1)].name

    def schedule(self, depth: int) -> Schedule:
        """The temperature/seed schedule of a level: its step's (a search's `schedule`
        option overrides it for every level)."""
        return Schedule.of(self.steps[min(depth, len(self.steps) - 1)].schedule)

    def step_budget(self, depth: int) -> StepBudget:
        step = self.steps[min(depth, len(self.steps) - 1)]
        return self.budgets.get(
            step.name, StepBudget(rmax=step.rmax, backtrack_budget=_DEFAULT_BACKTRACKS)
        )

    def level_rmax(self, depth: int) -> int | None:
        """A step's `rmax` (or its `budgets` entry's) is honoured by every strategy
        unless the search's own `rmax` option overrides it."""
        return self.step_budget(depth).rmax

    def request(
        self, node: Node, context: Context, *, seed: int, temperature: float
    ) -> ModelRequest:
        step = self.steps[node.depth]
        request = step.request(context, seed=seed, **dict(self.variables))
        return dataclasses.replace(request, temperature=temperature)

    def _artifact(self, node: Node, text: str) -> Artifact:
        return make_artifact(
            self.steps[node.depth],
            text,
            node.context,
            attempt=node.expansions + 1,
            parent_id=node.id,
        )

    def parse(self, node: Node, text: str) -> Sequence[Proposal]:
        artifact = self._artifact(node, text)
        return [
            Proposal(
                state=None,
                text=text,
                value=artifact.value,
                parse_error=artifact.parse_error,
            )
        ]

    def key(self, node: Node, proposal: Proposal) -> str:
        # The state of a pipeline node is its whole path (for the plan app: (A, R, S, P)),
        # so the same output under another parent is a different state.
        shown = canonical_json(proposal.value) if proposal.value is not None else proposal.text
        return stable_digest([node.key, self.steps[node.depth].name, shown.strip()])

    def _candidate(self, node: Node, proposal: Proposal) -> Artifact:
        step = self.steps[node.depth]
        return Artifact(
            id=f"{node.id}:{step.name}",
            step=step.name,
            text=proposal.text,
            value=proposal.value,
            attempt=node.expansions + 1,
            parent_id=node.id,
            context_digest=node.context.digest,
        )

    async def prefilter(
        self, node: Node, proposal: Proposal, context: Context
    ) -> GuardResult | None:
        if self._prefilter is None:
            return None
        return await self._prefilter.check(self._candidate(node, proposal), context)

    async def evaluate(self, node: Node, proposal: Proposal, context: Context) -> GuardResult:
        checker = self.steps[node.depth].checker
        if checker is None:
            return GuardResult.ok("none")
        return await checker.check(self._candidate(node, proposal), context)

    def child_context(self, node: Node, context: Context, proposal: Proposal) -> Context:
        return context.for_next_step().amend(artifact=(self.steps[node.depth].name, proposal.text))

    def is_goal(self, node: Node) -> bool:
        return node.depth >= len(self.steps) and node.viable

    def is_terminal(self, node: Node) -> bool:
        return node.depth >= len(self.steps)
