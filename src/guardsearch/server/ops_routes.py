"""GET /metrics (Prometheus) and GET /healthz (liveness, model, providers, version)."""

from __future__ import annotations

from fastapi import APIRouter, Request
from fastapi.responses import Response

from guardsearch.server.schemas import Health
from guardsearch.server.service import service_of

router = APIRouter()


@router.get("/metrics", summary="Prometheus metrics")
async def metrics(request: Request) -> Response:
    body, content_type = service_of(request).metrics.exposition()
    return Response(body, media_type=content_type)


@router.get("/healthz", response_model=Health, summary="Liveness")
async def healthz(request: Request) -> Health:
    from guardsearch import __version__

    service = service_of(request)
    model_name = (
        service.model.name
        if service.model is not None
        else (service.model_spec or "default (not loaded yet)")
    )
    providers = (
        [p.name for p in service.providers]
        if service.providers is not None
        else list(service.provider_specs or ["corpus"])
    )
    return Health(status="ok", model=model_name, providers=providers, version=__version__)
