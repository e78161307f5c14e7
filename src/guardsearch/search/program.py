"""Search programs the model writes (Thought of Search / AutoToS; docs/program.md).

A space that offers `program_domain()` describes its problem as a `ProgramDomain`:
the rules in words, what a state is, the functions to write (`FunctionSpec`: a
signature, what it must do, and the domain's own unit tests), the root state, and a
validator (`legal`, `goal`) for search-time checks. Nothing here knows the domain.

- `write_function` asks for one function per request: `samples` independent samples
  filtered by the tests, then retries with the failing test as feedback (or a bare
  "try again" with `feedback=False`, to measure what feedback is worth).
- `run_program` runs the accepted functions by breadth-first search, each level one
  batch in the sandbox (one process per function for the whole search), checking every
  successor with the domain's validator: code that breaks a rule or raises stops the
  search with a `CodeFault` naming the state, which goes back to the writer as a new test.
- `ProgramCache` keeps accepted code per domain version and model under
  `GUARDSEARCH_HOME/programs`, so a second problem of a domain costs no model call.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from guardsearch.core.context import Context
from guardsearch.core.digest import stable_digest
from guardsearch.core.messages import CallInfo
from guardsearch.guards.code import CodeModule, parse_module
from guardsearch.guards.code_tests import Case, CodeGuard, show_call, show_value
from guardsearch.guards.sandbox import Limits, Sandbox
from guardsearch.models.metered import Metered
from guardsearch.paths import subdir
from guardsearch.prompts import PromptTemplate
from guardsearch.steps.step import Attempt, Step, attempt_step, call_after, output_key

BARE_RETRY = "The function failed the tests. Try again."


@dataclass(frozen=True, kw_only=True)
class FunctionSpec:
    """One function the model writes: its `signature` line, what it must do (`doc`),
    and the domain's tests for it (`cases`)."""

    name: str
    signature: str
    doc: str
    cases: tuple[Case, ...]


@dataclass(frozen=True, kw_only=True)
class ProgramDomain:
    """What a domain tells the program strategy; see the module docstring.

    `functions` must name `is_goal(state)` and `successors(state)`. `legal(parent,
    child)` and `goal(state)` are the domain's validator (None = fine, else why not);
    `key` makes states comparable for dedup; `describe(path)` turns the states of a
    solution path into (space state, text) per step after the root; `cases_for(fn,
    state)` builds the tests of `fn` on a state where the search found it at fault.
    `version` changes whenever the rules or tests do (it keys the code cache);
    `goal_args` follow the state in every `is_goal` call (e.g. the goal configuration).
    """

    name: str
    rules: str
    state: str
    functions: tuple[FunctionSpec, ...]
    root: Any
    legal: Callable[[Any, Any], str | None]
    goal: Callable[[Any], str | None]
    key: Callable[[Any], Hashable]
    describe: Callable[[Sequence[Any]], list[tuple[Any, str]]]
    cases_for: Callable[[str, Any], tuple[Case, ...]]
    version: str
    max_depth: int = 8
    goal_args: tuple[Any, ...] = ()

    def function(self, name: str) -> FunctionSpec:
        return next(f for f in self.functions if f.name == name)


def domain_version(rules: str, state: str, functions: Sequence[FunctionSpec]) -> str:
    """A digest of what defines a domain's code: rules, state, signatures, docs, tests."""
    return stable_digest(
        [
            rules,
            state,
            [
                (f.name, f.signature, f.doc, [(repr(c.args), c.expected) for c in f.cases])
                for f in functions
            ],
        ]
    )


@runtime_checkable
class ProgramSpace(Protocol):
    """A space the program strategy can serve: it describes its domain."""

    def program_domain(self) -> ProgramDomain: ...


# -- writing one function --------------------------------------------------------------


@dataclass(frozen=True)
class Written:
    """The outcome of writing one function: the accepted module (or None), the model
    calls it took, and the feedback of every failed attempt in order."""

    module: CodeModule | None
    calls: int
    feedback: tuple[str, ...]


PROGRAM_PROMPT = "program_function"


def function_step(
    domain: ProgramDomain, spec: FunctionSpec, limits: Limits, *, max_tokens: int = 700
) -> Step:
    """The guarded step that writes `spec`: parse one module, then run its tests."""
    return Step(
        name=f"write_{spec.name}",
        prompt=PromptTemplate.packaged(PROGRAM_PROMPT),
        guard=CodeGuard(spec.cases, limits, name=f"tests_{spec.name}"),
        parser=lambda text: parse_module(text, [spec.name]),
        max_tokens=max_tokens,
        schedule=[0.0, 0.7, 1.0],
        role="code",  # a model ladder may write code with its stronger model
    )


def _variables(domain: ProgramDomain, spec: FunctionSpec, limits: Limits) -> dict[str, Any]:
    return {
        "rules": domain.rules,
        "state": domain.state,
        "signature": spec.signature,
        "doc": spec.doc,
        "allowed": ", ".join(sorted(limits.allowed)),
    }


async def write_function(
    domain: ProgramDomain,
    spec: FunctionSpec,
    metered: Metered,
    *,
    limits: Limits,
    samples: int = 3,
    retries: int = 3,
    feedback: bool = True,
    seed: int = 0,
    hints: Sequence[str] = (),
) -> Written:
    """Ask for `spec` until its tests pass: `samples` independent samples, then up to
    `retries` retries that carry the best failing sample's feedback (or, without
    `feedback`, only "try again"). `hints` (faults found at search time) start the
    context's feedback channel. Budget errors propagate."""
    step = function_step(domain, spec, limits)
    base = Context(
        objective=f"Write the Python function {spec.name}() for a {domain.name} search program.",
        window=3,
    )
    for hint in hints:
        base = base.amend(feedback=hint)
    variables = _variables(domain, spec, limits)
    seen: dict[str, Attempt] = {}
    notes: list[str] = []
    best: Attempt | None = None
    calls = 0
    context = base
    call = CallInfo(role=step.role)
    for number in range(1, samples + retries + 1):
        independent = number <= samples
        outcome = await attempt_step(
            step,
            base if independent else context,
            metered,
            attempt=min(number, 3),
            seed=seed + number - 1,
            variables=variables,
            seen=seen,
            call=call,
        )
        calls += 1
        if outcome.result.passed and outcome.repeat_of is None:
            module = outcome.artifact.value
            assert isinstance(module, CodeModule)
            return Written(module, calls, tuple(notes))
        call = call_after(call, outcome)
        if outcome.repeat_of is None:
            seen[output_key(outcome.artifact)] = outcome
            notes.append(outcome.result.feedback)
            if best is None or (outcome.result.score or 0.0) > (best.result.score or 0.0):
                best = outcome
        if number >= samples and best is not None:
            said = best.result.feedback if feedback else BARE_RETRY
            context = base.amend(feedback=said, tried=(best.artifact.text, said))
    return Written(None, calls, tuple(notes))


# -- running the accepted code ---------------------------------------------------------


@dataclass(frozen=True)
class CodeFault:
    """Accepted code misbehaving at search time: which function, on which state, why."""

    fn: str
    state: Any
    feedback: str


@dataclass
class ProgramRun:
    """A search over generated code: the solution path of states (root first) when one
    was found, a `fault` when the code broke a rule, and the states expanded."""

    path: list[Any] | None = None
    fault: CodeFault | None = None
    expanded: int = 0
    generated: int = 0
    levels: int = 0
    notes: list[str] = field(default_factory=list)


async def run_program(
    domain: ProgramDomain,
    sources: dict[str, str],
    *,
    limits: Limits,
    max_states: int = 200_000,
) -> ProgramRun:
    """Breadth-first search with the generated `successors` and `is_goal`, one sandbox
    batch per level, every successor checked by the domain's validator."""
    run = ProgramRun()
    async with (
        Sandbox(sources["successors"], limits) as succ,
        Sandbox(sources["is_goal"], limits) as goal,
    ):
        for name, box in (("successors", succ), ("is_goal", goal)):
            if box.loaded.kind != "ok":
                run.fault = CodeFault(name, domain.root, f"the module failed: {box.loaded.error}")
                return run
        root_key = domain.key(domain.root)
        parents: dict[Hashable, tuple[Hashable | None, Any]] = {root_key: (None, domain.root)}
        frontier = [domain.root]
        extra = domain.goal_args
        [first] = await goal.call_many([("is_goal", (domain.root, *extra))])
        if first.kind == "ok" and first.value is True and domain.goal(domain.root) is None:
            run.path = [domain.root]
            return run
        for _depth in range(domain.max_depth):
            if not frontier or run.generated > max_states:
                break
            run.levels += 1
            outs = await succ.call_many([("successors", (s,)) for s in frontier])
            run.expanded += len(frontier)
            children: list[tuple[Any, Any]] = []
            for parent, out in zip(frontier, outs, strict=True):
                fault = _successor_fault(domain, parent, out)
                if fault is not None:
                    run.fault = fault
                    return run
                for child in out.value:
                    key = domain.key(child)
                    if key in parents:
                        continue
                    parents[key] = (domain.key(parent), child)
                    children.append((parent, child))
            run.generated += len(children)
            verdicts = await goal.call_many([("is_goal", (c, *extra)) for _, c in children])
            for (_, child), out in zip(children, verdicts, strict=True):
                if out.kind != "ok" or not isinstance(out.value, bool):
                    got = out.error if out.kind != "ok" else show_value(out.value)
                    run.fault = CodeFault(
                        "is_goal", child,
                        f"{show_call('is_goal', (child, *extra))} gave {out.kind} {got}; "
                        "expected True or False",
                    )  # fmt: skip
                    return run
                if out.value:
                    why = domain.goal(child)
                    if why is not None:
                        run.fault = CodeFault(
                            "is_goal", child,
                            f"{show_call('is_goal', (child, *extra))} returned True, "
                            f"but it is not a goal: {why}",
                        )  # fmt: skip
                        return run
                    run.path = _path(parents, domain.key(child))
                    return run
            frontier = [c for _, c in children]
    return run


def _successor_fault(domain: ProgramDomain, parent: Any, out: Any) -> CodeFault | None:
    call = show_call("successors", (parent,))
    if out.kind != "ok":
        return CodeFault("successors", parent, f"{call} gave {out.kind}: {out.error}")
    if not isinstance(out.value, list):
        return CodeFault(
            "successors", parent, f"{call} returned {show_value(out.value)}, not a list"
        )
    for child in out.value:
        why = domain.legal(parent, child)
        if why is not None:
            return CodeFault(
                "successors",
                parent,
                f"{call} produced {show_value(child)}, not a legal move: {why}",
            )
    return None


def _path(parents: dict[Hashable, tuple[Hashable | None, Any]], key: Hashable) -> list[Any]:
    out: list[Any] = []
    current: Hashable | None = key
    while current is not None:
        parent, state = parents[current]
        out.append(state)
        current = parent
    out.reverse()
    return out


# -- the cache of accepted code --------------------------------------------------------


@dataclass
class ProgramCache:
    """Accepted code by (domain, domain version, model, function), as JSON files in
    `folder` (default `GUARDSEARCH_HOME/programs`)."""

    folder: Path | None = None

    def _file(self, domain: ProgramDomain, model: str) -> Path:
        folder = self.folder if self.folder is not None else subdir("programs")
        folder.mkdir(parents=True, exist_ok=True)
        digest = stable_digest([domain.name, domain.version, model])[:16]
        return folder / f"{domain.name}-{digest}.json"

    def load(self, domain: ProgramDomain, model: str) -> dict[str, str]:
        path = self._file(domain, model)
        try:
            data = json.loads(path.read_text("utf-8"))
        except (OSError, ValueError):
            return {}
        sources = data.get("functions", {}) if isinstance(data, dict) else {}
        return {k: v for k, v in sources.items() if isinstance(v, str)}

    def save(self, domain: ProgramDomain, model: str, sources: dict[str, str]) -> Path:
        path = self._file(domain, model)
        record = {"domain": domain.name, "version": domain.version, "model": model,
                  "functions": sources}  # fmt: skip
        tmp = path.with_suffix(".tmp")
        tmp.write_text(json.dumps(record, indent=1), "utf-8")
        tmp.replace(path)
        return path
