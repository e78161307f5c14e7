"""The Game of 24 as a registered app: durable runs, POST /solve and `bench` find it by name."""

from __future__ import annotations

from typing import Any

from guardsearch.apps.game24.arith import check_answer
from guardsearch.apps.game24.solve import DEFAULT_STRATEGY, default_options, puzzle_numbers
from guardsearch.apps.game24.space import Game24Space
from guardsearch.core.errors import ConfigError
from guardsearch.registry import App, AppSetup, register


def build(problem: dict[str, Any], strategy: str) -> AppSetup:
    """`{"numbers": "4 5 6 10", "value": false, "constrained": true}` as a space."""
    numbers = problem.get("numbers")
    if not isinstance(numbers, str):
        raise ConfigError('game24 needs {"numbers": "4 5 6 10"}')
    values = puzzle_numbers(numbers)
    space = Game24Space(
        numbers=values,
        value=bool(problem.get("value", False)),
        constrained=bool(problem.get("constrained", True)),
    )
    # As in solve_game24: dfs tries siblings first, consensus samples (temperature > 0).
    return AppSetup(space=space, options=default_options(strategy))


def parse(text: str) -> dict[str, Any]:
    """The numbers as a person types them ("4 5 6 10"), checked."""
    puzzle_numbers(text)
    return {"numbers": text}


def check(problem: dict[str, Any], answer: Any) -> str | None:
    """Does `answer` use each number once and make 24 (arith.check_answer)?"""
    return check_answer(puzzle_numbers(str(problem["numbers"])), str(answer))


def _suite() -> object:
    from guardsearch.apps.game24.suite import suite

    return suite


APP = register(
    App(
        name="game24",
        build=build,
        summary="Game of 24: combine four numbers with + - * / to reach 24",
        strategy=DEFAULT_STRATEGY,
        example={"numbers": "4 5 6 10"},
        suite=_suite,
        command='guardsearch solve game24 "4 5 6 10"',
        parse=parse,
        check=check,
        show=lambda answer: f"{answer} = 24",
        flags=("value",),
    )
)
