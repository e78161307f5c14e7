"""dfs: feedback-guided depth-first search with retries and backtracking (seed 000 §4-§7).

The search keeps a stack of frames, one per level of the current path. A frame
tries its pending children (already paid for) first; when none is left it asks the
proposer again. When every candidate of an attempt fails, the space's
`backtrack_depth` (when it has an opinion) or else the heuristic reads the feedback:
0 retries the same level with the feedback in the retry channel, d > 0 backtracks d
levels and amends that ancestor's context with a failure summary (seed 000 §6), -1
gives up.

Budgets (seed 000 §5), per level: each *visit* of a level makes at most `rmax`
attempts, and a level may be visited at most `1 + backtrack_budget` times (the first
visit, then once per return from a failure below it or a new parent above it). So a
level makes at most `rmax x (1 + backtrack_budget)` attempts in the whole search and
the proposer calls are bounded by B_max = sum over levels of that, x `samples`.

Termination: `success` (a goal), `backtrack_ceiling` (a level's retries or visits ran
out and nothing above it can go on), `all_pruned` (a fatal verdict at the root
level, or the heuristic gave up), plus the driver's `budget_exhausted`/`cancelled`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from guardsearch.core.budget import StepBudget
from guardsearch.core.guard_result import GuardResult
from guardsearch.search.expand import Engine, order_key
from guardsearch.search.heuristic import GIVE_UP, Failure, Heuristic, RuleHeuristic, decide
from guardsearch.search.node import Node
from guardsearch.search.space import SearchSpace, advised_backtrack_depth
from guardsearch.search.state import Termination
from guardsearch.search.strategies.base import register_strategy

Budgets = StepBudget | Mapping[str | int, StepBudget] | None


@dataclass(frozen=True, kw_only=True)
class DFSOptions:
    """`heuristic`: feedback -> backtrack depth, asked when the space's
    `backtrack_depth` has no opinion (returns None); `budgets`: one StepBudget for every
    level, or per level name/index (default: the space's `step_budget`).

    `prefer_siblings`: when a node's children have all failed and an ancestor still
    holds untried children (already paid for), go up to them before paying to
    regenerate this node. Off by default (seed 000's pipelines yield one child per
    call, so there is nothing to prefer); on for spaces whose proposer lists many
    children per call, like the Game of 24.
    """

    heuristic: Heuristic = field(default_factory=RuleHeuristic)
    budgets: Budgets = None
    prefer_siblings: bool = False


def level_budget(space: SearchSpace, budgets: Budgets, level: int) -> StepBudget:
    if isinstance(budgets, StepBudget):
        return budgets
    if budgets:
        found = budgets.get(space.level(level), budgets.get(level))
        if found is not None:
            return found
    return space.step_budget(level)


def b_max(space: SearchSpace, budgets: Budgets = None, *, samples: int = 1, levels: int) -> int:
    """Seed 000's bound on proposer calls: sum of rmax x (1 + backtrack_budget), x samples."""
    return samples * sum(level_budget(space, budgets, i).max_calls for i in range(levels))


def _frame(node: str) -> dict[str, Any]:
    return {"node": node, "pending": [], "attempts": 0, "in_visit": False, "last": "", "visits": 0}


class DFS:
    name = "dfs"
    Options = DFSOptions

    def start(self, engine: Engine, options: DFSOptions) -> None:
        engine.state.data = {
            "stack": [_frame(engine.tree.root_id)],
            "visits": {},
            "attempts": {},
        }

    async def step(self, engine: Engine, options: DFSOptions) -> Termination | None:
        data = engine.state.data
        stack: list[dict[str, Any]] = data["stack"]
        if not stack:
            return "all_pruned"
        frame = stack[-1]
        node = engine.node(frame["node"])
        level = node.depth

        while frame["pending"]:  # siblings already generated: no call needed
            child = engine.node(frame["pending"].pop(0))
            if child.status == "goal":
                engine.state.goal = child.id
                return "success"
            if child.status == "open":
                stack.append(_frame(child.id))
                engine.trace.emit("phase", node=child.id, step=child.step, action="descend")
                return None

        budget = level_budget(engine.space, options.budgets, level)
        key = str(level)
        if not frame["in_visit"]:
            if (
                options.prefer_siblings
                and frame["visits"] > 0
                and any(f["pending"] for f in stack[:-1])
            ):
                why = "its children failed; untried alternatives remain above"
                verdict = GuardResult.fail(why, "dfs")
                return self._fail_up(engine, stack, verdict, "pruned", amend=False)
            used = data["visits"].get(key, 0)
            if used >= 1 + budget.backtrack_budget:
                why = f"level {engine.space.level(level)} was visited {used} times (limit)"
                verdict = GuardResult.fail(why, "dfs")
                return self._fail_up(engine, stack, verdict, "ceiling", amend=False)
            data["visits"][key] = used + 1
            frame["visits"] += 1
            frame["in_visit"], frame["attempts"] = True, 0
            engine.clear_feedback(node)
        elif frame["attempts"] >= budget.rmax:
            verdict = GuardResult.fail(frame["last"] or "retries exhausted", "dfs")
            return self._fail_up(engine, stack, verdict, "ceiling")

        expansion = await engine.expand(node)
        frame["attempts"] += 1
        data["attempts"][key] = data["attempts"].get(key, 0) + 1
        viable = sorted(expansion.viable, key=order_key)
        goals = [c for c in viable if c.status == "goal"]
        if goals:
            engine.state.goal = goals[0].id
            return "success"
        if viable:
            frame["pending"] = [c.id for c in viable]
            return None

        verdict = engine.failure_of(expansion)
        frame["last"] = verdict.feedback
        failure = Failure(
            step=engine.space.level(level),
            level=level,
            verdict=verdict,
            retry_count=frame["attempts"],
            history=tuple(node.feedback),
            steps=tuple(engine.space.level(i) for i in range(level + 1)),
            context=engine.generation_context(node),
        )
        # The space knows its own structure: it is asked first, the heuristic after.
        depth = advised_backtrack_depth(engine.space, node, failure)
        decided_by = "space"
        if depth is None:
            depth, decided_by = await decide(options.heuristic, failure), "heuristic"
        engine.trace.emit(
            "note",
            step=failure.step,
            node=node.id,
            message="heuristic",
            depth=depth,
            by=decided_by,
            feedback=verdict.feedback,
        )
        if depth == GIVE_UP:
            return "all_pruned"
        if verdict.fatal:
            return self._fail_up(engine, stack, verdict, "pruned")
        target = max(0, len(stack) - 1 - depth)
        if depth == 0 or target == len(stack) - 1:
            engine.add_feedback(node, verdict.feedback)
            engine.trace.emit(
                "retry",
                step=failure.step,
                node=node.id,
                attempt=frame["attempts"] + 1,
                feedback=verdict.feedback,
            )
            return None
        self._backtrack(engine, stack, target, verdict, decided_by, expansion.children)
        return None

    def _fail_up(
        self,
        engine: Engine,
        stack: list[dict[str, Any]],
        verdict: GuardResult,
        why: str,
        *,
        amend: bool = True,
    ) -> Termination | None:
        """The top frame gives up: one level up, or the end of the search at the root.

        `amend=False` when the reason is the search's own bookkeeping (a visit limit,
        siblings preferred), not something the model should read about.
        """
        if len(stack) == 1:
            node = engine.node(stack[0]["node"])
            engine.trace.emit(
                "backtrack",
                step=engine.space.level(node.depth),
                node=node.id,
                to=None,
                reason=why,
                feedback=verdict.feedback,
            )
            return "backtrack_ceiling" if why == "ceiling" else "all_pruned"
        node = engine.node(stack[-1]["node"])
        tried = [c for c in engine.tree.children(node.id) if not c.viable]
        self._backtrack(engine, stack, len(stack) - 2, verdict, why, tried, amend=amend)
        return None

    def _backtrack(
        self,
        engine: Engine,
        stack: list[dict[str, Any]],
        target: int,
        verdict: GuardResult,
        why: str,
        tried: list[Node],
        *,
        amend: bool = True,
    ) -> None:
        """Pop to frame `target` and amend its node's context with the failure summary."""
        failed = engine.node(stack[-1]["node"])
        ancestor = engine.node(stack[target]["node"])
        path = engine.tree.path(failed.id)[target + 1 :]
        if tried:
            path = [*path, min(tried, key=order_key)]
        failed_level = engine.space.level(failed.depth)
        summary = engine.summary_for(failed_level, verdict, path)
        del stack[target + 1 :]
        frame = stack[target]
        frame["in_visit"] = False  # regenerating here would be a new visit
        if amend:
            engine.amend(ancestor, failure=summary)
        engine.trace.emit(
            "backtrack",
            step=failed_level,
            node=failed.id,
            to=ancestor.id,
            to_step=engine.space.level(ancestor.depth),
            depth=failed.depth - ancestor.depth,
            reason=why,
            feedback=verdict.feedback,
        )


register_strategy(DFS())
