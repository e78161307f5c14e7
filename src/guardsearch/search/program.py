"""Search programs the model writes (Thought of Search / AutoToS; docs/program.md).

A space that offers `program_domain()` describes its problem as a `ProgramDomain`:
the rules in words, what a state is, the functions to write (`FunctionSpec`: a
signature, what it must do, and the domain's own unit tests), the root state, and a
validator (`legal`, `goal`) for search-time checks. Nothing here knows the domain.

- `write_function` asks for one function per request: `samples` independent samples
  filtered by the tests, then retries with the failing test as feedback (or a bare
  "try again" with `feedback=False`, to measure what feedback is worth).
- `search/program_run.py` runs the accepted functions (breadth-first, depth-first or
  A*), checking every successor with the domain's validator.
- `ProgramCache` keeps accepted code per domain version and model under
  `GUARDSEARCH_HOME/programs`, so a second problem of a domain costs no model call.
"""

from __future__ import annotations

import ast
import json
from collections.abc import Callable, Hashable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from guardsearch.core.context import Context
from guardsearch.core.digest import stable_digest
from guardsearch.core.errors import ConfigError
from guardsearch.core.messages import CallInfo
from guardsearch.guards.code import CodeModule, allowlist_problems, parse_module
from guardsearch.guards.code_tests import Case, CodeGuard
from guardsearch.guards.sandbox import Limits
from guardsearch.models.metered import Metered
from guardsearch.paths import subdir
from guardsearch.prompts import PromptTemplate
from guardsearch.search.summary import failure_summary
from guardsearch.steps.step import Attempt, Step, attempt_step, call_after, output_key

BARE_RETRY = "The function failed the tests. Try again."


@dataclass(frozen=True, kw_only=True)
class FunctionSpec:
    """One function the model writes: its `signature` line, what it must do (`doc`),
    and the domain's tests for it (`cases`). `uses` names functions of the domain
    written (and accepted) before this one that it may call: the prompt shows their
    signatures and docs, and their accepted code goes with this function's code into
    its tests and its search (a decomposition: two small functions instead of one)."""

    name: str
    signature: str
    doc: str
    cases: tuple[Case, ...]
    uses: tuple[str, ...] = ()


@dataclass(frozen=True, kw_only=True)
class ProgramDomain:
    """What a domain tells the program strategy; see the module docstring.

    `functions` must name `is_goal(state)` and `successors(state)`, after any function
    they use (`FunctionSpec.uses`), in the order they are written. `legal(parent,
    child)` and `goal(state)` are the domain's validator (None = fine, else why not);
    `key` makes states comparable for dedup; `describe(path)` turns the states of a
    solution path into (space state, text) per step after the root; `cases_for(fn,
    state)` builds the tests of `fn` on a state where the search found it at fault.
    `version` changes whenever the rules or tests do (it keys the code cache);
    `goal_args` follow the state in every `is_goal` call (e.g. the goal configuration).
    `heuristic(state)` estimates the steps left for A* from the state alone (numbers
    left, blocks out of place), never from a solver. `mutable_state`: the code gets
    states as lists, a copy per call, and may change them in place (guards/sandbox.py).
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
    heuristic: Callable[[Any], float] | None = None
    mutable_state: bool = False

    def function(self, name: str) -> FunctionSpec:
        return next(f for f in self.functions if f.name == name)


def domain_version(rules: str, state: str, functions: Sequence[FunctionSpec]) -> str:
    """A digest of what defines a domain's code: rules, state, signatures, docs, tests."""
    return stable_digest(
        [
            rules,
            state,
            [
                (
                    f.name,
                    f.signature,
                    f.doc,
                    [(repr(c.args), c.expected) for c in f.cases],
                    list(f.uses),
                )
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
    calls it took, the feedback of every failed attempt in order, and the best failing
    attempt as (code, verdict) for a backtrack's summary."""

    module: CodeModule | None
    calls: int
    feedback: tuple[str, ...]
    best: tuple[str, str] | None = None


PROGRAM_PROMPT = "program_function"


def with_given(module: CodeModule, given: Mapping[str, str]) -> CodeModule:
    """`module` after the accepted code of the functions it may call (`given`, name ->
    source): one module that runs alone. The accepted code is what runs: a definition
    of a given function in the answer is dropped (the tests judged the given one, and
    the answer's copy would otherwise replace it unseen)."""
    if not given:
        return module
    tree = ast.parse(module.source)
    tree.body = [
        node
        for node in tree.body
        if not (isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.name in given)
    ]
    own = [name for name in module.functions if name not in given]
    source = "\n\n".join([*given.values(), ast.unparse(tree)])
    return CodeModule(source=source, functions=tuple(dict.fromkeys([*given, *own])))


def function_step(
    domain: ProgramDomain,
    spec: FunctionSpec,
    limits: Limits,
    *,
    max_tokens: int = 700,
    given: Mapping[str, str] | None = None,
) -> Step:
    """The guarded step that writes `spec`: parse one module (joined to the accepted
    code of the functions it uses, `given`), then run its tests."""
    before = dict(given or {})
    return Step(
        name=f"write_{spec.name}",
        prompt=PromptTemplate.packaged(PROGRAM_PROMPT),
        guard=CodeGuard(
            spec.cases, limits, name=f"tests_{spec.name}", mutable=domain.mutable_state
        ),
        parser=lambda text: with_given(parse_module(text, [spec.name]), before),
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
        "uses": [(u.signature, u.doc) for u in (domain.function(n) for n in spec.uses)],
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
    failures: Sequence[str] = (),
    after_rounds: int = 0,
    seen: dict[str, Attempt] | None = None,
    given: Mapping[str, str] | None = None,
) -> Written:
    """Ask for `spec` until its tests pass: `samples` independent samples, then up to
    `retries` retries that carry the best failing sample's feedback (or, without
    `feedback`, only "try again"). `hints` (faults found at search time) start the
    context's feedback channel; `failures` (summaries of earlier rounds that ran out of
    retries: a backtrack) its backtrack channel; `after_rounds` counts the rounds spent on
    `spec` without a pass on earlier problems. `seen` holds the outputs already judged
    (shared across rounds: a repeat is not judged again). `given` holds the accepted
    code of the functions `spec` uses (name -> source). Budget errors propagate."""
    missing = [name for name in spec.uses if name not in (given or {})]
    if missing:
        raise ConfigError(f"{spec.name}() uses {', '.join(missing)}, which is not written yet")
    step = function_step(domain, spec, limits, given={n: (given or {})[n] for n in spec.uses})
    base = Context(
        objective=f"Write the Python function {spec.name}() for a {domain.name} search program.",
        window=3,
    )
    for hint in hints:
        base = base.amend(feedback=hint)
    for failure in failures:
        base = base.amend(failure=failure)
    variables = _variables(domain, spec, limits)
    seen = {} if seen is None else seen
    notes: list[str] = []
    best: Attempt | None = None
    calls = 0
    context = base
    call = CallInfo(role=step.role)
    # A later round (a backtrack: `failures`; or `after_rounds` spent on earlier
    # problems) starts its schedule past the greedy answer: at temperature 0 the first
    # sample of a new round came back the same as the last round's first (a repeat, a
    # call for nothing), seen on the 1.5B.
    skip = 1 if failures or after_rounds else 0
    for number in range(1, samples + retries + 1):
        independent = number <= samples
        outcome = await attempt_step(
            step,
            base if independent else context,
            metered,
            attempt=min(number + skip, 3),
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
    shown = None
    if best is not None:
        shown = (best.artifact.text, best.result.feedback if feedback else BARE_RETRY)
    return Written(None, calls, tuple(notes), shown)


def backtrack_summary(spec: FunctionSpec, written: Written, attempts: int) -> str:
    """What a new round of writing `spec` reads in its backtrack channel when the last
    round ran out of retries: the seed-000 failure summary (search/summary.py) of the
    best failing attempt, its verdict and its code."""
    code, verdict = written.best or ("", "no answer could be judged")
    return failure_summary(
        f"write_{spec.name}",
        verdict,
        [(f"write_{spec.name}", code)] if code else [],
        advice=f"all {attempts} attempts of the last round failed the tests; "
        f"write {spec.name}() again from the rules, differently",
    )


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

    def load(self, domain: ProgramDomain, model: str) -> tuple[dict[str, str], dict[str, int]]:
        """The accepted code (name -> source), and the rounds spent per function without
        a pass on earlier problems (the next problem's round samples past them: fresh
        seeds, not greedy again); both empty when nothing is cached."""
        try:
            data = json.loads(self._file(domain, model).read_text("utf-8"))
        except (OSError, ValueError):
            return {}, {}
        if not isinstance(data, dict):
            return {}, {}
        sources, spent = data.get("functions", {}), data.get("spent", {})
        if not isinstance(sources, dict) or not isinstance(spent, dict):
            return {}, {}
        # A cache file is no test verdict: code that the allowlist refuses is dropped
        # (and written again); run_program vets what runs once more.
        return (
            {k: v for k, v in sources.items() if isinstance(v, str) and not allowlist_problems(v)},
            {k: v for k, v in spent.items() if isinstance(v, int) and v >= 0},
        )

    def save(
        self,
        domain: ProgramDomain,
        model: str,
        sources: dict[str, str],
        spent: dict[str, int] | None = None,
    ) -> Path:
        path = self._file(domain, model)
        record = {"domain": domain.name, "version": domain.version, "model": model,
                  "functions": sources, "spent": spent or {}}  # fmt: skip
        tmp = path.with_suffix(".tmp")
        tmp.write_text(json.dumps(record, indent=1), "utf-8")
        tmp.replace(path)
        return path
