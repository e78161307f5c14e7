"""The command line: results on stdout, progress on stderr, clear errors and exit codes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from guardsearch.cli import app

runner = CliRunner()
SCHEMA = Path(__file__).parents[2] / "examples" / "colours.schema.json"


def _answers(tmp_path: Path, *answers: str) -> str:
    path = tmp_path / "answers.json"
    path.write_text(json.dumps(list(answers)))
    return f"scripted:{path}"


def test_version_prints_the_package_version() -> None:
    result = runner.invoke(app, ["--version"])
    assert result.exit_code == 0
    assert result.stdout.startswith("guardsearch ")


def test_ask_json_prints_one_object_with_the_contract_fields(tmp_path: Path) -> None:
    spec = _answers(tmp_path, '{"colours": ["red", "yellow", "blue"]}')
    result = runner.invoke(
        app,
        ["ask", "List three primary colours", "--schema", str(SCHEMA), "--model", spec, "--json"],
    )
    assert result.exit_code == 0, result.stderr
    payload = json.loads(result.stdout)
    assert payload["ok"] is True
    assert payload["value"] == {"colours": ["red", "yellow", "blue"]}
    assert payload["attempts"] == 1
    assert payload["feedback"] == []
    assert set(payload["usage"]) >= {"prompt_tokens", "completion_tokens"}


def test_ask_retries_with_feedback_and_reports_it(tmp_path: Path) -> None:
    spec = _answers(tmp_path, "not json at all", '{"colours": ["red", "yellow", "blue"]}')
    result = runner.invoke(
        app,
        ["ask", "List three primary colours", "--schema", str(SCHEMA), "--model", spec, "--json"],
    )
    payload = json.loads(result.stdout)
    assert payload["ok"] is True and payload["attempts"] == 2
    assert "not parseable as JSON" in payload["feedback"][0]
    # progress goes to stderr, never into the JSON on stdout
    assert "retrying" in result.stderr


def test_ask_exhausted_retries_exit_1_with_evidence(tmp_path: Path) -> None:
    spec = _answers(tmp_path, '{"colours": []}')
    result = runner.invoke(
        app, ["ask", "colours", "--schema", str(SCHEMA), "--model", spec, "--rmax", "2", "--json"]
    )
    assert result.exit_code == 1
    payload = json.loads(result.stdout)
    assert payload["ok"] is False
    assert payload["attempts"] == 2
    # The second answer repeats the first: dropped unjudged (issue 16), so one feedback.
    assert len(payload["feedback"]) == 1
    assert payload["steering"]["repeats"] == 1
    assert payload["last_output"] == '{"colours": []}'


@pytest.mark.parametrize(
    ("content", "message"),
    [("{not json", "not valid JSON"), ('{"type": 12}', "invalid JSON Schema")],
)
def test_ask_with_a_broken_schema_file_is_a_usage_error(
    tmp_path: Path, content: str, message: str
) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text(content)
    result = runner.invoke(
        app, ["ask", "x", "--schema", str(bad), "--json", "--model", _answers(tmp_path, "{}")]
    )
    assert result.exit_code == 2
    assert message in json.loads(result.stdout)["error"]


def test_ask_with_an_unknown_model_spec_names_the_valid_forms() -> None:
    result = runner.invoke(app, ["ask", "x", "--model", "nonsense:1", "--json"])
    assert result.exit_code == 2
    assert "openai:URL#MODEL" in json.loads(result.stdout)["error"]


def test_ask_budget_calls_stops_before_paying_more(tmp_path: Path) -> None:
    spec = _answers(tmp_path, "nope")
    result = runner.invoke(
        app,
        [
            "ask",
            "x",
            "--schema",
            str(SCHEMA),
            "--model",
            spec,
            "--rmax",
            "5",
            "--budget-calls",
            "2",
            "--json",
        ],
    )
    payload = json.loads(result.stdout)
    assert payload["ok"] is False
    assert payload["usage"]["calls"] == 2
    assert "budget exceeded" in payload["error"]


def test_ask_writes_the_event_trace(tmp_path: Path) -> None:
    trace = tmp_path / "trace.jsonl"
    spec = _answers(tmp_path, '{"colours": ["red", "yellow", "blue"]}')
    runner.invoke(
        app, ["ask", "c", "--schema", str(SCHEMA), "--model", spec, "--trace", str(trace)]
    )
    kinds = [json.loads(line)["kind"] for line in trace.read_text().splitlines()]
    assert "model_call" in kinds and "guard_verdict" in kinds and "budget_reserve" in kinds


def test_models_json_lists_backends_and_embedded_status() -> None:
    result = runner.invoke(app, ["models", "--json"])
    assert result.exit_code == 0, result.stderr
    payload = json.loads(result.stdout)
    assert {b["backend"] for b in payload["backends"]} >= {"llamacpp", "openai", "replay"}
    assert {"name", "path", "installed"} <= set(payload["embedded"])


def test_models_json_lists_every_embedded_model_with_its_spec_and_extra() -> None:
    result = runner.invoke(app, ["models", "--json"])
    assert result.exit_code == 0, result.stderr
    listed = {m["spec"]: m for m in json.loads(result.stdout)["embedded_models"]}
    assert set(listed) == {"embedded:0.5b", "embedded:1.5b"}
    assert listed["embedded:1.5b"]["extra"] == "embedded-1-5b"
    assert listed["embedded:1.5b"]["size"] == 1_117_320_768


def test_python_dash_m_runs_the_same_cli() -> None:
    import subprocess
    import sys

    done = subprocess.run(
        [sys.executable, "-m", "guardsearch", "--help"], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    assert "solve" in done.stdout and "research" in done.stdout


def test_solve_names_every_registered_strategy() -> None:
    """`solve --help` lists the strategies without importing the search package."""
    from guardsearch.cli.solve import STRATEGIES
    from guardsearch.search import strategy_names

    assert sorted(STRATEGIES) == strategy_names()


def test_ask_against_an_unreachable_server_ends_with_one_error_line() -> None:
    """README: errors read `error: ...` (ask printed `failed: ...`)."""
    from typer.testing import CliRunner

    from guardsearch import allow_real_models
    from guardsearch.cli import app as cli

    allow_real_models(True)  # a client of a closed local port: no model, no network
    result = CliRunner().invoke(cli, ["ask", "hi", "--model", "openai:http://127.0.0.1:9/v1#m"])
    assert result.exit_code == 1
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert lines[-1].startswith("error: ") and "127.0.0.1:9" in lines[-1]
    assert not any(line.startswith("failed:") for line in lines)


def test_the_root_help_lists_each_command_with_its_own_line() -> None:
    """cli/__init__.py's COMMANDS (what `--help` shows without importing a command)
    says what each command says of itself."""
    from guardsearch.cli import COMMANDS, load_command

    for name, (_, _, line) in COMMANDS.items():
        command = load_command(name)
        own = (command.help or "").strip().splitlines()[0]
        assert own == line, name


def test_version_and_help_import_no_command_module() -> None:
    """What keeps start-up quick (benchmarks/startup.py): `--version` imports no
    command-line library at all, `--help` no command, search, model or loop module."""
    import subprocess
    import sys

    code = (
        "import sys; from guardsearch.cli import main; sys.argv = ['guardsearch', '{}'];\n"
        "try:\n    main()\nexcept SystemExit:\n    pass\n"
        "print('typer' in sys.modules, sorted(m for m in sys.modules if "
        "m.startswith('guardsearch.') and m.split('.')[1] in "
        "('search', 'models', 'loops', 'apps', 'steps', 'guards', 'store') or "
        "m.startswith('guardsearch.cli.') and m not in ('guardsearch.cli.root', "
        "'guardsearch.cli.errors')))"
    )
    for flag, typer_loaded in (("--version", False), ("--help", True)):
        run = [sys.executable, "-c", code.format(flag)]
        done = subprocess.run(run, capture_output=True, text=True, check=True)
        assert done.stdout.strip().splitlines()[-1] == f"{typer_loaded} []", (flag, done.stdout)
