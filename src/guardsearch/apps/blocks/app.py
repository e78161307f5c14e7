"""BlocksWorld as a registered app: `{"seed": 1000}` (a generated instance) or explicit
`{"start": [["A", "B"], ["C"]], "goal": [["C", "B", "A"]]}`; served by `program`."""

from __future__ import annotations

from typing import Any

from guardsearch.apps.blocks.domain import BlocksSpace, instance, parse_state
from guardsearch.core.errors import ConfigError
from guardsearch.registry import App, AppSetup, register


def build(problem: dict[str, Any], strategy: str) -> AppSetup:
    if strategy != "program":
        raise ConfigError("blocks is served by the 'program' strategy only")
    if "start" in problem or "goal" in problem:
        start = parse_state(problem.get("start"), "start")
        goal = parse_state(problem.get("goal"), "goal")
    else:
        seed = problem.get("seed", 1000)
        if isinstance(seed, bool) or not isinstance(seed, int):
            raise ConfigError('blocks needs {"seed": N} or {"start": ..., "goal": ...}')
        blocks = problem.get("blocks", 4)
        if blocks not in range(2, 8):
            raise ConfigError("blocks: 'blocks' must be a whole number from 2 to 7")
        start, goal = instance(seed, blocks=blocks)
    return AppSetup(space=BlocksSpace(start=start, goal=goal))


APP = register(
    App(
        name="blocks",
        build=build,
        summary="BlocksWorld: restack blocks to a goal; the model writes the search code",
        strategy="program",
        example={"seed": 1000},
        served=False,
    )
)
