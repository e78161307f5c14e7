"""The one expansion engine every strategy uses, with the safeguards always on.

`Engine.expand(node)` is the only place a proposer is called and a candidate judged:

1. **Budget first**: the whole expansion must fit the budget (`samples` calls), or
   `BudgetExceeded` is raised before anything is spent; each call then goes
   reserve -> execute -> reconcile through `Metered`.
2. **Goal pinning**: prompts are rendered from the node's Context, whose first line
   is always "Primary objective: ..." (proposer and model-backed evaluators alike).
3. **Determinism and diversity**: expansion k of a node samples by the `Schedule`
   (default: temperature 0, then 0.7, then 1.0, each with fresh seeds); sample i of
   an expansion uses seed `seed + offset + i`, so diversity comes from explicit seeds
   and every run replays. A re-expansion's prompt lists what the node's earlier
   children were (the retry channel), and where one enum decides a whole output
   (`proposal_is_output` spaces) the values already judged are excluded from it.
4. **Dedup**: each candidate's state key is looked up in the closed set; a duplicate
   is dropped before any evaluation (no model call) with a `candidate_dropped` event
   and counted as a repeat (`SearchState.steering`). A space that `ProposesNew`
   builds its request from the closed set, so its grammar cannot produce a known
   state at all; with nothing new left, the expansion makes no call (`exhausted`).
5. **Pre-filter**: unparseable candidates and the space's cheap objective checks are
   settled before any model-backed evaluation; a failed hard check gives h = inf.
6. **Repair**: a failed verdict that carries a JSON Patch is applied and re-judged
   instead of regenerating; the repair is kept only if it passes (and counted).
7. **Path summary**: a child's context keeps earlier results under a token cap.
8. **Events**: every expansion, verdict, drop and repair is an Event in the trace.

With `concurrency > 1` an expansion's `samples` proposer calls run at once, and so
does the judging of its new candidates, at most `concurrency` at a time; dedup and
node ids are settled in sample order first and nodes are built in that order, so
the tree is the one the sequential run builds (for a model whose answer depends only
on the request). `prefetch` starts the proposer calls of an expansion a strategy
knows it will make next; they are used (and committed) when that expansion runs.

Strategies only decide *which* node to expand next and what to do with the result.
"""

from __future__ import annotations

import asyncio
import math
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field, replace
from typing import Any

from guardsearch.core.context import Context
from guardsearch.core.errors import BudgetExceeded, ConfigError, ParseError
from guardsearch.core.events import Trace
from guardsearch.core.guard_result import GuardResult
from guardsearch.core.messages import CallInfo, Completion, ModelRequest
from guardsearch.core.schedule import DEFAULT_SCHEDULE, Schedule
from guardsearch.core.usage import Usage
from guardsearch.guards.constraints import constraint_names, exclude_values, satisfies
from guardsearch.guards.diff import apply_patch
from guardsearch.guards.parse import parse_json
from guardsearch.models.base import enforces_schema, size_model_pool
from guardsearch.models.metered import Metered
from guardsearch.search.node import INF, Node, NodeStatus, SearchTree
from guardsearch.search.space import Proposal, ProposesNew, SearchSpace
from guardsearch.search.state import SearchState
from guardsearch.search.summary import Summarizer, summarize_path

Checkpoint = Callable[[SearchState], "Awaitable[None] | None"]
StopSignal = Callable[[], bool]


@dataclass(frozen=True, kw_only=True)
class EngineOptions:
    """Options every strategy accepts (passed as keywords to `search`)."""

    samples: int = 1
    concurrency: int = 1
    temperature: float = 0.0
    seed: int = 0
    path_token_cap: int = 2000
    summarizer: Summarizer | None = None
    max_expansions: int | None = None
    should_stop: StopSignal | None = None
    schedule: Schedule | str | list[float] | None = None

    def __post_init__(self) -> None:
        if self.schedule is not None:
            object.__setattr__(self, "schedule", Schedule.of(self.schedule))
        if self.samples < 1:
            raise ConfigError(f"samples must be >= 1, got {self.samples}")
        if (
            isinstance(self.concurrency, bool)
            or not isinstance(self.concurrency, int)
            or self.concurrency < 1
        ):
            raise ConfigError(f"concurrency must be an integer >= 1, got {self.concurrency!r}")
        if self.temperature < 0:
            raise ConfigError(f"temperature must be >= 0, got {self.temperature}")
        if self.path_token_cap < 16:
            raise ConfigError(f"path_token_cap must be >= 16, got {self.path_token_cap}")
        if self.max_expansions is not None and self.max_expansions < 0:
            raise ConfigError(f"max_expansions must be >= 0, got {self.max_expansions}")


@dataclass(kw_only=True)
class Expansion:
    """What one expansion produced: new (judged) children and dropped duplicates."""

    node: str
    children: list[Node] = field(default_factory=list)
    duplicates: list[str] = field(default_factory=list)  # ids of the nodes they repeat
    calls: int = 0
    exhausted: bool = False  # the space had nothing new to propose (no call was made)

    @property
    def viable(self) -> list[Node]:
        return [c for c in self.children if c.viable]


def _h(verdict: GuardResult) -> float:
    if verdict.fatal or verdict.hard_failed:
        return INF
    score = verdict.score if verdict.score is not None else (1.0 if verdict.passed else 0.0)
    return 1.0 - score


def order_key(node: Node) -> tuple[float, int]:
    """Best first: lowest h, then creation order."""
    return (node.h, int(node.id[1:]) if node.id[1:].isdigit() else 0)


class Engine:
    """Expands nodes of one search over one space, booking everything in one state."""

    def __init__(
        self,
        space: SearchSpace,
        metered: Metered,
        state: SearchState,
        options: EngineOptions,
    ) -> None:
        self.space = space
        self.metered = metered
        self.state = state
        self.options = options
        self.summarize: Summarizer = options.summarizer or summarize_path
        # At most `concurrency` model calls (proposer calls, judging) at once.
        self._gate = asyncio.Semaphore(options.concurrency)
        size_model_pool(metered, options.concurrency)
        # Proposer calls started before their expansion, by (node id, request digest).
        self._prefetched: dict[tuple[str, str], asyncio.Task[Completion]] = {}
        self._queued = 0  # prefetched calls still waiting for a slot (nothing reserved yet)
        self._started: set[asyncio.Task[Any]] = set()  # prefetched calls under way
        # Candidates of the expansion under way that a repair made pass, and those
        # decoded under guard constraints a backend enforced (counted at the commit).
        self._repaired: set[str] = set()
        self._constrained: set[str] = set()

    @property
    def trace(self) -> Trace:
        return self.metered.trace

    @property
    def tree(self) -> SearchTree:
        return self.state.tree

    # -- node bookkeeping (every change marks the node for incremental saves) ----------

    def node(self, ident: str) -> Node:
        return self.state.tree[ident]

    def set_status(self, node: Node, status: NodeStatus) -> None:
        node.status = status
        self.state.touch(node)

    def add_feedback(self, node: Node, feedback: str) -> None:
        """Put `feedback` in the retry channel of `node`'s next expansion."""
        node.feedback.append(feedback)
        self.state.touch(node)

    def clear_feedback(self, node: Node) -> None:
        node.feedback.clear()
        self.state.touch(node)

    def amend(self, node: Node, *, failure: str) -> None:
        """Amend `node`'s context with a downstream failure (the backtrack channel)."""
        node.context = node.context.amend(failure=failure)
        self.state.touch(node)

    def call_info(self, node: Node) -> CallInfo:
        """What a proposer call for `node`'s children carries: the guards' rejections of
        its children so far, its repeated proposals, the rejecting guards (a model
        ladder escalates on them)."""
        failed = [
            c.verdict
            for c in self.state.tree.children(node.id)
            if c.verdict is not None and not c.verdict.passed
        ]
        return CallInfo(
            role="propose",
            rejections=len(failed),
            repeats=node.repeats,
            verdicts=tuple(dict.fromkeys(v.guard for v in failed)),
        )

    def level_peers(self, node: Node) -> list[Node]:
        """The other nodes of `node`'s level that were expanded already, oldest first,
        when the space shares a level's history (`shares_level_history`: a pipeline,
        whose nodes at one depth differ only in the outputs above them); else none."""
        if not getattr(self.space, "shares_level_history", False):
            return []
        return [
            n
            for n in self.state.tree
            if n.depth == node.depth and n.id != node.id and n.expansions > 0
        ]

    def generation_context(self, node: Node, *, independent: bool = False) -> Context:
        """The context `node`'s children are generated from: its own, its retry feedback
        and (the same channel) what its earlier children were, with their verdicts —
        and, in a space that shares a level's history, what the level answered on the
        paths tried before (a plan rejected under the previous strategy, with its fix);
        for an `independent` sample (a consensus candidate), without those."""
        ctx = node.context
        for text in node.feedback:
            ctx = ctx.amend(feedback=text)
        if independent:
            return ctx
        earlier = [c for p in self.level_peers(node) for c in self.state.tree.children(p.id)]
        for child in [*earlier, *self.state.tree.children(node.id)]:
            if child.verdict is None:
                continue
            if child.viable:
                why = "accepted"
            elif child.verdict.feedback in ctx.feedback:
                why = "rejected, as above"  # its feedback is in the list already
            else:
                why = f"rejected: {child.verdict.feedback}"
            ctx = ctx.amend(tried=(child.text, why))
        return ctx

    def schedule_for(self, node: Node) -> Schedule:
        """The schedule of `node`'s expansions: the search's `schedule` option, else the
        space's for that level (a `StepSpace` level: its step's), else the default."""
        if isinstance(self.options.schedule, Schedule):
            return self.options.schedule
        own = getattr(self.space, "schedule", None)
        found = own(node.depth) if callable(own) else None
        return found if isinstance(found, Schedule) else DEFAULT_SCHEDULE

    def sampling(
        self,
        node: Node,
        seed_offset: int | None = None,
        temperature: float | None = None,
        seed_shift: int = 0,
    ) -> tuple[int, float]:
        """(first seed offset, temperature) of `node`'s next expansion: by the schedule
        for expansion `node.expansions + 1`, unless the strategy fixes either. In a space
        that shares a level's history the count runs over the level: a node regenerated
        under a new parent goes on from where its level was (a greedy first attempt there
        would mostly give the answer its level already had judged)."""
        schedule = self.schedule_for(node)
        attempt = node.expansions + 1 + sum(p.expansions for p in self.level_peers(node))
        if seed_offset is None:
            seed_offset = schedule.seed_offset(attempt) * self.options.samples + seed_shift
        if temperature is None:
            temperature = schedule.temperature(attempt, self.options.temperature)
        return seed_offset, temperature

    def count(self, **counts: int) -> None:
        """Add to the search's steering counts (outputs, repeats, repairs, prevented)."""
        for name, n in counts.items():
            self.state.steering[name] = self.state.steering.get(name, 0) + n

    def _request(
        self, node: Node, ctx: Context, *, seed: int, temperature: float, independent: bool
    ) -> ModelRequest | None:
        """The space's proposer request; for a space whose one proposal is the whole
        output, the values its children already had are excluded from a deciding enum.
        A `ProposesNew` space builds it from the closed set instead, and returns None
        when nothing new is left there (no call is made); an `independent` sample (a
        consensus candidate) is asked as the plain request."""
        if isinstance(self.space, ProposesNew) and not independent:
            return self.space.request_new(
                node, ctx, seed=seed, temperature=temperature, known=self.state.closed
            )
        request = self.space.request(node, ctx, seed=seed, temperature=temperature)
        if (
            independent
            or request.json_schema is None
            or not getattr(self.space, "proposal_is_output", False)
        ):
            return request
        tried = [c.value for c in self.state.tree.children(node.id) if c.value is not None]
        narrowed = exclude_values(request.json_schema, tried) if tried else None
        return replace(request, json_schema=narrowed) if narrowed is not None else request

    def _prevented(self, request: ModelRequest, completion: Completion) -> bool:
        """Was this output decoded under guard constraints by a backend that enforces
        them (and kept them): a failure the constraint took away?"""
        schema = request.json_schema
        if schema is None or not constraint_names(schema) or not enforces_schema(self.metered):
            return False
        try:
            value = parse_json(completion.text)
        except ParseError:
            return False
        return satisfies(value, schema)

    def viable_children(self, node: Node) -> list[Node]:
        """Children that passed their guard and are not yet used up, best first."""
        kids = [c for c in self.state.tree.children(node.id) if c.status in ("open", "goal")]
        return sorted(kids, key=order_key)

    def failure_of(self, expansion: Expansion) -> GuardResult:
        """The verdict that explains why an expansion gave nothing to build on."""
        failed = [c for c in expansion.children if c.verdict is not None and not c.viable]
        if failed:
            best = min(failed, key=order_key)
            assert best.verdict is not None
            return best.verdict
        if expansion.exhausted and not expansion.children and not expansion.duplicates:
            return GuardResult.fail(
                "nothing new to propose: every output at this node has been tried", "dedup"
            )
        repeats = [self.node(i) for i in expansion.duplicates]
        known = [n.verdict for n in repeats if n.verdict is not None and not n.verdict.passed]
        if known:
            return known[0]
        if repeats:
            shown = "; ".join(n.preview(60) for n in repeats[:3])
            return GuardResult.fail(
                f"no new candidates: every proposal repeats an earlier one ({shown}); "
                "propose something not listed as already answered",
                "dedup",
            )
        return GuardResult.fail("no candidates: the answer held nothing usable", "parse")

    def summary_for(self, failed_level: str, verdict: GuardResult, path: list[Node]) -> str:
        """The space's failure summary (default: step, feedback, previews of <= 200 chars)."""
        return self.space.failure_summary(failed_level, verdict, path)

    # -- budget -------------------------------------------------------------------------

    def reserve_expansion(self, calls: int | None = None) -> None:
        """Raise BudgetExceeded unless a whole expansion fits (checked before any call).

        `calls` is how many of the expansion's proposer calls are still to be made
        (default `samples`; fewer when some were prefetched and so already reserved or
        paid). Prefetched calls still waiting for a slot count as well.
        """
        limit = self.options.max_expansions
        if limit is not None and self.state.expansions >= limit:
            self.trace.emit("budget_exceeded", reason=f"max_expansions {limit} reached")
            raise BudgetExceeded(
                f"max_expansions {limit} reached", self.metered.usage, "max_expansions"
            )
        pending = self.options.samples if calls is None else calls
        reason = self.metered.budget.violation(Usage(calls=pending + self._queued))
        if reason:
            self.trace.emit("budget_exceeded", reason=reason, used=self.metered.usage.as_dict())
            raise BudgetExceeded(reason, self.metered.usage, self.metered.budget.describe())

    # -- concurrency: the gate, prefetched proposer calls ---------------------------------

    @property
    def lookahead(self) -> int:
        """How many expansions' proposer calls fill the `concurrency` slots (>= 1)."""
        return max(1, -(-self.options.concurrency // self.options.samples))

    def _requests(
        self,
        node: Node,
        seed_offset: int | None,
        temperature: float | None,
        seed_shift: int = 0,
        independent: bool = False,
    ) -> list[tuple[int, ModelRequest]]:
        """The proposer requests of `node`'s next expansion, with their seeds."""
        offset, heat = self.sampling(node, seed_offset, temperature, seed_shift)
        ctx = self.generation_context(node, independent=independent)
        first = self.options.seed + offset
        call = self.call_info(node)
        out = []
        for seed in range(first, first + self.options.samples):
            request = self._request(node, ctx, seed=seed, temperature=heat, independent=independent)
            if request is not None:
                out.append((seed, request.with_call(call)))
        return out

    async def _call(
        self, request: ModelRequest, level: str, node: str, *, queued: bool = False
    ) -> Completion:
        """One proposer call through the gate (reserve -> execute -> reconcile: Metered)."""
        try:
            await self._gate.acquire()
        finally:
            if queued:
                self._queued -= 1
        task = asyncio.current_task() if queued else None
        if task is not None:
            self._started.add(task)
        try:
            # Metered reserves before its first await, so a call leaves the queue and
            # enters the ledger in one step: the budget never loses sight of it.
            return await self.metered.complete(request, step=level, node=node)
        finally:
            self._gate.release()
            if task is not None:
                self._started.discard(task)

    def prefetch(
        self,
        node: Node,
        *,
        seed_offset: int | None = None,
        temperature: float | None = None,
        independent: bool = False,
    ) -> bool:
        """Start the proposer calls of `node`'s next expansion now (concurrency > 1 only).

        A strategy calls this for an expansion it will make later whatever happens in
        between (the next consensus rounds, the rest of a beam level). The calls run in
        the background, through the gate and `Metered`; `expand` picks their answers up
        by request digest, and everything else (dedup, judging, node ids, the commit)
        happens in `expand`, in the order the strategy expands. Only an expansion whose
        whole set of calls fits the budget now is started. A prefetched answer that no
        expansion asks for (the search ended first) is cancelled by `close`. Returns True
        when the expansion's calls are under way (now or before).
        """
        if self.options.concurrency <= 1 or isinstance(self.space, ProposesNew):
            # A ProposesNew request depends on the closed set when the expansion runs,
            # which the expansions before it still change: a prefetch would be wasted.
            return False
        samples = self.options.samples
        limit = self.options.max_expansions
        ahead = -(-len(self._prefetched) // samples)
        if limit is not None and self.state.expansions + ahead >= limit:
            return False
        todo: dict[tuple[str, str], ModelRequest] = {}
        for _, request in self._requests(node, seed_offset, temperature, independent=independent):
            key = (node.id, request.digest())
            if key not in self._prefetched:
                todo.setdefault(key, request)  # a request twice is prefetched once
        if not todo:
            return True
        if self.metered.budget.violation(Usage(calls=len(todo) + self._queued)):
            return False
        level = self.space.level(node.depth)
        for key, request in todo.items():
            self._queued += 1
            self._prefetched[key] = asyncio.ensure_future(
                self._call(request, level, node.id, queued=True)
            )
        return True

    async def close(self, *, wait: bool = True) -> None:
        """End the prefetched calls no expansion used; the search driver calls this last.

        Calls still waiting for a slot are cancelled (they reserved nothing). Calls
        under way are awaited when `wait` (they are paid for anyway, and a durable run
        keeps their answers for a resume), else cancelled too (a cancelled search
        stops at once; a call cancelled in flight still counts as a call).
        """
        tasks = list(self._prefetched.values())
        self._prefetched.clear()
        for task in tasks:
            if not (wait and task in self._started):
                task.cancel()
        if tasks:
            await asyncio.gather(*tasks, return_exceptions=True)
        self._started.clear()
        self._queued = 0  # a task cancelled before it ever ran never left the queue

    def unsettled_usage(self) -> Usage:
        """What prefetched calls that have ended, but that no expansion used yet, cost.

        Metered has booked it; the search state counts it only when their expansion
        commits, so a run resumed from a checkpoint (which repeats those calls, from
        the memo for a durable run) counts each call once.
        """
        total = Usage()
        for task in self._prefetched.values():
            if not task.done() or task.cancelled():
                continue
            error = task.exception()
            if error is None:
                used = task.result().usage
                total = total + (used if used.calls else used + Usage(calls=1))
            elif not isinstance(error, BudgetExceeded):
                total = total + Usage(calls=1)  # a failed call counts as a call (Metered)
        return total

    # -- the expansion ------------------------------------------------------------------

    async def expand(
        self,
        node: Node,
        *,
        seed_offset: int | None = None,
        temperature: float | None = None,
        seed_shift: int = 0,
        independent: bool = False,
    ) -> Expansion:
        """Ask the proposer for `node`'s children (`samples` calls) and judge each once.

        By default expansion k of a node samples by the schedule (`sampling`): seeds
        `seed + (k-1) x samples + i` and the schedule's temperature for k. A strategy
        may fix either: `seed_offset` (consensus gives each candidate its own) or
        `temperature` (astar: `reexpand_temperature`, dfs: `duplicate_temperature`);
        `seed_shift` moves the scheduled seeds further (dfs, after a repeat-only try).
        An `independent` expansion (a consensus candidate) is a fresh sample, not a
        retry: its prompt does not list the node's earlier children.
        With `concurrency > 1` the calls (and then the judging) run concurrently; the
        tree is the same as the sequential run's.
        """
        self._repaired.clear()
        self._constrained.clear()
        requests = self._requests(node, seed_offset, temperature, seed_shift, independent)
        if self.options.concurrency > 1:
            ready = {(node.id, r.digest()) for _, r in requests} & self._prefetched.keys()
            self.reserve_expansion(len(requests) - len(ready))
        else:
            self.reserve_expansion(len(requests))  # none when nothing new is left
        self.state.expanding = node.id  # a pause or crash mid-expansion names it
        level = self.space.level(node.depth)
        attempt = node.expansions + 1
        self.trace.emit(
            "expansion",
            step=level,
            node=node.id,
            phase="start",
            depth=node.depth,
            attempt=attempt,
            feedback=len(node.feedback),
            seed=requests[0][0] if requests else None,
            temperature=requests[0][1].temperature if requests else None,
        )
        out = Expansion(node=node.id)
        # Closed-set entries of this expansion, kept only if it completes.
        staged: dict[str, str] = {}
        out.exhausted = not requests
        if self.options.concurrency > 1:
            await self._expand_concurrently(node, requests, out, staged, attempt=attempt)
        else:
            for seed, request in requests:
                completion = await self.metered.complete(request, step=level, node=node.id)
                out.calls += 1
                prevented = self._prevented(request, completion)
                for proposal in self.space.parse(node, completion.text):
                    child = await self._admit(
                        node, proposal, staged, seed=seed, attempt=attempt, prevented=prevented
                    )
                    if isinstance(child, Node):
                        out.children.append(child)
                    else:
                        out.duplicates.append(child)
        # Commit: an expansion cut short (budget, cancellation) leaves no trace in the
        # tree, so resuming repeats it whole instead of seeing its half as duplicates.
        self.state.closed.update(staged)
        for child in out.children:
            self.state.tree.add(child)
            self.state.touch(child)
        node.expansions += 1
        node.repeats += len(out.duplicates)
        if node.status == "open":
            node.status = "expanded"
        self.state.touch(node)
        self.state.expansions += 1
        self.count(
            outputs=len(out.children) + len(out.duplicates),
            repeats=len(out.duplicates),
            repairs=sum(1 for c in out.children if c.id in self._repaired),
            prevented=sum(1 for c in out.children if c.id in self._constrained),
        )
        self._repaired.clear()
        self._constrained.clear()
        self.state.expanding = None
        self.trace.emit(
            "expansion",
            step=level,
            node=node.id,
            phase="end",
            children=[c.id for c in out.children],
            viable=len(out.viable),
            dropped=len(out.duplicates),
            calls=out.calls,
            **({"exhausted": True} if out.exhausted else {}),
        )
        return out

    async def _expand_concurrently(
        self,
        node: Node,
        requests: list[tuple[int, ModelRequest]],
        out: Expansion,
        staged: dict[str, str],
        *,
        attempt: int,
    ) -> None:
        """The calls at once, then dedup in sample order, the judging at once, then the
        nodes in order: what the sequential loop builds, for the same answers.

        Every call and every verdict is awaited before an error is raised (the first in
        sample order), so nothing is left running and nothing is half committed.
        """
        level = self.space.level(node.depth)
        calls: list[Awaitable[Completion]] = []
        for _, request in requests:
            task = self._prefetched.pop((node.id, request.digest()), None)
            calls.append(task if task is not None else self._call(request, level, node.id))
        answers = await asyncio.gather(*calls, return_exceptions=True)
        completions: list[Completion] = []
        for answer in answers:
            if isinstance(answer, BaseException):
                raise answer
            completions.append(answer)
        out.calls += len(completions)
        new: list[tuple[int, Proposal, str, str]] = []  # seed, proposal, key, id
        for (seed, request), completion in zip(requests, completions, strict=True):
            prevented = self._prevented(request, completion)
            for proposal in self.space.parse(node, completion.text):
                key, ident, duplicate = self._stage(node, proposal, staged)
                if duplicate:
                    out.duplicates.append(ident)
                else:
                    if prevented:
                        self._constrained.add(ident)
                    new.append((seed, proposal, key, ident))
        verdicts = await asyncio.gather(
            *(self._gated_verdict(node, proposal, ident) for _, proposal, _, ident in new),
            return_exceptions=True,
        )
        judged: list[tuple[GuardResult, Proposal, str]] = []
        for outcome in verdicts:
            if isinstance(outcome, BaseException):
                raise outcome
            judged.append(outcome)
        for (seed, _, key, ident), (verdict, proposal, stage) in zip(new, judged, strict=True):
            out.children.append(
                self._build(node, proposal, key, ident, verdict, stage, seed=seed, attempt=attempt)
            )

    async def _gated_verdict(
        self, parent: Node, proposal: Proposal, ident: str
    ) -> tuple[GuardResult, Proposal, str]:
        async with self._gate:  # a judge that calls a model holds one slot per call
            return await self._verdict(parent, proposal, ident)

    async def _admit(
        self,
        parent: Node,
        proposal: Proposal,
        staged: dict[str, str],
        *,
        seed: int,
        attempt: int,
        prevented: bool = False,
    ) -> Node | str:
        """Dedup, pre-filter and evaluate one candidate; for a duplicate, the original's id."""
        key, ident, duplicate = self._stage(parent, proposal, staged)
        if duplicate:
            return ident
        if prevented:
            self._constrained.add(ident)
        verdict, proposal, stage = await self._verdict(parent, proposal, ident)
        return self._build(parent, proposal, key, ident, verdict, stage, seed=seed, attempt=attempt)

    def _stage(
        self, parent: Node, proposal: Proposal, staged: dict[str, str]
    ) -> tuple[str, str, bool]:
        """Dedup one candidate: (key, new node id, False), or (key, original's id, True)."""
        key = proposal.key or self.space.key(parent, proposal)
        original = self.state.closed.get(key) or staged.get(key)
        if original is not None:
            self.trace.emit(
                "candidate_dropped",
                step=self.space.level(parent.depth),
                node=parent.id,
                reason="duplicate",
                duplicate_of=original,
                text=proposal.text[:200],
            )
            return key, original, True
        ident = self.state.tree.new_id()
        staged[key] = ident
        return key, ident, False

    async def _verdict(
        self, parent: Node, proposal: Proposal, ident: str
    ) -> tuple[GuardResult, Proposal, str]:
        """Pre-filter and evaluate one new candidate, and try a guard's repair."""
        # Judged in the parent's own context: the objective is pinned, but the retry
        # feedback that shaped the proposal is not the judge's business.
        ctx = parent.context
        verdict, proposal, stage = await self._judge(parent, ctx, proposal)
        if not verdict.passed and verdict.patch and not verdict.fatal:
            repaired = await self._repair(parent, ctx, proposal, verdict, ident)
            if repaired is not None:
                proposal, verdict = repaired
                stage = "repaired"
                self._repaired.add(ident)
        return verdict, proposal, stage

    def _build(
        self,
        parent: Node,
        proposal: Proposal,
        key: str,
        ident: str,
        verdict: GuardResult,
        stage: str,
        *,
        seed: int,
        attempt: int,
    ) -> Node:
        """The judged candidate as a node (not yet in the tree: the commit adds it)."""
        level = self.space.level(parent.depth)
        child = Node(
            id=ident,
            parent=parent.id,
            depth=parent.depth + 1,
            state=proposal.state,
            key=key,
            context=parent.context,
            step=level,
            text=proposal.text,
            value=proposal.value,
            parse_error=proposal.parse_error,
            verdict=verdict,
            g=parent.g + 1.0,
            # What fails the cheap objective pre-filter is pruned outright (h = inf).
            h=INF if stage in ("unparseable", "prefilter") else _h(verdict),
            status="open" if verdict.passed else "failed",
            seed=seed,
            attempt=attempt,
        )
        if verdict.passed:
            child.context = self.summarize(
                self.space.child_context(parent, parent.context, proposal),
                self.options.path_token_cap,
            )
            if self.space.is_goal(child):
                child.status = "goal"
            elif self.space.is_terminal(child):
                dead = GuardResult.fail(
                    "dead end: a final state that is not a goal", "terminal", score=0.0
                )
                child.verdict, child.status, child.h = dead, "failed", INF
        if stage in ("unparseable", "prefilter"):
            self.trace.emit(
                "candidate_dropped",
                step=level,
                node=ident,
                reason=stage,
                feedback=verdict.feedback,
            )
        self.trace.emit(
            "guard_verdict",
            step=level,
            node=ident,
            parent=parent.id,
            stage=stage,
            guard=verdict.guard,
            passed=verdict.passed,
            score=verdict.score,
            fatal=verdict.fatal,
            feedback=verdict.feedback,
            h=None if math.isinf(child.h) else child.h,
            status=child.status,
            prevented=ident in self._constrained,
        )
        return child

    async def _judge(
        self, parent: Node, ctx: Context, proposal: Proposal
    ) -> tuple[GuardResult, Proposal, str]:
        if proposal.parse_error is not None:
            return (
                GuardResult.fail(proposal.parse_error, "parse", score=0.0),
                proposal,
                "unparseable",
            )
        pre = await self.space.prefilter(parent, proposal, ctx)
        if pre is not None and not pre.passed:
            return pre, proposal, "prefilter"
        return await self.space.evaluate(parent, proposal, ctx), proposal, "evaluate"

    async def _repair(
        self, parent: Node, ctx: Context, proposal: Proposal, verdict: GuardResult, ident: str
    ) -> tuple[Proposal, GuardResult] | None:
        """Apply the verdict's JSON Patch and judge again (a repaired value that fails with
        a fix of its own is repaired again, up to `MAX_REPAIRS`); kept only if it passes.
        Each application is a `patch_applied` event with the patch and the guard."""
        for _ in range(MAX_REPAIRS):
            if verdict.patch is None or verdict.fatal:
                return None
            try:
                value = apply_patch(proposal.value, verdict.patch)
            except ValueError as exc:
                self.trace.emit("note", node=ident, message=f"patch not applicable: {exc}")
                return None
            patched = self.space.patched(parent, proposal, value)
            again, patched, _ = await self._judge(parent, ctx, patched)
            self.trace.emit(
                "patch_applied",
                step=self.space.level(parent.depth),
                node=ident,
                passed=again.passed,
                patch=list(verdict.patch),
                guard=verdict.guard,
                fixed=verdict.feedback,
            )
            if again.passed:
                return patched, again
            proposal, verdict = patched, again
        return None


MAX_REPAIRS = 3  # a repaired value may carry a further fix; chains stop here
