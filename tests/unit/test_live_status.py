"""The terminal live status (cli/live_status.py): what it counts, and that it shows only
on a terminal, never with --json or --quiet."""

from __future__ import annotations

import json
import os
import pty
import select
import subprocess
import sys
import time
from io import StringIO
from pathlib import Path

from rich.console import Console

from guardsearch.cli.live_status import RunStatus, bench_progress, live_status
from guardsearch.core.budget import Budget
from guardsearch.core.events import Trace

ROOT = Path(__file__).resolve().parents[2]


def emit_a_search(trace: Trace) -> None:
    trace.emit("run_start", strategy="astar", budget="max_calls(10) | max_tokens(900)")
    trace.emit("model_call", step="step1", node="n0", prompt_tokens=140, completion_tokens=10)
    trace.emit("guard_verdict", step="step1", node="n1", guard="g24", passed=True, score=0.56)
    trace.emit(
        "guard_verdict",
        step="step1",
        node="n2",
        guard="g24",
        passed=False,
        score=0.0,
        feedback="7 + 3: 7 is not among the numbers left",
    )
    trace.emit("expansion", step="step1", node="n0", phase="end", children=["n1", "n2"])
    trace.emit("model_call", step="step2", node="n1", prompt_tokens=150, completion_tokens=5)
    trace.emit("guard_verdict", step="step2", node="n3", guard="g24", passed=True, score=0.8)


def test_the_status_counts_calls_tokens_nodes_and_verdicts_against_the_budget() -> None:
    trace = Trace()
    status = RunStatus.of("solve", Budget.of(calls=10))
    trace.subscribe(status)
    emit_a_search(trace)
    lines = status.lines()
    assert lines[1] == "calls 2 / 10 (20%) · tokens 305 / 900 (34%)"  # tokens from run_start
    assert lines[2] == "nodes expanded 1 · judged 3 (2 passed, 1 rejected)"
    assert lines[3] == "best 0.80 at n3 (g24)"
    assert lines[4] == "last g24 passed 0.80 at n3"
    trace.emit("guard_verdict", node="n4", guard="g24", passed=False, feedback="x " * 200)
    assert status.lines()[4].startswith("last g24 rejected at n4: x x")
    assert status.lines()[4].endswith("…")


def test_on_a_terminal_the_status_is_drawn_and_leaves_a_summary() -> None:
    screen = StringIO()
    console = Console(file=screen, force_terminal=True, width=120)
    trace = Trace()
    with live_status(trace, "solve game24", budget=Budget.of(calls=10), console=console) as shown:
        assert shown is not None
        emit_a_search(trace)
    text = screen.getvalue()
    assert "calls 2 / 10 (20%)" in text and "judged 3" in text


def test_nothing_is_drawn_without_a_terminal_or_with_json_or_quiet() -> None:
    for terminal, quiet, as_json in [
        (False, False, False),
        (True, True, False),
        (True, False, True),
    ]:
        screen = StringIO()
        console = Console(file=screen, force_terminal=terminal, width=120)
        trace = Trace()
        with live_status(trace, "t", quiet=quiet, as_json=as_json, console=console) as shown:
            emit_a_search(trace)
        assert shown is None and screen.getvalue() == ""
        with bench_progress(["io", "io"], quiet=quiet, as_json=as_json, console=console) as bars:
            assert bars is None
        assert screen.getvalue() == ""


def test_bench_bars_count_each_methods_trials() -> None:
    screen = StringIO()
    console = Console(file=screen, force_terminal=True, width=120)
    with bench_progress(["io", "io", "astar"], quiet=False, as_json=False, console=console) as b:
        assert b is not None
        b.finished("io")
        b.finished("io")
        b.finished("astar")
        done = {t.description: (t.completed, t.total) for t in b.progress.tasks}
    assert done == {"io": (2, 2), "astar": (1, 1)}
    assert "ETA" in screen.getvalue()


def run_in_a_terminal(tmp_path: Path, *args: str) -> tuple[str, str]:
    """A `guardsearch` command whose stderr is a pseudo-terminal: (stdout, terminal text)."""
    primary, secondary = pty.openpty()
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src"), "COLUMNS": "120", "TERM": "xterm"}
    process = subprocess.Popen(
        [sys.executable, "-c", "from guardsearch.cli import main; main()", *args],
        stdout=subprocess.PIPE,
        stderr=secondary,
        stdin=subprocess.DEVNULL,
        env=env,
        cwd=tmp_path,
    )
    os.close(secondary)
    seen = b""
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        ready, _, _ = select.select([primary], [], [], 0.2)
        if ready:
            try:
                chunk = os.read(primary, 65536)
            except OSError:  # the terminal closed: the command is done
                break
            if not chunk:
                break
            seen += chunk
        elif process.poll() is not None:
            break
    stdout, _ = process.communicate(timeout=30)
    os.close(primary)
    return stdout.decode(), seen.decode(errors="replace")


def test_solve_on_a_terminal_shows_the_live_status_and_json_does_not(tmp_path: Path) -> None:
    answers = tmp_path / "answers.json"
    answers.write_text(
        json.dumps(['{"steps": ["5 * 6"]}', '{"steps": ["30 - 10"]}', '{"steps": ["4 + 20"]}'])
    )
    solve = ["solve", "game24", "4 5 6 10", "--strategy", "astar", "--budget-calls", "20"]
    model = ["--model", f"scripted:{answers}?delay=0.3"]
    out, terminal = run_in_a_terminal(tmp_path, *solve, *model)
    assert "= 24" in out
    assert "solve game24 4 5 6 10" in terminal  # the live panel was drawn
    assert "calls 3 / 20 (15%)" in terminal and "nodes expanded" in terminal
    out, terminal = run_in_a_terminal(tmp_path, *solve, *model, "--json")
    assert json.loads(out)["succeeded"] is True
    assert "nodes expanded" not in terminal and "calls 3 / 20" not in terminal
