"""Unit tests as a guard: run a model-written function on known inputs in the sandbox.

A `Case` is one test the domain wrote (never the model): a function, its arguments,
and a `check` of what came back (None: right; else what is wrong). `CodeGuard` parses
the module (guards/code.py), refuses what the AST allowlist forbids, then runs every
case in one sandboxed process (guards/sandbox.py). Its verdict names one of five kinds
of failure, `parse`, `forbidden`, `hang`, `crash`, `exception`, `wrong answer`, and its
feedback reads like a failing test: the call, what was expected, what came back.
The score is the fraction of cases passed (samples are ranked by it).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from guardsearch.core.artifact import Artifact
from guardsearch.core.context import Context
from guardsearch.core.guard_result import Check, GuardResult
from guardsearch.guards.code import CodeModule, allowlist_problems
from guardsearch.guards.sandbox import CallOutcome, Limits, Sandbox

Checker = Callable[[Any], "str | None"]
MAX_FAILURES_SHOWN = 2
EXAMPLES_SHOWN = 3  # right successors named in a failing test's `expected`


@dataclass(frozen=True)
class Case:
    """One test: `fn(*args)` must satisfy `check` (None = right, else the problem);
    `expected` says in words what a right answer is (for the feedback)."""

    fn: str
    args: tuple[Any, ...]
    check: Checker
    expected: str


def successors_case(
    state: Any,
    expected: set[Any],
    legal: Callable[[Any, Any], str | None],
    key: Callable[[Any], Any],
    show: Callable[[Any], str] | None = None,
) -> Case:
    """The generic successor test on a known `state`: soundness (every state returned is
    `legal` from it, by the domain's validator) and completeness (every state in
    `expected`, compared by `key`, is among them). The feedback shows states as Python
    code would write them (`show`, default `show_value`: `(1, Fraction(2, 3))`), and
    what is expected names a few right states."""

    def shown(value: Any) -> str:
        try:
            return (show or show_value)(value)
        except Exception:  # a value of a shape the domain cannot show
            return show_value(value)

    def check(result: Any) -> str | None:
        if not isinstance(result, list | tuple):
            return "it must return a list"
        produced = set()
        for child in result:
            why = legal(state, child)
            if why is not None:
                return f"{shown(child)} is not one move away ({why})"
            produced.add(key(child))
        missing = sorted(expected - produced)
        if not missing:
            return None
        return f"{len(missing)} successors are missing, e.g. {shown(missing[0])}"

    examples = ", ".join(shown(s) for s in sorted(expected)[:EXAMPLES_SHOWN])
    more = ", ..." if len(expected) > EXAMPLES_SHOWN else ""
    return Case(
        "successors",
        (state,),
        check,
        f"a list of all {len(expected)} states one move away: {examples}{more}",
    )


def values_case(
    fn: str,
    args: tuple[Any, ...],
    expected: set[Any],
    key: Callable[[Any], Any],
    show: Callable[[Any], str] | None = None,
) -> Case:
    """The generic test of a function that lists values: `fn(*args)` returns a list
    whose items, compared by `key`, are exactly `expected` (repeats allowed)."""
    shown = show or show_value

    def check(result: Any) -> str | None:
        if not isinstance(result, list | tuple):
            return "it must return a list"
        got = set()
        for value in result:
            try:
                got.add(key(value))
            except Exception as exc:  # not a value at all (None for "no result")
                return f"{shown(value)} should not be there ({exc})"
        extra, missing = sorted(got - expected), sorted(expected - got)
        if extra:
            return f"{shown(extra[0])} should not be there"
        return f"{shown(missing[0])} is missing" if missing else None

    listed = ", ".join(shown(v) for v in sorted(expected))
    return Case(fn, args, check, f"a list of exactly these {len(expected)} values: {listed}")


def goal_test_case(args: tuple[Any, ...], want: bool, why: str = "") -> Case:
    """The generic goal test: `is_goal(*args)` must return exactly `want` (a bool)."""

    def check(result: Any) -> str | None:
        if not isinstance(result, bool):
            return "it must return True or False"
        return None if result == want else "wrong"

    return Case("is_goal", args, check, f"{want} ({why})" if why else str(want))


ECHO_CHARS = 120


def show_call(fn: str, args: Sequence[Any]) -> str:
    return f"{fn}({', '.join(show_value(a) for a in args)})"


def show_value(value: Any, limit: int = 300) -> str:
    text = repr(_plain(value))
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _plain(value: Any) -> Any:
    """Fractions as the model writes them (Fraction(8, 3)), whole ones as ints."""
    from fractions import Fraction

    if isinstance(value, Fraction) and value.denominator == 1:
        return int(value)
    if isinstance(value, list):
        return [_plain(v) for v in value]
    if isinstance(value, tuple):
        return tuple(_plain(v) for v in value)
    return value


TUPLE_HINT = (
    " (a tuple or a string cannot be changed: build a new one, e.g. t[:-1] for all but "
    "the last item, and t + (x,) for a tuple or s + x for a string to add x)"
)


def _changes_a_tuple(error: str) -> bool:
    """The exception of code that changes a tuple or string in place (seen on the 1.5B:
    `.pop()` on a stack, 11 answers running)."""
    return ("'tuple' object" in error or "'str' object" in error) and (
        "has no attribute" in error or "does not support item" in error
    )


def case_failure(case: Case, outcome: CallOutcome) -> tuple[str, str] | None:
    """(kind, feedback) when `outcome` fails `case`, else None."""
    call = show_call(case.fn, case.args)
    if outcome.kind == "hang":
        return "hang", f"{call} did not finish: {outcome.error}; expected {case.expected}"
    if outcome.kind == "crash":
        return "crash", f"{call} crashed the process: {outcome.error}; expected {case.expected}"
    if outcome.kind == "bad_output":
        return "bad_output", f"{call} gave output the sandbox cannot read: {outcome.error}"
    if outcome.kind == "exception":
        hint = TUPLE_HINT if _changes_a_tuple(outcome.error or "") else ""
        return "exception", f"{call} raised {outcome.error}{hint}; expected {case.expected}"
    try:
        problem = case.check(outcome.value)
    except Exception as exc:  # a result of a shape the check did not foresee
        problem = f"the result could not be checked ({type(exc).__name__}: {exc})"
    if problem is None:
        return None
    # What came back is echoed short, so what is wrong with it comes early: a small
    # model reads the first lines of a long verdict.
    return (
        "wrong answer",
        f"{call} returned {show_value(outcome.value, ECHO_CHARS)}: {problem}; "
        f"expected {case.expected}",
    )


@dataclass
class CodeGuard:
    """Judges a `CodeModule` by the allowlist and by `cases` run in a sandbox."""

    cases: Sequence[Case]
    limits: Limits = field(default_factory=Limits)
    name: str = "code-tests"
    mutable: bool = False  # arguments as lists, copied per call (Sandbox's `mutable`)

    async def check(self, artifact: Artifact, context: Context) -> GuardResult:
        module = artifact.value
        if not isinstance(module, CodeModule):
            return GuardResult.fail("no code to test", "parse")
        return await run_cases(
            module.source, self.cases, self.limits, self.name, mutable=self.mutable
        )


async def run_cases(
    source: str,
    cases: Sequence[Case],
    limits: Limits,
    name: str = "code-tests",
    *,
    mutable: bool = False,
) -> GuardResult:
    """The verdict of `cases` on `source`: forbidden constructs first, then the tests."""
    problems = allowlist_problems(source, limits.allowed)
    if problems:
        return _verdict(name, "forbidden", "the code is not allowed: " + "; ".join(problems[:3]))
    async with Sandbox(source, limits, mutable=mutable) as box:
        if box.loaded.kind != "ok":
            return _verdict(name, box.loaded.kind, f"the module failed: {box.loaded.error}")
        outcomes = await box.call_many([(c.fn, c.args) for c in cases])
    verdicts = [case_failure(c, o) for c, o in zip(cases, outcomes, strict=True)]
    failures = [f for f in verdicts if f is not None]
    passed = len(cases) - len(failures)
    checks = tuple(Check(name=f"case{i}", passed=f is None) for i, f in enumerate(verdicts))
    if not failures:
        return GuardResult(passed=True, score=1.0, guard=name, checks=checks,
                           feedback=f"all {len(cases)} tests pass")  # fmt: skip
    kind = failures[0][0]
    shown = "; ".join(text for _, text in failures[:MAX_FAILURES_SHOWN])
    feedback = f"{kind}: {len(failures)} of {len(cases)} tests fail. {shown}"
    return GuardResult(
        passed=False,
        feedback=feedback,
        score=passed / len(cases) if cases else 0.0,
        guard=f"{name}:{kind}",
        checks=checks,
    )


def _verdict(name: str, kind: str, feedback: str) -> GuardResult:
    return GuardResult.fail(f"{kind}: {feedback}", f"{name}:{kind}")
