"""program: the model writes the search's code once, then code searches (docs/program.md).

Over a space that offers `program_domain()` (search/program.py), the strategy asks the
model for `is_goal` and `successors`, one function per request, each accepted only
when the domain's unit tests pass in the sandbox (independent samples, then retries
with the failing test as feedback). When a function's retries run out, the seed-000
backtrack policy applies: the round's failure summary amends the context's backtrack
channel and the function is written again from fresh samples, up to `backtracks`
times. The accepted code then runs by breadth-first, depth-first or A* search
(`search`; search/program_run.py), every successor checked by the domain's validator.
A fault found at search time (a rule broken, an exception) discards that function and
writes it again with the fault as feedback and as a new test, up to `rewrites` times.

Each accepted function, and each fault, is one step of the strategy: its code and the
faults live in `state.data`, so a durable run saves them at a checkpoint and a resumed
run neither asks for accepted code again nor repeats a search that found a fault.
Accepted code is also cached per domain version and model, so the next problem of the
same domain costs no model call. The solution path becomes the tree's path (one node
per step), so results, traces and the viewer read it like any search.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from guardsearch.core.digest import stable_digest
from guardsearch.core.errors import ConfigError
from guardsearch.core.guard_result import GuardResult
from guardsearch.guards.code_tests import Case
from guardsearch.guards.isolation import ensure_isolation
from guardsearch.guards.sandbox import Limits, decode, encode
from guardsearch.search.expand import Engine
from guardsearch.search.node import Node
from guardsearch.search.program import (
    FunctionSpec,
    ProgramCache,
    ProgramDomain,
    ProgramSpace,
    Written,
    backtrack_summary,
    write_function,
)
from guardsearch.search.program_run import SEARCH_ORDERS, ProgramRun, run_program
from guardsearch.search.state import Termination
from guardsearch.search.strategies.base import register_strategy

# Seeds of a function's rounds: a backtrack round and a rewrite after a fault each
# sample with fresh seeds (a round takes at most samples + retries of them).
_FAULT_SEEDS = 1000


# What a sandbox process may be given at most, from any caller (the HTTP service caps
# these lower still: server/solve.py).
SANDBOX_RANGES = (("cpu_seconds", 1, 600), ("memory_mb", 64, 8192), ("wall_seconds", 0.1, 600))


@dataclass(frozen=True, kw_only=True)
class ProgramOptions:
    """`samples` independent samples per function, then `retries` with feedback
    (`feedback=False`: a bare "try again"); `backtracks` more rounds of a function whose
    retries ran out, each with the last round's failure summary; `search` runs the code
    breadth-first (`bfs`), depth-first (`dfs`) or by A* (`astar`, with the domain's
    heuristic); `rewrites` after search-time faults; `cache` reads and writes accepted
    code (`cache_dir`, default GUARDSEARCH_HOME); `max_states` bounds the states the code
    generates; sandbox limits per process: `cpu_seconds`, `memory_mb`, `wall_seconds`
    per batch."""

    samples: int = 3
    retries: int = 3
    feedback: bool = False  # bare retry: accepted 13 of 15 runs vs 7 of 15 (docs/program.md)
    backtracks: int = 1
    search: str = "bfs"  # plain str: a durable run's JSON options may set it
    rewrites: int = 2
    cache: bool = True
    cache_dir: str | None = None
    max_states: int = 200_000
    cpu_seconds: int = 30
    memory_mb: int = 512
    wall_seconds: float = 30.0

    def __post_init__(self) -> None:
        if self.samples < 1 or self.retries < 0 or self.rewrites < 0 or self.backtracks < 0:
            raise ConfigError("samples must be >= 1; retries, backtracks and rewrites >= 0")
        if self.search not in SEARCH_ORDERS:
            raise ConfigError(
                f"search must be one of {', '.join(SEARCH_ORDERS)}, got {self.search!r}"
            )
        if self.max_states < 1:
            raise ConfigError(f"max_states must be >= 1, got {self.max_states}")
        for name, low, high in SANDBOX_RANGES:
            value = getattr(self, name)
            if not low <= value <= high:
                raise ConfigError(f"{name} must be between {low} and {high}, got {value}")

    def limits(self) -> Limits:
        return Limits(
            cpu_seconds=self.cpu_seconds,
            memory_mb=self.memory_mb,
            wall_seconds=self.wall_seconds,
        )


def _domain(engine: Engine) -> ProgramDomain:
    space = engine.space
    if not isinstance(space, ProgramSpace):
        raise ConfigError(
            f"strategy 'program' needs a space with program_domain(); "
            f"{type(space).__name__} has none"
        )
    return space.program_domain()


def _cache(options: ProgramOptions) -> ProgramCache:
    return ProgramCache(Path(options.cache_dir) if options.cache_dir else None)


class Program:
    """One step writes one function (with its backtracks) or runs one search."""

    name = "program"
    Options = ProgramOptions

    def start(self, engine: Engine, options: ProgramOptions) -> None:
        domain = _domain(engine)  # fail fast on a space that cannot be served
        if options.search == "astar" and domain.heuristic is None:
            raise ConfigError(f"search 'astar' needs a heuristic; {domain.name!r} has none")
        sources: dict[str, str] = {}
        spent: dict[str, int] = {}
        if options.cache:
            sources, spent = _cache(options).load(domain, engine.metered.inner.name)
        engine.state.data = {
            "sources": sources,
            "write_calls": 0,
            "faults": [],
            "cached": bool(sources),
            # rounds spent per function without a pass, this problem and earlier ones
            "spent": spent,
        }

    async def step(self, engine: Engine, options: ProgramOptions) -> Termination | None:
        domain = _domain(engine)
        # Before any model call: refused where the OS cannot confine the code it writes
        # (checked once per process, off the event loop: it starts a confined child).
        await asyncio.to_thread(ensure_isolation)
        data = engine.state.data
        sources: dict[str, str] = data["sources"]
        missing = [spec for spec in domain.functions if spec.name not in sources]
        if missing:
            written = await self._write(engine, options, domain, missing[0])
            if written.module is None:
                return "all_pruned"
            sources[missing[0].name] = written.module.source
            self._saved(engine, options, domain)
            return None
        run = await run_program(
            domain,
            sources,
            limits=options.limits(),
            max_states=options.max_states,
            order=options.search,
        )
        engine.state.expansions += run.expanded
        engine.trace.emit(
            "phase",
            action="program_search",
            search=options.search,
            expanded=run.expanded,
            generated=run.generated,
            levels=run.levels,
            found=run.path is not None,
            fault=run.fault.feedback if run.fault else None,
        )
        if run.fault is None:
            return self._finish(engine, domain, run)
        fault = run.fault
        data["faults"].append(
            {"fn": fault.fn, "feedback": fault.feedback, "state": encode(fault.state)}
        )
        sources.pop(fault.fn, None)
        for spec in domain.functions:  # what uses a function written again goes too
            if fault.fn in spec.uses:
                sources.pop(spec.name, None)
        self._saved(engine, options, domain)
        return "all_pruned" if len(data["faults"]) > options.rewrites else None

    async def _write(
        self, engine: Engine, options: ProgramOptions, domain: ProgramDomain, spec: FunctionSpec
    ) -> Written:
        """Write `spec` under its tests plus those of the faults found so far; when a
        round's retries run out, backtrack: a new round whose context carries the failure
        summary, up to `options.backtracks` times (and the budget)."""
        data = engine.state.data
        faults = [f for f in data["faults"] if f["fn"] == spec.name]
        extra: tuple[Case, ...] = ()
        for fault in faults:
            extra += domain.cases_for(spec.name, decode(fault["state"]))
        hints = [f"At search time: {f['feedback']}" for f in faults]
        spec = replace(spec, cases=spec.cases + extra)
        per_round = options.samples + options.retries
        seen: dict[str, Any] = {}
        failures: list[str] = []
        spent: dict[str, int] = data.setdefault("spent", {})
        earlier = spent.get(spec.name, 0)  # rounds that failed on earlier problems
        for level in range(options.backtracks + 1):
            written = await write_function(
                domain,
                spec,
                engine.metered,
                limits=options.limits(),
                samples=options.samples,
                retries=options.retries,
                feedback=options.feedback,
                seed=engine.options.seed
                + _FAULT_SEEDS * len(data["faults"])
                + per_round * (earlier + level),
                hints=hints,
                failures=failures,
                after_rounds=earlier,
                seen=seen,
                given={name: data["sources"][name] for name in spec.uses},
            )
            data["write_calls"] += written.calls
            engine.trace.emit(
                "phase",
                step=f"write_{spec.name}",
                action="program_written" if written.module else "program_rejected",
                calls=written.calls,
                round=level + 1,
                feedback=list(written.feedback[-3:]),
                source=written.module.source if written.module else None,
                # the best failing answer and its verdict (what a backtrack summarises)
                best=list(written.best) if written.module is None and written.best else None,
            )
            if written.module is not None:
                return written
            spent[spec.name] = earlier + level + 1
            if level == options.backtracks:
                self._saved(engine, options, domain)  # the next problem samples past them
                return written
            failures.append(backtrack_summary(spec, written, written.calls))
            engine.trace.emit(
                "backtrack",
                step=f"write_{spec.name}",
                to_step=f"write_{spec.name}",  # the same function, written again afresh
                reason="retries",
                rule=f"rmax exhausted at write_{spec.name}",
                feedback=written.best[1] if written.best else "",
                round=level + 2,
            )
        raise AssertionError("unreachable")  # the loop returns at its last round

    def _saved(self, engine: Engine, options: ProgramOptions, domain: ProgramDomain) -> None:
        """Keep the code as it now stands: in the file cache and at the next checkpoint."""
        if options.cache:
            data = engine.state.data
            _cache(options).save(
                domain, engine.metered.inner.name, data["sources"], data.get("spent", {})
            )
        engine.state.checkpoint_due = True

    def _finish(self, engine: Engine, domain: ProgramDomain, run: ProgramRun) -> Termination:
        if run.path is None:
            return "all_pruned"
        parent: Node = engine.tree.root
        steps = domain.describe(run.path)
        for depth, (state, text) in enumerate(steps, start=1):
            node = Node(
                id=engine.tree.new_id(),
                parent=parent.id,
                depth=depth,
                state=state,
                key=stable_digest([parent.key, state]),
                context=parent.context,
                step=engine.space.level(depth - 1),
                text=text,
                verdict=GuardResult.ok("program"),
                g=float(depth),
                status="goal" if depth == len(steps) else "expanded",
            )
            engine.tree.add(node)
            engine.state.touch(node)
            parent = node
        engine.state.touch(engine.tree.root)
        engine.state.goal = parent.id
        return "success"


def program_summary(data: dict[str, Any]) -> dict[str, Any]:
    """What a finished program search's `state.data` says: calls spent writing code,
    whether the code came from the cache, and the faults found at search time."""
    return {
        "write_calls": data.get("write_calls", 0),
        "cached": data.get("cached", False),
        "faults": list(data.get("faults", [])),
    }


register_strategy(Program())
