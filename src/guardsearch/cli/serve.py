"""`guardsearch serve`: the research service over HTTP (FastAPI + uvicorn)."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Annotated

import typer

from guardsearch.cli.durable_solve import executor_or_fail
from guardsearch.cli.options import Executor, PerEndpoint, RayAddress
from guardsearch.cli.output import fail
from guardsearch.core.errors import ConfigError

LOG_LEVELS = ("critical", "error", "warning", "info", "debug", "trace")


def serve(
    host: Annotated[str, typer.Option(help="Interface to bind.")] = "127.0.0.1",
    port: Annotated[int, typer.Option(min=1, max=65535, help="Port.")] = 8000,
    model: Annotated[str | None, typer.Option(help="Model spec (default: embedded).")] = None,
    search: Annotated[
        list[str] | None,
        typer.Option("--search", help="Search provider(s) in fallback order (default: corpus)."),
    ] = None,
    api_key: Annotated[
        list[str] | None,
        typer.Option(
            "--api-key",
            help="Accept this key (X-API-Key or Bearer); repeat for several keys "
            "(default: $GUARDSEARCH_API_KEY, comma-separated).",
        ),
    ] = None,
    api_key_file: Annotated[
        Path | None,
        typer.Option(
            help="Accept the keys in this file, one per line "
            "(default: $GUARDSEARCH_API_KEY_FILE). An async run is served to its key only.",
        ),
    ] = None,
    max_concurrent_runs: Annotated[int, typer.Option(min=1, help="Runs at once.")] = 64,
    store: Annotated[
        str | None,
        typer.Option(
            "--store",
            help="Run store the viewer at /ui shows: a SQLite file or postgresql:// URL "
            "(default $GUARDSEARCH_DB).",
        ),
    ] = None,
    allowed_host: Annotated[
        list[str] | None,
        typer.Option(
            "--allowed-host",
            help="Answer requests for this Host name too (repeatable; default: the loopback "
            "names and --host; also $GUARDSEARCH_ALLOWED_HOSTS; '*' turns the check off).",
        ),
    ] = None,
    log_level: Annotated[str, typer.Option(help="uvicorn log level.")] = "info",
    executor: Executor = "local",
    ray_address: RayAddress = None,
    per_endpoint: PerEndpoint = None,
) -> None:
    """Serve POST /run, /run-simple, /search, GET /runs/{id}, /metrics, /healthz, /docs,
    and the run viewer at /ui."""
    import uvicorn

    from guardsearch.server import create_app
    from guardsearch.server.hosts import JsonErrorsH11Protocol, default_hosts
    from guardsearch.store.open import default_store_url

    if log_level not in LOG_LEVELS:
        fail(f"unknown log level {log_level!r}; choose one of {', '.join(LOG_LEVELS)}")
    from guardsearch.runs.fleet import use_executor

    # Durable runs started or resumed from /ui execute here or on a Ray fleet.
    use_executor(executor_or_fail(executor, ray_address, per_endpoint))

    # Phase boundaries are JSON log lines on this logger (docs/research.md).
    handler = logging.StreamHandler()
    handler.setFormatter(logging.Formatter("%(asctime)s %(name)s %(message)s"))
    research_log = logging.getLogger("guardsearch.research")
    research_log.addHandler(handler)
    research_log.setLevel(logging.INFO)
    try:
        app = create_app(
            model_spec=model,
            provider_specs=search,
            api_key=api_key or None,
            api_key_file=api_key_file,
            max_concurrent_runs=max_concurrent_runs,
            run_store=store or default_store_url(),
            allowed_hosts=default_hosts(host, allowed_host or []),
        )
    except ConfigError as exc:
        fail(str(exc))
    shown = host if ":" not in host else f"[{host}]"
    typer.echo(f"run viewer: http://{shown}:{port}/ui", err=True)
    # An open viewer tab holds an event stream: on Ctrl+C wait for it a few seconds, not
    # until the tab is closed.
    if not app.state.keyed and host not in ("127.0.0.1", "::1", "localhost"):
        typer.echo(f"warning: no API key, and {host} is not loopback: whoever reaches it "
                   "is this server's one user (docs/security.md)", err=True)  # fmt: skip
    uvicorn.run(app, host=host, port=port, log_level=log_level, timeout_graceful_shutdown=5,
                http=JsonErrorsH11Protocol)  # fmt: skip
