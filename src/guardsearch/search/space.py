"""Search spaces: what a problem tells the engine, and nothing about strategies.

A space says how to ask the model for the children of a node (`request`), how to
read candidates out of one answer (`parse`; one call may yield several children),
a cheap objective check to run before any model-backed evaluation (`prefilter`),
how to judge a candidate (`evaluate`), a stable key for dedup (`key`), what a goal
is, and the per-level budgets the DFS uses. Optionally (`BacktrackAdvisor`) it says
which ancestor a failure points to (`backtrack_depth`), which the dfs strategy asks
before its heuristic, and (`ProposesNew`) it builds requests whose grammar cannot
produce a state the search already holds. `BaseSpace` gives sensible defaults; `StepSpace`
(search/pipeline.py) builds a space from guarded `Step`s.
"""

from __future__ import annotations

import json
from collections.abc import Container, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, ClassVar, Protocol, runtime_checkable

from guardsearch.core.budget import StepBudget
from guardsearch.core.context import Context
from guardsearch.core.digest import stable_digest
from guardsearch.core.errors import ConfigError
from guardsearch.core.guard_result import GuardResult
from guardsearch.core.messages import ModelRequest
from guardsearch.search.node import Node
from guardsearch.search.summary import failure_summary

if TYPE_CHECKING:
    from guardsearch.search.heuristic import Failure


@dataclass(frozen=True, kw_only=True)
class Proposal:
    """One candidate read out of a proposer answer (before it becomes a Node).

    `state` must be JSON-serialisable (it is saved with the frontier); `key`, when
    given, is the dedup key (otherwise the space computes one); `parse_error` marks
    a candidate that could not be read, which is pruned without evaluation.
    """

    state: Any
    text: str
    value: Any = None
    key: str | None = None
    parse_error: str | None = None


@dataclass(frozen=True, kw_only=True)
class Root:
    """Where a search starts: the root state and its context (objective pinned)."""

    state: Any
    context: Context


@runtime_checkable
class SearchSpace(Protocol):
    """The protocol every space implements (subclass `BaseSpace` for the defaults)."""

    def root(self) -> Root: ...

    def level(self, depth: int) -> str:
        """The name of the step that expands nodes at `depth` (for events and budgets)."""
        ...

    def step_budget(self, depth: int) -> StepBudget: ...

    def request(
        self, node: Node, context: Context, *, seed: int, temperature: float
    ) -> ModelRequest:
        """The proposer request that yields the children of `node`."""
        ...

    def parse(self, node: Node, text: str) -> Sequence[Proposal]:
        """Candidates in one proposer answer; must not raise (use `parse_error`)."""
        ...

    def key(self, node: Node, proposal: Proposal) -> str:
        """Stable digest of the state a proposal leads to (the dedup key)."""
        ...

    async def prefilter(
        self, node: Node, proposal: Proposal, context: Context
    ) -> GuardResult | None:
        """Cheap objective checks, no model calls; None or a passing result lets it through."""
        ...

    async def evaluate(self, node: Node, proposal: Proposal, context: Context) -> GuardResult:
        """The full verdict (may call the model through the search's budget)."""
        ...

    def patched(self, node: Node, proposal: Proposal, value: Any) -> Proposal:
        """The proposal with its value replaced by a guard's JSON-Patch repair."""
        ...

    def child_context(self, node: Node, context: Context, proposal: Proposal) -> Context:
        """The context the new child's own children will be generated from."""
        ...

    def failure_summary(self, failed_step: str, verdict: GuardResult, path: Sequence[Node]) -> str:
        """The text that amends an ancestor's context when a search backtracks to it."""
        ...

    def is_goal(self, node: Node) -> bool: ...

    def is_terminal(self, node: Node) -> bool:
        """True when `node` cannot be expanded further (a goal or a dead end)."""
        ...

    def answer(self, node: Node) -> Any:
        """What a winning node means to the user (an expression, a plan, ...)."""
        ...


@runtime_checkable
class BacktrackAdvisor(Protocol):
    """An optional space hook: which ancestor a failure points to.

    The space often knows better than a feedback heuristic where a failure was caused
    (a check that names the step whose output broke it). `BaseSpace` implements it as
    "no opinion"; a space without the method is treated the same way.
    """

    def backtrack_depth(self, node: Node, failure: Failure) -> int | None:
        """How many levels above `node` the cause of `failure` lies.

        `node` is the node whose expansion failed (its level is `failure.level`).
        0 = retry that expansion with the feedback, d > 0 = backtrack d levels,
        -1 (`GIVE_UP`) = end the search; None = no opinion: the strategy's heuristic
        decides.
        """
        ...


@runtime_checkable
class ProposesNew(Protocol):
    """An optional space hook: a request that cannot produce a state already known.

    Where the output space is enumerable (the Game of 24's steps), the space can build
    the request's grammar from what is still new: the engine passes the keys of every
    state the search holds (its closed set), and the grammar leaves out the outputs
    that would lead to one of them, so no expansion hands the guards an output already
    judged. The engine calls this instead of `request`.
    """

    def request_new(
        self,
        node: Node,
        context: Context,
        *,
        seed: int,
        temperature: float,
        known: Container[str],
    ) -> ModelRequest | None:
        """The proposer request for children of `node` whose keys are not in `known`;
        None when nothing new can be proposed there (no call is made)."""
        ...


def advised_backtrack_depth(space: object, node: Node, failure: Failure) -> int | None:
    """The space's `backtrack_depth` for `failure`, or None when it has no opinion."""
    if not isinstance(space, BacktrackAdvisor):
        return None
    depth = space.backtrack_depth(node, failure)
    if depth is None:
        return None
    if isinstance(depth, bool) or not isinstance(depth, int) or depth < -1:
        raise ConfigError(
            f"{type(space).__name__}.backtrack_depth returned {depth!r}; "
            "expected None, -1 (give up), 0 (retry) or a number of levels up"
        )
    return depth


class BaseSpace:
    """Defaults for a space; override `root`, `request`, `parse`, `evaluate`, `is_goal`."""

    depth_limit: int = 8
    default_budget: StepBudget = StepBudget()
    # True: a node's expansions go on with its level's schedule and list what the level
    # answered on other paths (Engine.sampling, Engine.generation_context).
    shares_level_history: ClassVar[bool] = False

    def root(self) -> Root:
        raise NotImplementedError

    def level(self, depth: int) -> str:
        return f"level{depth}"

    def step_budget(self, depth: int) -> StepBudget:
        return self.default_budget

    def level_rmax(self, depth: int) -> int | None:
        """The expansions a node at `depth` gets under every strategy, when the space
        decides it (a `StepSpace`: its step's `rmax`); None leaves it to the strategy's
        `rmax` option and default (docs/search.md, "Which rmax applies")."""
        return None

    def request(
        self, node: Node, context: Context, *, seed: int, temperature: float
    ) -> ModelRequest:
        raise NotImplementedError

    def parse(self, node: Node, text: str) -> Sequence[Proposal]:
        raise NotImplementedError

    def key(self, node: Node, proposal: Proposal) -> str:
        """The dedup key of the state `proposal` leads to from `node` (a string; equal
        keys are one state, judged once). Default: the proposal's state (else its text)
        under the parent's key, so one state reached by two paths counts twice; a
        proposal's own `key` wins over this (MoveSpace keys by the state alone)."""
        what = proposal.state if proposal.state is not None else proposal.text.strip()
        return stable_digest([node.key, what])

    async def prefilter(
        self, node: Node, proposal: Proposal, context: Context
    ) -> GuardResult | None:
        return None

    async def evaluate(self, node: Node, proposal: Proposal, context: Context) -> GuardResult:
        return GuardResult.ok("accept")

    def patched(self, node: Node, proposal: Proposal, value: Any) -> Proposal:
        state = value if proposal.state == proposal.value else proposal.state
        text = json.dumps(value, ensure_ascii=False)
        return replace(proposal, value=value, state=state, text=text, key=None)

    def child_context(self, node: Node, context: Context, proposal: Proposal) -> Context:
        return context.for_next_step().amend(artifact=(self.level(node.depth), proposal.text))

    def backtrack_depth(self, node: Node, failure: Failure) -> int | None:
        return None  # no opinion: the strategy's heuristic decides

    def failure_summary(self, failed_step: str, verdict: GuardResult, path: Sequence[Node]) -> str:
        return failure_summary(
            failed_step, verdict.feedback or "failed", [(n.step, n.text) for n in path]
        )

    def is_goal(self, node: Node) -> bool:
        return False

    def is_terminal(self, node: Node) -> bool:
        return node.depth >= self.depth_limit or self.is_goal(node)

    def answer(self, node: Node) -> Any:
        return node.value if node.value is not None else node.text
