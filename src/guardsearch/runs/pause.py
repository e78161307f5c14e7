"""Pausing for a person: a guard that asks (`GuardResult.ask`) stops the run, resumably.

`AskingSpace` wraps a run's space: when a verdict carries `ask`, or a guard raises
`InputNeeded`, the expansion stops before anything is committed and `InputNeeded`
propagates with the node whose expansion asked. The run layer marks the run
`paused` with the question; its last saved frontier is the state to resume (save
the frontier, re-raise). `runs resume RUN_ID --input TEXT` puts the answer
into that node's context (`Context.inputs`, rendered as "Input from a person"), where
the guard and the proposer see it, and repeats the expansion.
"""

from __future__ import annotations

from typing import Any

from guardsearch.core.context import Context
from guardsearch.core.errors import RunError
from guardsearch.core.guard_result import GuardResult
from guardsearch.search.node import Node
from guardsearch.search.space import Proposal, SearchSpace


class InputNeeded(RunError):
    """A guard or step needs a person's answer before the run can go on."""

    def __init__(self, question: str, node: str | None = None) -> None:
        super().__init__(f"waiting for input: {question}")
        self.question = question
        self.node = node


class AskingSpace:
    """A space whose verdicts may pause the run (everything else is the inner space's)."""

    def __init__(self, inner: SearchSpace) -> None:
        self.inner = inner

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)

    async def prefilter(
        self, node: Node, proposal: Proposal, context: Context
    ) -> GuardResult | None:
        verdict = await self._asking(node, self.inner.prefilter(node, proposal, context))
        return verdict

    async def evaluate(self, node: Node, proposal: Proposal, context: Context) -> GuardResult:
        verdict = await self._asking(node, self.inner.evaluate(node, proposal, context))
        assert verdict is not None
        return verdict

    async def _asking(self, node: Node, pending: Any) -> GuardResult | None:
        try:
            verdict: GuardResult | None = await pending
        except InputNeeded as exc:
            raise InputNeeded(exc.question, exc.node or node.id) from exc
        if verdict is not None and verdict.ask:
            raise InputNeeded(verdict.ask, node.id)
        return verdict
