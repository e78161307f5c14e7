"""`guardsearch bench game24` on the real embedded model: the JSON contract end to end.

The must-show command is `--range 900:905 --methods io,dfs --json`; here with a smaller
call cap so the test stays within a few minutes on a 2-core CPU.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from guardsearch.cli import app
from guardsearch.cli.bench import JSON_FIELDS

pytestmark = pytest.mark.model

pytest.importorskip("llama_cpp")


def test_bench_game24_on_the_embedded_model_prints_per_method_figures(tmp_path: Path) -> None:
    args = ["bench", "game24", "--range", "900:905", "--methods", "io,dfs", "--json"]
    result = CliRunner().invoke(
        app, [*args, "--budget-calls", "12", "--out", str(tmp_path), "--quiet"]
    )
    assert result.exit_code == 0, result.output
    payload = json.loads(result.stdout)
    assert payload["problems"] == 5
    for label in ("io", "dfs"):
        figures = payload["methods"][label]
        assert figures["n"] == 5
        for key in JSON_FIELDS:
            assert isinstance(figures[key], float), key
        assert 0.0 <= figures["ci_low"] <= figures["success_rate"] <= figures["ci_high"] <= 1.0
        assert figures["mean_tokens"] > 0
        assert figures["mean_seconds"] > 0
    assert payload["methods"]["io"]["mean_calls"] == 1.0
    assert 1.0 <= payload["methods"]["dfs"]["mean_calls"] <= 12.0
