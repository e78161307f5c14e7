"""program: the model writes the search's code once, then code searches (docs/program.md).

Over a space that offers `program_domain()` (search/program.py), the strategy asks the
model for `is_goal` and `successors`, one function per request, each accepted only
when the domain's unit tests pass in the sandbox (independent samples, then retries
with the failing test as feedback). It then runs the accepted code by breadth-first
search, each level one sandbox batch, every successor checked by the domain's
validator. A fault found at search time (a rule broken, an exception) discards that
function and writes it again with the fault as feedback and as a new test, up to
`rewrites` times. Accepted code is cached per domain version and model, so the next
problem of the same domain costs no model call. The solution path becomes the tree's
path (one node per step), so results, traces and the viewer read it like any search.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from guardsearch.core.digest import stable_digest
from guardsearch.core.errors import ConfigError
from guardsearch.core.guard_result import GuardResult
from guardsearch.guards.code_tests import Case
from guardsearch.guards.sandbox import Limits
from guardsearch.search.expand import Engine
from guardsearch.search.node import Node
from guardsearch.search.program import (
    ProgramCache,
    ProgramDomain,
    ProgramRun,
    ProgramSpace,
    run_program,
    write_function,
)
from guardsearch.search.state import Termination
from guardsearch.search.strategies.base import register_strategy


@dataclass(frozen=True, kw_only=True)
class ProgramOptions:
    """`samples` independent samples per function, then `retries` with feedback
    (`feedback=False`: a bare "try again"); `rewrites` after search-time faults;
    `cache` reads and writes accepted code (`cache_dir`, default GUARDSEARCH_HOME);
    sandbox limits per process: `cpu_seconds`, `memory_mb`, `wall_seconds` per batch."""

    samples: int = 3
    retries: int = 3
    feedback: bool = True
    rewrites: int = 2
    cache: bool = True
    cache_dir: str | None = None
    max_states: int = 200_000
    cpu_seconds: int = 30
    memory_mb: int = 512
    wall_seconds: float = 30.0

    def __post_init__(self) -> None:
        if self.samples < 1 or self.retries < 0 or self.rewrites < 0:
            raise ConfigError("samples must be >= 1, retries and rewrites >= 0")

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


class Program:
    name = "program"
    Options = ProgramOptions

    def start(self, engine: Engine, options: ProgramOptions) -> None:
        _domain(engine)  # fail fast on a space that cannot be served
        engine.state.data = {"sources": {}, "write_calls": 0, "faults": [], "cached": False}

    async def step(self, engine: Engine, options: ProgramOptions) -> Termination | None:
        domain = _domain(engine)
        data = engine.state.data
        model = engine.metered.inner.name
        cache = ProgramCache(Path(options.cache_dir) if options.cache_dir else None)
        sources: dict[str, str] = dict(data["sources"])
        if not sources and options.cache:
            sources = cache.load(domain, model)
            data["cached"] = bool(sources)
        hints: dict[str, list[str]] = {}
        extra: dict[str, tuple[Case, ...]] = {}
        for round_ in range(options.rewrites + 1):
            for spec in domain.functions:
                if spec.name in sources:
                    continue
                written = await write_function(
                    domain,
                    replace(spec, cases=spec.cases + extra.get(spec.name, ())),
                    engine.metered,
                    limits=options.limits(),
                    samples=options.samples,
                    retries=options.retries,
                    feedback=options.feedback,
                    seed=engine.options.seed + 1000 * round_,
                    hints=hints.get(spec.name, ()),
                )
                data["write_calls"] += written.calls
                engine.trace.emit(
                    "phase",
                    step=f"write_{spec.name}",
                    action="program_written" if written.module else "program_rejected",
                    calls=written.calls,
                    feedback=list(written.feedback[-3:]),
                )
                if written.module is None:
                    return "all_pruned"
                sources[spec.name] = written.module.source
                data["sources"] = dict(sources)
                if options.cache:
                    cache.save(domain, model, sources)
            run = await run_program(
                domain, sources, limits=options.limits(), max_states=options.max_states
            )
            engine.state.expansions += run.expanded
            engine.trace.emit(
                "phase",
                action="program_search",
                expanded=run.expanded,
                generated=run.generated,
                levels=run.levels,
                found=run.path is not None,
                fault=run.fault.feedback if run.fault else None,
            )
            if run.fault is None:
                return self._finish(engine, domain, run)
            fault = run.fault
            data["faults"].append({"fn": fault.fn, "feedback": fault.feedback})
            sources.pop(fault.fn, None)
            data["sources"] = dict(sources)
            if options.cache:
                cache.save(domain, model, sources)
            hints.setdefault(fault.fn, []).append(f"At search time: {fault.feedback}")
            extra[fault.fn] = extra.get(fault.fn, ()) + domain.cases_for(fault.fn, fault.state)
        return "all_pruned"

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
