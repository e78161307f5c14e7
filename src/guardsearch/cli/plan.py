"""`guardsearch plan`: the planning pipeline of docs/plan.md, searched with guard feedback."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Annotated, Any

import typer

from guardsearch.cli.live_status import live_status
from guardsearch.cli.options import AsJson, BudgetCalls, ModelSpec, Quiet, TraceFile
from guardsearch.cli.output import (
    err,
    exit_for,
    fail,
    open_sink,
    out,
    print_json,
    progress_printer,
)
from guardsearch.core.budget import Budget
from guardsearch.core.errors import GuardsearchError
from guardsearch.core.events import Trace


def _list(as_json: bool) -> None:
    from guardsearch.apps.plan import problems

    rows = [p.summary() for p in problems()]
    if as_json:
        print_json({"problems": rows})
        return
    for row in rows:
        typer.echo(f"{row['id']:<30} {row['category']:<20} {row['title']}")


def _step_line(step: dict[str, Any]) -> str:
    detail = f" — {step['detail']}" if step.get("detail") else ""
    cost = f" [cost {step['cost']:g}]" if step.get("cost") is not None else ""
    branch = f"  (on failure: {step['on_failure']})" if step.get("on_failure") else ""
    return f"{step['id']}: {step['action']}{detail}{cost}{branch}"


def _show(result: dict[str, Any]) -> None:
    from guardsearch.apps.plan.report import summary_lines

    if result.get("spec"):
        spec = result["spec"]
        asks = "; ".join(c["text"] for c in spec.get("constraints", [])) or "no constraints"
        err.print(f"task spec ({spec['kind']}): {asks}", markup=False, soft_wrap=True)
    if not result["succeeded"]:
        err.print(f"[red]no plan passed the guards:[/red] {result['termination']}")
        failed = [v for v in result.get("verdicts", []) if not v["passed"]]
        for v in failed:
            err.print(f"  {v['check']}: {v['detail']}", markup=False, soft_wrap=True)
        if result["plan"] is None:
            for node in result["path"]:
                mark = "ok" if node["passed"] else f"failed: {node['feedback']}"
                err.print(f"  {node['step']}: {mark}", style="dim", markup=False)
        else:
            err.print("best plan so far (it failed the checks above):", markup=False)
    for step in (result["plan"] or {}).get("steps", []):
        out.print(_step_line(step), markup=False, soft_wrap=True)
    _guard_level(result)
    for line in summary_lines(result):
        err.print(line, markup=False, soft_wrap=True)


def _guard_level(result: dict[str, Any]) -> None:
    note = f" ({result['guard_note']})" if result.get("guard_note") else ""
    err.print(f"guard level: {result['guard_level']}{note}", markup=False, soft_wrap=True)


SpecFile = Annotated[
    Path | None,
    typer.Option(
        help="A free task's spec (JSON/YAML: kind, constraints, order) to judge the plan "
        "by, instead of the one read from the task (see the `spec` of --json)."
    ),
]
Extract = Annotated[
    str,
    typer.Option(
        help="How a free task's spec is read: code (default), or model (code, then one "
        "guarded model call for the phrases code missed)."
    ),
]


def plan(
    task: Annotated[
        str | None,
        typer.Argument(
            help="The task in words: with --problem it replaces the problem's description; "
            "alone it is a shipped problem's id or title, or else a free task (judged by "
            "the spec read from it: its constraints, kind and stated order)."
        ),
    ] = None,
    problem: Annotated[str | None, typer.Option(help="A shipped problem id (see --list).")] = None,
    problem_file: Annotated[
        Path | None, typer.Option(help="Your own problem as YAML/JSON (see docs/plan.md).")
    ] = None,
    pipeline: Annotated[
        str,
        typer.Option(help="single | classify-then-plan | full | search | search-blind."),
    ] = "search",
    model: ModelSpec = None,
    budget_calls: BudgetCalls = 30,
    guard_level: Annotated[
        str | None,
        typer.Option(
            help="Plan guard: minimal | medium | expansive (default: expansive) for a "
            "problem; task (default: the task's spec) | minimal for a free task."
        ),
    ] = None,
    heuristic: Annotated[
        str | None,
        typer.Option(help="Backtrack heuristic for search: fixes | rules | model | blind."),
    ] = None,
    temperature: Annotated[
        float,
        typer.Option(
            min=0.0,
            max=2.0,
            help="Base sampling temperature: attempt k at a step samples at least as warm as "
            "the default Schedule (0, 0.7, 1.0; seeded, so runs replay).",
        ),
    ] = 0.0,
    seed: Annotated[int, typer.Option(help="Base seed of the model calls.")] = 0,
    trace: TraceFile = None,
    spec: SpecFile = None,
    extract: Extract = "code",
    list_problems: Annotated[
        bool, typer.Option("--list", help="List the shipped problems and exit.")
    ] = False,
    quiet: Quiet = False,
    as_json: AsJson = False,
) -> None:
    """Plan a task as analysis -> recon -> strategy -> plan, backtracking on guard feedback.

    Give a shipped problem (--problem ID, or its id/title as TASK), your own problem
    (--problem-file), or just the task in words (a free task)."""
    if list_problems:
        _list(as_json)
        return
    from guardsearch.apps.plan import plan_problem

    events = Trace()
    events.subscribe(progress_printer(quiet))
    sink = open_sink(trace) if trace else None
    if sink:
        events.subscribe(sink)
    try:
        chosen, task, task_spec = _chosen(task, problem, problem_file, spec, as_json)
        budget = Budget.of(calls=budget_calls)
        title = f"plan {chosen.id if chosen is not None else 'task'} · {pipeline}"
        with live_status(events, title, budget=budget, quiet=quiet, as_json=as_json):
            result = asyncio.run(
                plan_problem(
                    chosen,
                    task=task,
                    pipeline=pipeline,
                    model=model,
                    budget=budget,
                    guard_level=guard_level,
                    heuristic=heuristic,
                    trace=events,
                    temperature=temperature,
                    seed=seed,
                    spec=task_spec,
                    extract=extract,
                )
            )
    except GuardsearchError as exc:
        fail(str(exc), exit_for(exc), as_json=as_json)
    finally:
        if sink:
            sink.close()
    if as_json:
        print_json(result)
    else:
        _show(result)
    if not quiet:
        err.print(
            f"[dim]{result['pipeline']}: {result['calls']} calls, {result['tokens']} tokens, "
            f"{len(result['backtracks'])} backtracks, {result['seconds']:.1f}s, "
            f"termination {result['termination']}[/dim]"
        )
    raise typer.Exit(0 if result["succeeded"] else 1)


def _chosen(
    task: str | None,
    problem: str | None,
    problem_file: Path | None,
    spec: Path | None,
    as_json: bool,
) -> tuple[Any, str | None, Any]:
    """(the shipped or given problem, or None for a free task; the task in words; the
    free task's spec from --spec, or None). A task with its own spec is never taken for
    a shipped problem's title."""
    from guardsearch.apps.plan import get_problem, load_problem_file, problems
    from guardsearch.apps.plan.task_spec import load_spec_file

    task_spec = None
    if spec is not None:
        if problem or problem_file:
            fail("--spec is for a free task; a problem has its own facts", as_json=as_json)
        task_spec = load_spec_file(spec, task)
        task = task or task_spec.task
    if problem and problem_file:
        fail("give --problem or --problem-file, not both", as_json=as_json)
    if problem_file is not None:
        return load_problem_file(problem_file), task, None
    if problem is not None:
        return get_problem(problem), task, None
    if not (task and task.strip()):
        fail(
            "give a task in words, --problem ID (guardsearch plan --list) or --problem-file FILE",
            as_json=as_json,
        )
    wanted = task.strip().lower()
    matches = [p for p in problems() if wanted in (p.id, p.title.lower()) and task_spec is None]
    # A shipped problem named exactly; anything else is a free task.
    return (matches[0], None, None) if matches else (None, task.strip(), task_spec)
