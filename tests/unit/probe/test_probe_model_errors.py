"""A probe whose model never answers fails, saying why (it used to report
`succeeded=True`, `stable`: the code fallback plan found results on its own).

A planner call that fails is still a note, not a stop: one failed call among answered
ones leaves the run as it was."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner

from guardsearch import ProbeConfig, run_probe_sync
from guardsearch.cli.probe import probe as probe_command
from guardsearch.core.messages import Completion, ModelRequest
from guardsearch.corpus import CorpusIndex, Document
from guardsearch.models.scripted import ScriptedModel

PLAN = {"keywords": ["French", "painter"], "extra": [], "kind": "painter"}
EVALUATION = {"satisfied": True, "reason": "French painters"}


class Unreachable:
    """A model whose every call fails, like a server that is down."""

    name = "unreachable"

    def __init__(self) -> None:
        self.calls = 0

    async def complete(self, request: ModelRequest) -> Completion:
        self.calls += 1
        raise ConnectionError("connection refused")


class FirstCallFails(Unreachable):
    """Down for the first call (the plan), then answers as a scripted planner."""

    def __init__(self) -> None:
        super().__init__()
        self.scripted = ScriptedModel([json.dumps(EVALUATION)])

    async def complete(self, request: ModelRequest) -> Completion:
        if self.calls == 0:
            return await super().complete(request)
        self.calls += 1
        return await self.scripted.complete(request)


@pytest.fixture
def index(tmp_path: Path) -> Iterator[CorpusIndex]:
    index = CorpusIndex(tmp_path / "i.sqlite3")
    rows = [("Monet", "French painter"), ("Manet", "French painter"), ("Paris", "City")]
    index.add(
        "c",
        [
            Document(corpus="c", key=t, title=t, description=d, body=f"{t} {d}", location=f"u/{t}")
            for t, d in rows
        ],
    )
    yield index
    index.close()


@pytest.mark.parametrize("baseline", [False, True])
def test_a_model_that_never_answers_fails_the_run_with_the_reason(
    index: CorpusIndex, baseline: bool
) -> None:
    model = Unreachable()
    run = run_probe_sync(
        "French painters", model=model, index=index, config=ProbeConfig(baseline=baseline)
    )
    assert model.calls == 2  # plan and evaluate were both tried
    assert run.results  # the code fallback's search still ran...
    assert not run.succeeded  # ...but the run did not work
    assert run.stop_reason == "model_error"
    assert run.error is not None and "connection refused" in run.error
    payload = run.as_dict()
    assert payload["succeeded"] is False and "connection refused" in payload["error"]
    end = [e.data for e in run.trace.of_kind("run_end")]
    assert end[-1]["stop_reason"] == "model_error" and "connection refused" in end[-1]["error"]


def test_one_failed_planner_call_among_answered_ones_is_a_note(index: CorpusIndex) -> None:
    model = FirstCallFails()
    run = run_probe_sync("French painters", model=model, index=index)
    assert run.succeeded and run.error is None and "error" not in run.as_dict()
    assert run.stop_reason != "model_error"
    assert run.notes == ["plan failed: unreachable: connection refused"]
    assert run.evaluation is not None and run.evaluation.satisfied


def test_the_cli_says_error_and_exits_1(
    index: CorpusIndex, monkeypatch: pytest.MonkeyPatch
) -> None:
    import guardsearch.apps.probe.app as app
    import guardsearch.models.spec as spec

    monkeypatch.setattr(spec, "model_from_spec", lambda _: Unreachable())
    monkeypatch.setattr(app, "_index", lambda _: index)
    cli = typer.Typer()
    cli.command()(probe_command)
    cli.command()(lambda: None)
    shown = CliRunner().invoke(cli, ["probe", "French painters", "--model", "x"])
    assert shown.exit_code == 1, shown.output
    assert shown.stderr.strip().splitlines()[-1] == (
        "error: the model never answered: unreachable: connection refused"
    )
    as_json = CliRunner().invoke(cli, ["probe", "French painters", "--model", "x", "--json"])
    assert as_json.exit_code == 1
    payload = json.loads(as_json.stdout)
    assert payload["succeeded"] is False and payload["stop_reason"] == "model_error"
