"""`POST /solve`: one guarded search of a registered app (game24, plan, ...) behind HTTP.

Nothing in a request sets a path on the server (`cache_dir` is refused) or sandbox
limits past the server's maxima (`SANDBOX_MAXIMA`): those are 400s.

Only apps registered by name (and `served`) are served: an import path (`package.module:build`)
would let a request load arbitrary code. Options are checked against the strategy's
declared ones (`search.options`), and the budget is capped by the server so one
request cannot hold the model for long.
"""

from __future__ import annotations

import asyncio
import time
from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse, Response

from guardsearch.core.errors import ConfigError, ModelError
from guardsearch.guards.isolation import IsolationUnavailable
from guardsearch.loops.research.schemas import ErrorResponse
from guardsearch.models.base import Model
from guardsearch.registry import app_names, build_app, get_app
from guardsearch.runs.spec import RunSpec
from guardsearch.search import search
from guardsearch.search.options import check_json_options
from guardsearch.search.strategies.base import strategy_names
from guardsearch.server.errors import respond
from guardsearch.server.schemas import SolveRequest, SolveResponse

MAX_SOLVE_CALLS = 200
# What a request may ask of the program strategy's sandbox at most: the server's own
# maxima, below the strategy's (search/strategies/program.py: SANDBOX_RANGES).
SANDBOX_MAXIMA = {"cpu_seconds": 60, "memory_mb": 1024, "wall_seconds": 60.0}
# Options that name a place on the server's disk: never from a request.
SERVER_ONLY = ("cache_dir",)


def served_apps() -> list[str]:
    """The registered apps a request may name (`App.served`)."""
    return [name for name in app_names() if get_app(name).served]


def check_request(body: SolveRequest, max_calls: int = MAX_SOLVE_CALLS) -> RunSpec:
    """The request as a RunSpec, or a ConfigError saying what is wrong with it."""
    if body.app not in served_apps():
        raise ConfigError(f"unknown app {body.app!r}; choose one of {', '.join(served_apps())}")
    strategy = body.strategy or get_app(body.app).strategy
    if strategy not in strategy_names():
        raise ConfigError(
            f"unknown strategy {strategy!r}; choose one of {', '.join(strategy_names())}"
        )
    options = check_json_options(strategy, check_request_options(body.options))
    if body.budget.calls > max_calls:
        raise ConfigError(f"budget.calls is capped at {max_calls} on this server")
    return RunSpec(
        app=body.app,
        problem=body.problem,
        strategy=strategy,
        options=options,
        budget=body.budget.model_dump(exclude_none=True),
        model="served",
    )


def check_request_options(options: dict[str, Any]) -> dict[str, Any]:
    """`options` as a request may give them: no server paths (`cache_dir`), sandbox
    limits within the server's maxima; a ConfigError (400) otherwise."""
    for name in SERVER_ONLY:
        if name in options:
            raise ConfigError(f"option {name!r} is the server's to set, not a request's")
    for name, most in SANDBOX_MAXIMA.items():
        value = options.get(name)
        if value is None:
            continue
        if isinstance(value, bool) or not isinstance(value, int | float) or not 0 < value <= most:
            raise ConfigError(f"option {name!r} must be a number above 0 and at most {most:g}")
    return options


async def solve(
    model: Model, body: SolveRequest, max_calls: int = MAX_SOLVE_CALLS
) -> SolveResponse | ErrorResponse:
    """Run the search; a bad request or a failing model becomes an ErrorResponse."""
    started = time.monotonic()
    try:
        spec = check_request(body, max_calls)
        # Building a space parses the problem: off the event loop, so that no request
        # can hold up the others (and /healthz) while it is read.
        setup = await asyncio.to_thread(build_app, spec.app, spec.problem, spec.strategy)
        options = {**setup.options, **spec.options}
        result = await search(
            setup.space, spec.strategy, model=model, budget=spec.make_budget(), **options
        )
    except IsolationUnavailable as exc:  # the server's machine, not the request
        return ErrorResponse.of("unavailable", str(exc), retryable=False)
    except ConfigError as exc:
        return ErrorResponse.of("invalid_request", str(exc), retryable=False)
    except (TypeError, ValueError) as exc:  # an option of the wrong type or range
        return ErrorResponse.of("invalid_request", f"bad options: {exc}", retryable=False)
    except ModelError as exc:
        return ErrorResponse.of("model_error", str(exc), retryable=True)
    summary = result.summary()
    return SolveResponse(
        app=spec.app,
        strategy=result.strategy,
        model=model.name,
        succeeded=summary["succeeded"],
        termination=str(summary["termination"]),
        answer=summary["answer"],
        path=summary["path"],
        calls=summary["calls"],
        tokens=summary["tokens"],
        expansions=summary["expansions"],
        nodes=summary["nodes"],
        seconds=round(time.monotonic() - started, 3),
        steering=summary["steering"],
    )


router = APIRouter()


@router.post(
    "/solve",
    response_model=SolveResponse,
    summary="Solve a problem with a guarded search",
    responses={
        400: {"model": ErrorResponse},
        502: {"model": ErrorResponse},
        503: {"model": ErrorResponse, "description": "The sandbox cannot run on this server"},
    },
)
async def solve_endpoint(body: SolveRequest, request: Request) -> Response:
    """Search a built-in app's problem (e.g. Game of 24) with the named strategy."""
    service = request.app.state.service
    model = await service.get_model()
    async with service.runs:
        result = await solve(model, body, service.max_solve_calls)
    if isinstance(result, ErrorResponse):
        return respond(result)
    return JSONResponse(result.model_dump(mode="json"))
