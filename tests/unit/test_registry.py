"""The app registry: every app registered once, found by name by runs, /solve, bench, the CLI."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from guardsearch import ScriptedModel, Step
from guardsearch import registry as registry_module
from guardsearch.cli import app as cli
from guardsearch.core.errors import ConfigError
from guardsearch.experiments import Suite, resolve_suite
from guardsearch.registry import App, AppSetup, app_names, build_app, get_app, register
from guardsearch.runs import RunSpec, create_run, execute_run
from guardsearch.search import StepSpace
from guardsearch.server.schemas import SolveRequest
from guardsearch.server.solve import check_request
from guardsearch.store.sqlite import SqliteRunStore

runner = CliRunner()


@pytest.fixture
def own_registry(monkeypatch: pytest.MonkeyPatch) -> None:
    """Registrations made by a test end with it."""
    monkeypatch.setattr(registry_module, "_APPS", dict(registry_module._APPS))


def release(problem: dict[str, Any], strategy: str) -> AppSetup:
    """A user's app: one step that writes release notes for a version."""
    step = Step(name="notes", prompt=f"Write the notes of release {problem['version']}.")
    return AppSetup(space=StepSpace(objective="Ship the release", steps=[step]))


RELEASE = App(name="release", build=release, strategy="dfs", example={"version": "2.1"})


def test_the_built_in_searchable_apps_are_registered() -> None:
    assert {"game24", "plan"} <= set(app_names())


@pytest.mark.parametrize("name", ["game24", "plan"])
def test_every_app_builds_its_example_and_is_reachable_everywhere(name: str) -> None:
    found = get_app(name)
    setup = build_app(name, found.example, found.strategy)
    assert setup.space is not None and found.command.startswith("guardsearch ")
    assert isinstance(resolve_suite(name), Suite)
    spec = check_request(SolveRequest(app=name, problem=found.example))
    assert (spec.app, spec.strategy) == (name, found.strategy)


async def test_a_users_app_registers_in_a_few_lines_and_runs_durably(
    own_registry: None, tmp_path: Path
) -> None:
    register(RELEASE)
    assert "release" in app_names()
    store = SqliteRunStore(str(tmp_path / "runs.db"))
    run = create_run(RunSpec(app="release", problem={"version": "2.1"}, model="scripted"), store)
    record = await execute_run(run.id, store, model=ScriptedModel(["Fixed the login crash."]))
    assert record.status == "succeeded" and record.calls == 1


def test_a_taken_name_is_refused_and_the_same_app_twice_is_fine(own_registry: None) -> None:
    register(RELEASE)
    register(RELEASE)
    with pytest.raises(ConfigError, match="already registered"):
        register(App(name="release", build=release, strategy="bfs"))
    with pytest.raises(ConfigError, match="already registered"):
        register(App(name="game24", build=release))


def test_an_app_by_import_path_is_an_app_object_or_a_build_function() -> None:
    # (A second copy of this module: pytest imported it under another name.)
    by_object = get_app("tests.unit.test_registry:RELEASE")
    assert (by_object.name, by_object.strategy) == ("release", "dfs")
    by_function = get_app("tests.unit.test_registry:release")
    assert by_function.name == "tests.unit.test_registry:release"
    assert by_function.build.__name__ == "release"
    with pytest.raises(ConfigError, match="neither an App nor a build function"):
        get_app("tests.unit.test_registry:runner_name")
    with pytest.raises(ConfigError, match="cannot load app"):
        get_app("tests.unit.nope:build")


runner_name = "not callable"


def test_an_unknown_name_lists_the_registered_apps() -> None:
    with pytest.raises(ConfigError, match=r"unknown app 'nope'; choose one of .*game24.*plan"):
        get_app("nope")


def test_a_build_that_returns_no_app_setup_is_a_config_error(own_registry: None) -> None:
    register(App(name="broken", build=lambda problem, strategy: "a space"))  # type: ignore[arg-type,return-value]
    with pytest.raises(ConfigError, match="must return an AppSetup, got str"):
        build_app("broken", {}, "dfs")


def test_a_fresh_process_finds_a_built_in_app_by_name_importing_only_that_app() -> None:
    code = (
        "import sys\n"
        "from guardsearch.registry import build_app\n"
        "build_app('game24', {'numbers': '4 5 6 10'}, 'astar')\n"
        "print(sorted(m for m in ('guardsearch.apps.game24', 'guardsearch.apps.plan')"
        " if m in sys.modules))\n"
    )
    src = str(Path(__file__).resolve().parents[2] / "src")
    done = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        check=False,
        env={"PYTHONPATH": src, "PATH": ""},
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "['guardsearch.apps.game24']"


def test_solve_serves_only_served_apps(own_registry: None) -> None:
    register(App(name="private", build=release, served=False))
    with pytest.raises(ConfigError, match="unknown app 'private'"):
        check_request(SolveRequest(app="private", problem={"version": "1"}))


def test_cli_apps_lists_what_the_registry_holds() -> None:
    result = runner.invoke(cli, ["apps", "--json"])
    assert result.exit_code == 0, result.output
    rows = {row["name"]: row for row in json.loads(result.stdout)["apps"]}
    assert rows["plan"]["strategy"] == "dfs" and rows["plan"]["suite"] is True
    assert rows["game24"]["example"] == {"numbers": "4 5 6 10"}


def test_cli_runs_start_runs_any_app_durably_with_its_default_strategy(tmp_path: Path) -> None:
    answers = tmp_path / "answers.json"
    steps = [["5 * 6"], ["30 - 10"], ["4 + 20"]]
    answers.write_text(json.dumps([json.dumps({"steps": s}) for s in steps]))
    args = ["runs", "start", "game24", '{"numbers": "4 5 6 10"}', "--model", f"scripted:{answers}"]
    store = ["--store", str(tmp_path / "runs.db"), "--quiet", "--json"]
    result = runner.invoke(cli, [*args, *store])
    assert result.exit_code == 0, result.output
    record = json.loads(result.stdout)
    assert record["status"] == "succeeded" and record["strategy"] == "astar"
    bad = runner.invoke(cli, ["runs", "start", "game24", "[1, 2]", *store])
    assert bad.exit_code == 2 and "PROBLEM must be a JSON object" in bad.output
    unknown = runner.invoke(cli, ["runs", "start", "nope", "{}", *store])
    assert unknown.exit_code == 2 and "unknown app 'nope'" in unknown.output
