"""A new user's own step-by-step puzzle, end to end, through the public API only (issue 31).

"Reach 26 from 5 with +3 and *2" is defined in the lines between the DOMAIN markers
(at most 25, counted below): a `MoveSpace` (no subclass, no `key` to override) and an
`App` registered by name. It is then solved by bfs, dfs and astar on a scripted model,
listed by `guardsearch apps` and solved by `guardsearch solve reach "5 26"`.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from guardsearch import (  # the new app's one import
    App,
    AppSetup,
    ModelRequest,
    MoveSpace,
    ScriptedModel,
    Step,
    StepSpace,
    register,
    run_search_sync,
)
from guardsearch.cli import app as cli

# --- DOMAIN: the whole new app (plus one import: App, AppSetup, MoveSpace, register) -

MOVES = {"+3": lambda n: n + 3, "*2": lambda n: n * 2}


def build(problem: dict, strategy: str) -> AppSetup:
    start, target = int(problem["start"]), int(problem["target"])

    def not_past(n: int) -> bool | str:
        return n <= target or f"{n} is past {target}: every move makes it bigger"

    goal, score = (lambda n: n == target), (lambda n: min(n / target, 1.0))
    objective = f"Reach {target} from {start} with +3 and *2"
    space = MoveSpace(objective=objective, start=start, moves=MOVES, goal=goal,
                      guard=not_past, score=score)  # fmt: skip
    return AppSetup(space=space)


def replay(problem: dict, moves: list[str]) -> str | None:
    n = int(problem["start"])
    for move in moves:
        n = MOVES[move](n)
    return None if n == int(problem["target"]) else f"the moves reach {n}"


APP = register(App(name="reach", build=build, summary="Reach a number with +3 and *2",
                   strategy="bfs", example={"start": 5, "target": 26}, check=replay,
                   parse=lambda text: dict(zip(("start", "target"), map(int, text.split()), strict=True))))  # fmt: skip  # noqa: E501
# --- END DOMAIN ----------------------------------------------------------------------

runner = CliRunner()
PROBLEM = {"start": 5, "target": 26}


def both_moves(request: ModelRequest) -> str:
    """A proposer that always lists both moves (the search decides which is right)."""
    return "+3\n*2"


def test_the_domain_takes_at_most_25_lines() -> None:
    source = Path(__file__).read_text(encoding="utf-8")
    block = source.split("# --- DOMAIN", 1)[1].split("# --- END DOMAIN", 1)[0]
    lines = [line for line in block.splitlines()[1:] if line.strip()]
    assert len(lines) + 1 <= 25, len(lines)  # + its import line


@pytest.mark.parametrize("strategy", ["bfs", "dfs", "astar"])
def test_bfs_dfs_and_astar_solve_it_and_the_answer_is_the_whole_path(strategy: str) -> None:
    space = APP.setup(PROBLEM, strategy).space
    result = run_search_sync(space, strategy, model=ScriptedModel(both_moves), budget=30)
    assert result.succeeded, (result.stop_reason, result.pruned)
    assert replay(PROBLEM, result.answer) is None  # every move, not only the last
    assert len(result.steps) == len(result.answer)
    assert result.steps[-1].endswith("-> 26")
    if strategy == "bfs":  # level by level: the shortest path
        assert result.answer == ["*2", "+3", "*2"]


def test_a_state_reached_twice_is_judged_once() -> None:
    space = APP.setup(PROBLEM, "bfs").space
    result = run_search_sync(space, "bfs", model=ScriptedModel(both_moves), budget=30)
    states = [n.value for n in result.tree if n.parent is not None and n.value is not None]
    assert len(states) == len(set(states))


def test_all_pruned_says_which_verdicts_pruned_what() -> None:
    space = APP.setup(PROBLEM, "dfs").space
    result = run_search_sync(space, "dfs", model=ScriptedModel(["*2"], repeat_last=True), budget=30)
    assert result.stop_reason == "all_pruned"
    assert result.pruned == {"not_past": ["*2 -> 40: 40 is past 26: every move makes it bigger"]}
    assert result.as_dict()["pruned"] == result.pruned


def test_a_move_the_model_invents_is_feedback_naming_the_valid_ones() -> None:
    space = APP.setup(PROBLEM, "bfs").space
    model = ScriptedModel(["-1", "*2\n+3"], repeat_last=True)
    result = run_search_sync(space, "bfs", model=model, budget=30, rmax=2)
    assert result.succeeded
    assert "'-1' is not a move; valid moves: +3, *2" in result.pruned["parse"][0]


def test_apps_lists_it_and_solve_solves_it_from_the_command_line(tmp_path: Path) -> None:
    listed = runner.invoke(cli, ["apps", "--json"])
    assert listed.exit_code == 0, listed.output
    assert "reach" in [row["name"] for row in json.loads(listed.stdout)["apps"]]
    answers = tmp_path / "answers.json"
    answers.write_text(json.dumps(["+3\n*2"] * 30))
    spec = f"scripted:{answers}"
    done = runner.invoke(cli, ["solve", "reach", "5 26", "--model", spec, "--json", "--quiet"])
    assert done.exit_code == 0, done.output
    payload = json.loads(done.stdout)
    assert payload["succeeded"] and payload["strategy"] == "bfs"
    assert payload["answer"] == ["*2", "+3", "*2"]
    assert payload["start"] == 5 and payload["target"] == 26
    assert payload["path"] == ["*2 -> 10", "+3 -> 13", "*2 -> 26"]
    plain = runner.invoke(cli, ["solve", "reach", '{"start": 5, "target": 26}', "--model", spec])
    assert plain.exit_code == 0, plain.output
    assert plain.stdout.strip() == '["*2", "+3", "*2"]'


def test_bad_problems_and_flags_are_one_line_errors(tmp_path: Path) -> None:
    for args in (["reach", "5"], ["reach", "five 26"], ["reach", '{"start": 5}'],
                 ["reach", "5 26", "--value"], ["nope", "5 26"]):  # fmt: skip
        result = runner.invoke(cli, ["solve", *args, "--model", "scripted:x"])
        assert result.exit_code == 2, (args, result.output)
        assert result.stderr.startswith("error: ") and result.stderr.count("\n") == 1, args


# -- a Step's rmax is honoured by every strategy (docs/search.md, "Which rmax applies") --


def never_passes(text: str) -> str:
    return "not yet"


@pytest.mark.parametrize("strategy", ["bfs", "beam", "astar", "best_first", "refine", "dfs"])
def test_a_steps_rmax_is_honoured_and_the_search_option_overrides_it(strategy: str) -> None:
    space = StepSpace(objective="o", steps=[Step(name="s", prompt="p", guard=never_passes, rmax=5)])
    model = ScriptedModel(lambda request: request.digest())  # a new answer every time
    own = run_search_sync(space, strategy, model=model, budget=9)
    assert (own.calls, own.stop_reason) == (5, "all_pruned")  # not 1 with 8 calls left
    told = run_search_sync(space, strategy, model=model, budget=9, rmax=2)
    assert told.calls == 2


def test_the_movespace_example_of_search_md_runs_as_written() -> None:
    page = (Path(__file__).resolve().parents[2] / "docs" / "search.md").read_text("utf-8")
    code = page.split("## Your own step-by-step puzzle", 1)[1].split("```python\n", 1)[1]
    code = code.split("```", 1)[0]
    printed: list[str] = []
    exec(compile(code, "<search.md>", "exec"), {"print": lambda *a: printed.append(repr(a))})
    assert printed == [repr((["*2", "+3", "*2"], ["*2 -> 10", "+3 -> 13", "*2 -> 26"]))]


def test_config_is_a_mapping_or_the_strategys_options_class() -> None:
    """One `config=` shape for every family: a class (a strategy's options) works like
    the mapping, and only what it sets moves (an app's recommended options stay)."""
    from guardsearch import ConfigError, run_app_sync
    from guardsearch.search import AStarOptions, BFSOptions

    space = StepSpace(objective="o", steps=[Step(name="s", prompt="p", guard=never_passes)])
    model = ScriptedModel(lambda request: request.digest())
    told = run_search_sync(space, "bfs", model=model, budget=9, config=BFSOptions(rmax=2))
    assert told.calls == 2
    result = run_app_sync("reach", PROBLEM, model=ScriptedModel(both_moves),
                          config=AStarOptions(width=3), strategy="astar")  # fmt: skip
    assert result.succeeded and result.strategy == "astar"
    with pytest.raises(ConfigError, match="config must be a mapping"):
        run_search_sync(space, "bfs", model=model, config=3)


def test_probe_takes_a_model_spec_string() -> None:
    from guardsearch import ConfigError
    from guardsearch.apps.probe import probe
    from guardsearch.sync import run_sync

    with pytest.raises(ConfigError, match="nope"):
        run_sync(probe)("painters", model="nope:x")
