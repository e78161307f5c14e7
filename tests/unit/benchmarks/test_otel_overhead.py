"""The arithmetic and the base tree of benchmarks/otel_overhead.py."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import otel_overhead


def test_the_interval_of_equal_ratios_is_that_ratio() -> None:
    assert otel_overhead.geometric_ci([1.1] * 12, seed=1) == (10.0, 10.0, 10.0)


def test_resampling_generations_widens_the_interval_when_processes_differ() -> None:
    # Two worker generations, one 10 % slower for its whole life, steady round to round:
    # resampling rounds sees a tight interval, resampling generations the real spread.
    ratios = [1.0] * 6 + [1.1] * 6
    groups = [0] * 6 + [1] * 6
    mean, low, high = otel_overhead.geometric_ci(ratios, 1)
    g_mean, g_low, g_high = otel_overhead.geometric_ci(ratios, 1, groups)
    assert mean == g_mean and 4.0 < mean < 6.0
    assert g_high - g_low > high - low
    assert (g_low, g_high) == (0.0, 10.0)


def test_the_base_tree_has_no_tracing_hooks_and_still_searches(tmp_path: Path) -> None:
    base = tmp_path / "base"
    otel_overhead.make_base(base)
    assert "observer(self)" not in (base / "guardsearch/core/events.py").read_text()
    env = dict(os.environ, PYTHONPATH=str(base), OTEL_EXPORTER_OTLP_ENDPOINT="http://127.0.0.1:9")
    code = (
        "import asyncio, sys; sys.path.insert(0, sys.argv[1]); import overhead\n"
        "import guardsearch\n"
        "from guardsearch.models.scripted import ScriptedModel\n"
        "from guardsearch.search import search\n"
        "r = asyncio.run(search(overhead.WideSpace(), 'bfs', model=ScriptedModel("
        "overhead._propose), max_expansions=20))\n"
        "print(guardsearch.__file__, r.expansions, 'opentelemetry' in sys.modules)\n"
    )
    benchmarks = str(Path(otel_overhead.__file__).parent)
    done = subprocess.run(
        [sys.executable, "-c", code, benchmarks], env=env, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    where, expansions, traced = done.stdout.split()
    assert where.startswith(str(base)) and expansions == "20" and traced == "False"
