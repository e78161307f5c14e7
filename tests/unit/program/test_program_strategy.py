"""The `program` strategy on scripted models: code written under the domain's tests,
search-time faults sent back, the cache, bare retries, and the CLI."""

from __future__ import annotations

import json
from fractions import Fraction
from pathlib import Path

import pytest
from typer.testing import CliRunner

from guardsearch import ScriptedModel
from guardsearch.apps.game24 import check_answer, parse_numbers, solve_game24
from guardsearch.apps.game24.program import game24_domain, legal, successors, training_states
from guardsearch.cli import app
from guardsearch.core.errors import ConfigError
from guardsearch.guards.code_tests import run_cases
from guardsearch.guards.sandbox import Limits
from guardsearch.models.metered import Metered
from guardsearch.search.program import BARE_RETRY, write_function

GOAL = "def is_goal(state):\n    return len(state) == 1 and state[0] == 24\n"
COMBINE = """
def combine(a, b):
    out = [a + b, a - b, b - a, a * b]
    if b != 0:
        out.append(a / b)
    if a != 0:
        out.append(b / a)
    return out
"""
SUCC = """
def successors(state):
    out = []
    n = len(state)
    for i in range(n):
        for j in range(i + 1, n):
            a, b = state[i], state[j]
            rest = [state[k] for k in range(n) if k not in (i, j)]
            vals = [a + b, a - b, b - a, a * b]
            if b != 0:
                vals.append(a / b)
            if a != 0:
                vals.append(b / a)
            out.extend(tuple(rest + [v]) for v in vals)
    return out
"""
NO_ZERO_CHECK = SUCC.replace("if b != 0:\n                ", "").replace(
    "if a != 0:\n                ", ""
)
# Passes every test (they come from the training rows; 4 5 6 10 is row 900, the first
# evaluation row), but breaks the rules on that puzzle: what only the search-time check
# can catch.
CHEATS_ON_ROOT = SUCC.replace(
    "    return out",
    "    return [s + (1,) for s in out] if sorted(state) == [4, 5, 6, 10] else out",
)


def fenced(code: str) -> str:
    return f"```python\n{code}```"


@pytest.fixture(autouse=True)
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("GUARDSEARCH_HOME", str(tmp_path))
    return tmp_path


async def test_the_domain_tests_accept_right_code_and_catch_division_by_zero() -> None:
    domain = game24_domain(parse_numbers("4 5 6 10"))
    limits = Limits()
    assert (await run_cases(GOAL, domain.function("is_goal").cases, limits)).passed
    assert (await run_cases(SUCC, domain.function("successors").cases, limits)).passed
    bad = await run_cases(NO_ZERO_CHECK, domain.function("successors").cases, limits)
    assert "ZeroDivisionError" in bad.feedback and "successors((0, 4, 6))" in bad.feedback
    assert any(0 in s for s in training_states())  # the test that catches it is there


async def test_independent_samples_then_a_solution_and_a_free_second_puzzle() -> None:
    model = ScriptedModel([fenced(GOAL), fenced(COMBINE), fenced(NO_ZERO_CHECK), fenced(SUCC)])
    first = await solve_game24("4 5 6 10", strategy="program", model=model)
    assert first["succeeded"] and first["calls"] == 4
    assert check_answer(parse_numbers("4 5 6 10"), first["answer"]) is None
    again = await solve_game24("1 1 4 6", strategy="program", model=model)
    assert again["succeeded"] and again["calls"] == 0


async def test_a_search_time_fault_sends_the_function_back_with_the_state() -> None:
    model = ScriptedModel([fenced(GOAL), fenced(COMBINE), fenced(CHEATS_ON_ROOT), fenced(SUCC)])
    result = await solve_game24("4 5 6 10", strategy="program", model=model)
    assert result["succeeded"] and result["calls"] == 4
    rewrite = model.requests[3].messages[0].content
    assert "At search time" in rewrite and "not a legal move" in rewrite


async def test_feedback_off_retries_say_only_try_again() -> None:
    wrong = "def is_goal(state):\n    return True\n"
    model = ScriptedModel(
        [fenced(wrong), fenced(wrong), fenced(GOAL), fenced(COMBINE), fenced(SUCC)]
    )
    result = await solve_game24(
        "4 5 6 10", strategy="program", model=model, samples=1, feedback=False
    )
    assert result["succeeded"]
    retry = "\n".join(m.content for m in model.requests[1].messages)
    assert BARE_RETRY in retry and "is_goal((23,))" not in retry
    with_feedback = ScriptedModel([fenced(wrong), fenced(GOAL), fenced(COMBINE), fenced(SUCC)])
    await solve_game24("4 5 6 10", strategy="program", model=with_feedback, samples=1,
                       cache=False, feedback=True)  # fmt: skip
    said = "\n".join(m.content for m in with_feedback.requests[1].messages)
    assert "is_goal((23,)) returned True" in said


async def test_code_that_never_passes_ends_the_search_all_pruned() -> None:
    model = ScriptedModel([fenced("def is_goal(state):\n    return 1 / 0\n")], repeat_last=True)
    result = await solve_game24(
        "4 5 6 10", strategy="program", model=model, samples=2, retries=1, backtracks=0,
        cache=False,
    )  # fmt: skip
    assert not result["succeeded"] and result["termination"] == "all_pruned"
    assert result["calls"] == 3


def test_the_validator_knows_every_legal_step() -> None:
    states = successors((Fraction(4), Fraction(6)))
    assert (Fraction(24),) in states and (Fraction(2, 3),) in states and len(states) == 6


def test_cli_solves_with_the_program_strategy(tmp_path: Path) -> None:
    answers = tmp_path / "answers.json"
    answers.write_text(json.dumps([fenced(GOAL), fenced(COMBINE), fenced(SUCC)]))
    spec = f"scripted:{answers}"
    runner = CliRunner()
    args = ["solve", "game24", "4 5 6 10", "--strategy", "program", "--model", spec, "--json"]
    result = runner.invoke(app, args)
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["calls"] == 3
    result = runner.invoke(app, ["solve", "game24", "3 3 8 8", "--strategy", "program",
                                 "--model", spec, "--json"])  # fmt: skip
    payload = json.loads(result.stdout)
    assert payload["succeeded"] and payload["calls"] == 0


async def test_a_failing_successor_test_names_right_states_as_python_writes_them() -> None:
    # Seen on the 1.5B: "expected a list of all 17 states" gave nothing to aim at, and the
    # wrong state came back as [Fraction(2, 1), ...] beside a call written with ints.
    slices = SUCC.replace(
        "rest = [state[k] for k in range(n) if k not in (i, j)]",
        "rest = list(state[:i] + state[j + 1:])",
    )
    domain = game24_domain(parse_numbers("4 5 6 10"))
    bad = await run_cases(slices, domain.function("successors").cases, Limits())
    assert "successors((1, 1, 4, 6)) returned" in bad.feedback
    assert "[6, 5] is not one move away" in bad.feedback
    assert "expected a list of all 17 states one move away: (-5, 1, 4), (-3, 1, 6)" in bad.feedback
    fraction = await run_cases(SUCC.replace("a / b", "a * b"), domain.function("successors").cases,
                               Limits())  # fmt: skip
    assert "successors are missing, e.g. (Fraction(1, 6), 1, 4)" in fraction.feedback


CALLS_COMBINE = """
def successors(state):
    out = []
    for i in range(len(state)):
        for j in range(i + 1, len(state)):
            rest = tuple(v for k, v in enumerate(state) if k not in (i, j))
            out.extend(rest + (r,) for r in combine(state[i], state[j]))
    return out
"""


async def test_successors_is_written_over_the_accepted_combine() -> None:
    # The decomposition: combine(a, b) first, under its own tests; then successors,
    # whose prompt shows combine as written and whose tests run with its accepted code.
    no_zero_check = "def combine(a, b):\n    return [a + b, a - b, b - a, a * b, a / b, b / a]\n"
    model = ScriptedModel(
        [fenced(GOAL), fenced(no_zero_check), fenced(COMBINE), fenced(CALLS_COMBINE)]
    )
    result = await solve_game24(
        "4 5 6 10", strategy="program", model=model, cache=False, samples=1, feedback=True
    )
    assert result["succeeded"] and result["calls"] == 4
    assert check_answer(parse_numbers("4 5 6 10"), result["answer"]) is None
    combine_prompt = "\n".join(m.content for m in model.requests[2].messages)
    assert "combine(0, 4) raised ZeroDivisionError" in combine_prompt
    succ_prompt = model.requests[3].messages[-1].content
    assert "already written; call it, do not write it again" in succ_prompt
    assert "def combine(a, b):" in succ_prompt and "def successors(state):" in succ_prompt


async def test_a_combine_that_lists_none_for_no_result_is_told_so_plainly() -> None:
    # Seen on the 1.5B: [a + b, ..., a / b if b != 0 else None] came back as "the result
    # could not be checked (StepError: None is not a number)".
    nones = (
        "def combine(a, b):\n"
        "    return [a + b, a - b, b - a, a * b, a / b if b else None, b / a if a else None]\n"
    )
    domain = game24_domain(parse_numbers("4 5 6 10"))
    bad = await run_cases(nones, domain.function("combine").cases, Limits())
    assert "combine(0, 4) returned [4, -4, 4, 0, 0, None]: None should not be there" in bad.feedback
    assert "could not be checked" not in bad.feedback


async def test_a_state_of_the_wrong_length_is_told_its_length_before_its_items() -> None:
    # Seen on the 1.5B: [2, None, 4, 6] (the pair replaced in place) was told "None is
    # not a number", not that a step leaves three numbers.
    why = legal((1, 1, 4, 6), (2, None, 4, 6))
    assert why is not None and why.startswith("a step leaves 3 numbers, this has 4")
    # ... and says what a step does, worked on the state at hand.
    assert "from (1, 1, 4, 6) the step 1 + 1 gives (4, 6, 2)" in why
    assert legal((1, 1, 4, 6), (2, None, 4)) == "None is not a number"


async def test_a_function_cannot_be_written_before_what_it_uses() -> None:
    domain = game24_domain(parse_numbers("4 5 6 10"))
    with pytest.raises(ConfigError, match="uses combine"):
        await write_function(
            domain, domain.function("successors"), Metered(ScriptedModel([])), limits=Limits()
        )


def test_the_accepted_code_of_a_used_function_is_what_runs() -> None:
    # Seen on the 1.5B: the accepted successors module defined its own combine after the
    # accepted one, so code the tests never judged replaced it. The answer's copy is dropped.
    from guardsearch.guards.code import parse_module
    from guardsearch.search.program import with_given

    redefines = "def combine(a, b):\n    return [a + b, None]\n" + CALLS_COMBINE
    module = with_given(parse_module(redefines, ["successors"]), {"combine": COMBINE.strip()})
    assert module.source.count("def combine(") == 1
    assert "None" not in module.source
    assert module.functions == ("combine", "successors")


async def test_an_answer_cut_off_at_max_tokens_is_told_so() -> None:
    # Seen on the 1.5B: a long answer stopped at max_tokens came back as "does not
    # parse", which gives the model nothing to change; the verdict now says it was cut.
    from guardsearch.core.context import Context
    from guardsearch.search.program import _variables, function_step
    from guardsearch.steps.step import attempt_step

    domain = game24_domain(parse_numbers("4 5 6 10"))
    step = function_step(domain, domain.function("is_goal"), Limits(), max_tokens=6)
    long = (
        "def is_goal(state):\n    if len(state) != 1:\n        return False\n"
        "    return state[0] == 24\n"
    )
    metered = Metered(ScriptedModel([fenced(long)]))
    spec = domain.function("is_goal")
    outcome = await attempt_step(
        step,
        Context(objective="write is_goal"),
        metered,
        attempt=1,
        variables=_variables(domain, spec, Limits()),
    )
    assert not outcome.result.passed
    assert "cut off at its limit of 6 tokens" in outcome.result.feedback


def test_the_default_retry_is_the_one_the_seed_sweeps_measured_better() -> None:
    """docs/program.md: a bare retry accepted 13 of 15 runs, test feedback 7 of 15."""
    from guardsearch.search.strategies.program import ProgramOptions

    assert ProgramOptions().feedback is False
    page = (Path(__file__).resolve().parents[3] / "docs" / "program.md").read_text("utf-8")
    assert "13 of 15 runs against 7 of 15" in " ".join(page.split())
