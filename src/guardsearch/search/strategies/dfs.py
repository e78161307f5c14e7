"""dfs: feedback-guided depth-first search with retries and backtracking (docs/search.md).

The search keeps a stack of frames, one per level of the current path. A frame
tries its pending children (already paid for) first; when none is left it asks the
proposer again. When every candidate of an attempt fails, the space's
`backtrack_depth` (when it has an opinion) or else the heuristic reads the feedback:
0 retries the same level with the feedback in the retry channel, d > 0 backtracks d
levels and amends that ancestor's context with a failure summary (`search/summary.py`), -1
gives up.

Attempt k at a node samples by the engine's schedule (default: temperature 0, 0.7,
1.0 with fresh seeds), and its prompt lists the node's earlier children. An attempt
whose every candidate repeated an earlier output (dedup dropped them all) judged
nothing: it is not guard feedback. The level is retried with seeds shifted once more
(and `duplicate_temperature`, when set), nothing goes in the retry channel, the
heuristic is not asked, so a repeat never counts toward the repeated-feedback
escalation. The attempt still counts against the level's `rmax`.

Budgets, per level: each *visit* of a level makes at most `rmax`
attempts, and a level may be visited at most `1 + backtrack_budget` times (the first
visit, then once per return from a failure below it or a new parent above it). So a
level makes at most `rmax x (1 + backtrack_budget)` attempts in the whole search and
the proposer calls are bounded by B_max = sum over levels of that, x `samples`.

Termination, when the first level can do nothing more:

- `backtrack_ceiling`: a failure came back to the first level after its visits were
  spent, while some level below still had visits left under a node that passed (its
  allowance was cut off by the limits above it: more backtrack budget could go on);
- `all_pruned`: nothing is left to try: the first level's last visit failed every
  candidate within its `rmax`, or every level the search could reach has spent its
  visits, or a fatal verdict at the first level, or the heuristic gave up;

plus `success` (a goal) and the driver's `budget_exhausted`/`cancelled`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from guardsearch.core.budget import StepBudget
from guardsearch.core.errors import ConfigError
from guardsearch.core.guard_result import GuardResult
from guardsearch.search.expand import Engine, order_key
from guardsearch.search.heuristic import (
    GIVE_UP,
    Failure,
    Heuristic,
    RuleHeuristic,
    decide_with_rule,
)
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
    regenerate this node. Off by default (step pipelines such as the plan app yield one child per
    call, so there is nothing to prefer); on for spaces whose proposer lists many
    children per call, like the Game of 24.

    `duplicate_temperature`: the temperature of a regeneration that follows an attempt
    whose every candidate repeated an earlier output (None: the search's own). Such a
    regeneration always gets fresh seeds; at temperature 0 a greedy model answers the
    same again whatever the seed, so set a small value (e.g. 0.3) to let it vary. Never
    applied unless you set it.

    `rmax`: attempts per visit of every level, over what `budgets` or the space says
    (the same option as the other strategies' `rmax`; None: the level's own).
    """

    heuristic: Heuristic = field(default_factory=RuleHeuristic)
    budgets: Budgets = None
    rmax: int | None = None
    prefer_siblings: bool = False
    duplicate_temperature: float | None = None

    def __post_init__(self) -> None:
        if self.rmax is not None and self.rmax < 1:
            raise ConfigError(f"rmax must be >= 1, got {self.rmax}")
        if self.duplicate_temperature is not None and self.duplicate_temperature < 0:
            raise ConfigError(
                f"duplicate_temperature must be >= 0, got {self.duplicate_temperature}"
            )


def level_budget(space: SearchSpace, budgets: Budgets, level: int) -> StepBudget:
    if isinstance(budgets, StepBudget):
        return budgets
    if budgets:
        found = budgets.get(space.level(level), budgets.get(level))
        if found is not None:
            return found
    return space.step_budget(level)


def b_max(space: SearchSpace, budgets: Budgets = None, *, samples: int = 1, levels: int) -> int:
    """B_max, the bound on proposer calls: sum of rmax x (1 + backtrack_budget), x samples."""
    return samples * sum(level_budget(space, budgets, i).max_calls for i in range(levels))


def _frame(node: str) -> dict[str, Any]:
    # fresh: attempts of this node that only repeated earlier outputs (each shifts the
    # seeds of the node's later attempts); repeat: the last attempt was such a one.
    return {
        "node": node,
        "pending": [],
        "attempts": 0,
        "in_visit": False,
        "last": "",
        "visits": 0,
        "fresh": 0,
        "repeat": False,
    }


def _shift(engine: Engine, node: Node, frame: dict[str, Any]) -> int:
    """How far a node's seeds move past the schedule's: under a schedule without fresh
    seeds (`schedule="fixed"`), once per attempt that only repeated earlier outputs."""
    if engine.schedule_for(node).fresh_seeds:
        return 0  # every expansion of the node has fresh seeds already
    return int(frame.get("fresh", 0)) * engine.options.samples


NO_NEW_OUTPUT = "no new output: every regeneration repeated an earlier output"


class _GoOn:
    """What a part of `DFS.step` returns when it did not end the step."""


_GO_ON = _GoOn()


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
        """One unit of work: descend into a child already paid for (`_choose`), or open
        or close a visit of the top level (`_visit`), then expand its node and act on
        what came back (`_expand`): descend, retry, or backtrack (`_backtrack_or_retry`)."""
        stack: list[dict[str, Any]] = engine.state.data["stack"]
        if not stack:
            return "all_pruned"
        chosen = self._choose(engine, stack)
        if not isinstance(chosen, _GoOn):
            return chosen
        limited = self._visit(engine, options, stack)
        if not isinstance(limited, _GoOn):
            return limited
        return await self._expand(engine, options, stack)

    def _choose(self, engine: Engine, stack: list[dict[str, Any]]) -> Termination | _GoOn | None:
        """Take the top frame's next pending child (siblings already generated: no call):
        a goal ends the search, an open child is descended into. `_GO_ON` when none is
        left."""
        frame = stack[-1]
        while frame["pending"]:
            child = engine.node(frame["pending"].pop(0))
            if child.status == "goal":
                engine.state.goal = child.id
                return "success"
            if child.status == "open":
                stack.append(_frame(child.id))
                engine.trace.emit("phase", node=child.id, step=child.step, action="descend")
                return None
        return _GO_ON

    def _budget(self, engine: Engine, options: DFSOptions, level: int) -> StepBudget:
        budget = level_budget(engine.space, options.budgets, level)
        return budget if options.rmax is None else replace(budget, rmax=options.rmax)

    def _visit(
        self, engine: Engine, options: DFSOptions, stack: list[dict[str, Any]]
    ) -> Termination | _GoOn | None:
        """Open a visit of the top frame's level, or give up on it when the visit's
        `rmax`, the level's visits or a preference for siblings above says so; `_GO_ON`
        when the node is to be expanded."""
        data, frame = engine.state.data, stack[-1]
        node = engine.node(frame["node"])
        level = node.depth
        budget = self._budget(engine, options, level)
        if frame["in_visit"]:
            if frame["attempts"] < budget.rmax:
                return _GO_ON
            last = frame["last"] or (NO_NEW_OUTPUT if frame.get("repeat") else "")
            verdict = GuardResult.fail(last or "retries exhausted", "dfs")
            return self._fail_up(engine, options, stack, verdict, "ceiling", limit="retries")
        if (
            options.prefer_siblings
            and frame["visits"] > 0
            and any(f["pending"] for f in stack[:-1])
        ):
            why = "its children failed; untried alternatives remain above"
            verdict = GuardResult.fail(why, "dfs")
            return self._fail_up(
                engine, options, stack, verdict, "pruned", amend=False, rule="prefer siblings"
            )
        used = data["visits"].get(str(level), 0)
        if used >= 1 + budget.backtrack_budget:
            why = f"level {engine.space.level(level)} was visited {used} times (limit)"
            verdict = GuardResult.fail(why, "dfs")
            return self._fail_up(
                engine, options, stack, verdict, "ceiling", amend=False, limit="visits"
            )
        data["visits"][str(level)] = used + 1
        frame["visits"] += 1
        frame["in_visit"], frame["attempts"] = True, 0
        frame["last"], frame["repeat"] = "", False
        engine.clear_feedback(node)
        return _GO_ON

    async def _expand(
        self, engine: Engine, options: DFSOptions, stack: list[dict[str, Any]]
    ) -> Termination | None:
        """Expand the top frame's node once and act on the children: a goal ends the
        search, viable ones become pending, a repeat-only attempt is retried with fresh
        seeds, and a failure goes to `_backtrack_or_retry`."""
        data, frame = engine.state.data, stack[-1]
        node = engine.node(frame["node"])
        key = str(node.depth)
        heat = options.duplicate_temperature if frame.get("repeat") else None
        expansion = await engine.expand(
            node, temperature=heat, seed_shift=_shift(engine, node, frame)
        )
        frame["attempts"] += 1
        data["attempts"][key] = data["attempts"].get(key, 0) + 1
        if expansion.duplicates and not expansion.children:
            # Nothing was judged: not guard feedback. Retry with fresh seeds, within rmax.
            frame["fresh"], frame["repeat"] = int(frame.get("fresh", 0)) + 1, True
            engine.trace.emit(
                "retry",
                step=engine.space.level(node.depth),
                node=node.id,
                attempt=frame["attempts"] + 1,
                reason="duplicate",
                duplicate_of=list(expansion.duplicates),
                seed_offset=engine.sampling(node, seed_shift=_shift(engine, node, frame))[0],
                temperature=options.duplicate_temperature,
            )
            return None
        frame["repeat"] = False
        viable = sorted(expansion.viable, key=order_key)
        goals = [c for c in viable if c.status == "goal"]
        if goals:
            engine.state.goal = goals[0].id
            return "success"
        if viable:
            frame["pending"] = [c.id for c in viable]
            return None
        return await self._backtrack_or_retry(engine, options, stack, expansion)

    async def _backtrack_or_retry(
        self, engine: Engine, options: DFSOptions, stack: list[dict[str, Any]], expansion: Any
    ) -> Termination | None:
        """Every candidate of the attempt failed: the space (`backtrack_depth`), else the
        heuristic, says how far up the cause lies; retry here with the feedback, or
        backtrack to that ancestor, or give up."""
        frame = stack[-1]
        node = engine.node(frame["node"])
        level = node.depth
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
        decided_by, rule = "space", "space: backtrack_depth"
        if depth is None:
            depth, rule = await decide_with_rule(options.heuristic, failure)
            decided_by = "heuristic"
        engine.trace.emit(
            "note",
            step=failure.step,
            node=node.id,
            message="heuristic",
            depth=depth,
            by=decided_by,
            rule=rule,
            feedback=verdict.feedback,
        )
        if depth == GIVE_UP:
            return "all_pruned"
        if verdict.fatal:
            return self._fail_up(engine, options, stack, verdict, "pruned", rule="fatal verdict")
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
        self._backtrack(engine, stack, target, verdict, decided_by, expansion.children, rule=rule)
        return None

    def _fail_up(
        self,
        engine: Engine,
        options: DFSOptions,
        stack: list[dict[str, Any]],
        verdict: GuardResult,
        why: str,
        *,
        amend: bool = True,
        limit: str | None = None,
        rule: str | None = None,
    ) -> Termination | None:
        """The top frame gives up: one level up, or the end of the search at the root.

        `amend=False` when the reason is the search's own bookkeeping (a visit limit,
        siblings preferred), not something the model should read about. `limit` says
        which limit ran out ("visits" or "retries"), for the termination at the root.
        """
        node = engine.node(stack[-1]["node"])
        step = engine.space.level(node.depth)
        if rule is None and limit == "visits":
            rule = f"visit limit of {step}"
        elif rule is None and limit == "retries":
            rule = f"rmax exhausted at {step}"
        if len(stack) == 1:
            ceiling = limit == "visits" and self._alternatives_remain(engine, options)
            engine.trace.emit(
                "backtrack",
                step=step,
                node=node.id,
                to=None,
                reason=why,
                rule=rule,
                feedback=verdict.feedback,
                alternatives=ceiling,
            )
            return "backtrack_ceiling" if ceiling else "all_pruned"
        tried = [c for c in engine.tree.children(node.id) if not c.viable]
        self._backtrack(engine, stack, len(stack) - 2, verdict, why, tried, amend=amend, rule=rule)
        return None

    @staticmethod
    def _alternatives_remain(engine: Engine, options: DFSOptions) -> bool:
        """Is there a level the search could still expand, were it not for the limits
        above it: a node that passed (not yet a goal or a dead end) whose level has
        visits left?"""
        visits: dict[str, int] = engine.state.data["visits"]
        for node in engine.tree:
            if node.status not in ("root", "open", "expanded"):
                continue
            budget = level_budget(engine.space, options.budgets, node.depth)
            if visits.get(str(node.depth), 0) < 1 + budget.backtrack_budget:
                return True
        return False

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
        rule: str | None = None,
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
            rule=rule,
            feedback=verdict.feedback,
        )


register_strategy(DFS())
