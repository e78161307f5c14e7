"""solve_game24: the Game of 24 from the Python API (the CLI's `solve game24` wraps it)."""

from __future__ import annotations

import csv
import io
from dataclasses import dataclass
from fractions import Fraction
from importlib import resources
from typing import Any

from guardsearch.apps.game24.arith import StepError, parse_numbers
from guardsearch.apps.solve import load_model, solution, solve_app
from guardsearch.core.budget import BudgetLike
from guardsearch.core.errors import ConfigError
from guardsearch.core.events import Trace
from guardsearch.models.base import Model
from guardsearch.models.metered import Metered
from guardsearch.search.expand import Checkpoint
from guardsearch.sync import run_sync

DEFAULT_STRATEGY = "astar"
DEFAULT_BUDGET_CALLS = 40
# consensus at temperature 0 would make its N candidates N copies of one greedy
# rollout; sampled, each candidate differs through its own explicit seed.
CONSENSUS_TEMPERATURE = 0.7
ASTAR_RMAX = 8
BEAM_RMAX = 3
MIN_NUMBERS, MAX_NUMBERS = 2, 6


@dataclass(frozen=True)
class Puzzle:
    """One row of the Tree of Thoughts data set (rank 1 = solved fastest by people)."""

    rank: int
    numbers: str
    solved_rate: float


def puzzles() -> list[Puzzle]:
    """The 1,362 puzzles shipped with the package (MIT, Tree of Thoughts; see data/)."""
    text = resources.files("guardsearch.apps.game24").joinpath("data/24.csv").read_text("utf-8")
    rows = csv.DictReader(io.StringIO(text))
    return [
        Puzzle(
            rank=int(r["Rank"]),
            numbers=r["Puzzles"],
            solved_rate=float(r["Solved rate"].rstrip("%")) / 100,
        )
        for r in rows
    ]


def puzzle_numbers(numbers: str) -> tuple[Fraction, ...]:
    """The numbers of a puzzle a person gave ("4 5 6 10"): 2 to 6 of them, each bounded
    (`parse_number`); a ConfigError says what is wrong. The one check every way in
    shares: the CLI, durable runs and POST /solve (through the app's `build`)."""
    count = len(numbers.replace(",", " ").split())
    wrong_count = f"Game of 24 takes {MIN_NUMBERS} to {MAX_NUMBERS} numbers, got {count}"
    if count > MAX_NUMBERS:  # before parsing: a long list costs nothing to refuse
        raise ConfigError(wrong_count)
    try:
        values = parse_numbers(numbers)
    except StepError as exc:
        raise ConfigError(f"Game of 24 needs numbers like '4 5 6 10': {exc}") from exc
    if count < MIN_NUMBERS:
        raise ConfigError(wrong_count)
    return values


def default_options(strategy: str) -> dict[str, Any]:
    """The search options the Game of 24 recommends for `strategy` (the caller's win).

    dfs: `prefer_siblings` (one proposer call lists many children). consensus:
    `temperature` `CONSENSUS_TEMPERATURE`, so that the candidates (seeds `seed + i x
    samples`, distinct per candidate) are different samples, not one greedy answer.
    astar / best_first: `rmax` `ASTAR_RMAX` and `reopen`: the grammar leaves out what a
    node has tried, so every re-expansion proposes new steps (three expansions cover
    most of a three-number state's steps), and a search whose open set empties goes
    back to the nodes with steps left instead of stopping with calls unspent.
    beam: `rmax` `BEAM_RMAX`, for the same reason (with 1 a beam ran dry at 6 calls).
    docs/cookbook/game24.md ("The defaults, and the figure that chose each") names the
    committed figure behind each, or says there is none.
    """
    if strategy == "dfs":
        return {"prefer_siblings": True}
    if strategy == "consensus":
        return {"temperature": CONSENSUS_TEMPERATURE}
    if strategy in ("astar", "best_first"):
        return {"rmax": ASTAR_RMAX, "reopen": True}
    if strategy == "beam":
        return {"rmax": BEAM_RMAX}
    return {}


async def solve_game24(
    numbers: str,
    *,
    strategy: str = DEFAULT_STRATEGY,
    model: Model | Metered | str | None = None,
    budget: BudgetLike = DEFAULT_BUDGET_CALLS,
    value: bool = False,
    constrained: bool = True,
    trace: Trace | None = None,
    on_expansion: Checkpoint | None = None,
    **options: Any,
) -> dict[str, Any]:
    """Solve one puzzle ("4 5 6 10") with a search strategy; returns a JSON-ready dict.

    Keys: `succeeded`, `answer` (an expression using each input exactly once that
    equals 24, or None), `numbers`, `strategy`, `termination`, `calls`, `tokens`,
    `expansions`, `nodes`, `steering` (repeats, repairs, prevented failures), `seconds`,
    `model`, `path` (the steps, `a op b = c (left: ...)`), and on a model ladder
    `models` (usage, seconds and escalations per model).
    `model` is a Model, a Metered (which brings its own budget), a spec string, or None
    for the default spec; `budget` is anything `Budget.of` takes (40 calls).
    `options` go to `search` (e.g. `width=5`, `samples=2`, `temperature=0.7`), over
    `default_options(strategy)` (consensus samples at temperature 0.7 unless told).
    This is `solve_app("game24", ...)` (guardsearch/apps/solve.py) with its JSON.
    """
    puzzle_numbers(numbers)  # a bad puzzle is refused before any model is built
    the_model = load_model(model)
    problem = {"numbers": numbers, "value": value, "constrained": constrained}
    result = await solve_app(
        "game24",
        problem,
        strategy=strategy,
        model=the_model,
        budget=budget,
        trace=trace,
        on_expansion=on_expansion,
        **options,
    )
    return solution(result, model=the_model.name, echo={"numbers": numbers})


solve_game24_sync = run_sync(solve_game24)
