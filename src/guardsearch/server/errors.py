"""One error shape for every answer of the service: `{"error": {"type", "message",
"retryable"}}` with its status, also for the framework's own errors (404, 405, a body
that is no JSON), and the OpenAPI document that says so."""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, Response
from starlette.exceptions import HTTPException

from guardsearch.loops.research.schemas import AgentResponse, ErrorResponse
from guardsearch.server.security import OPEN_PATHS

# How a run's error type maps to an HTTP status (the body is always the ErrorResponse).
STATUS = {
    "invalid_request": 400,
    "unauthorized": 401,
    "not_found": 404,
    "conflict": 409,
    "request_too_large": 413,
    "budget_exceeded": 422,
    "parse_error": 502,
    "guard_failed": 502,
    "unverified_answer": 502,
    "model_error": 502,
    "unavailable": 503,
    "timeout": 504,
}
# The error type of an HTTP error raised by the framework (no such path, wrong method).
HTTP_ERROR_TYPES = {400: "invalid_request", 404: "not_found", 405: "method_not_allowed"}

log = logging.getLogger("guardsearch.server")


def error_status(error: ErrorResponse) -> int:
    return STATUS.get(error.error.type, 500)


def respond(
    response: AgentResponse | ErrorResponse,
    status: int | None = None,
    headers: Mapping[str, str] | None = None,
) -> JSONResponse:
    """An AgentResponse (200) or an ErrorResponse with its status."""
    if isinstance(response, AgentResponse):
        return JSONResponse(response.model_dump(mode="json"))
    return JSONResponse(
        response.model_dump(mode="json", exclude_none=True),
        status_code=status or error_status(response),
        headers=headers,
    )


def error(kind: str, message: str, status: int | None = None) -> JSONResponse:
    """An error answer of `kind` (its status from STATUS unless given)."""
    return respond(ErrorResponse.of(kind, message, retryable=False), status)


def not_found(what: str = "run") -> JSONResponse:
    """The 404 of an unknown id, also for another key's: it says nothing of either."""
    return error("not_found", f"no such {what}", 404)


def problem(error: Mapping[str, Any]) -> str:
    """One validation problem as `where: what` (a body that is no JSON says so)."""
    where = ".".join(str(p) for p in error["loc"][1:]) or "body"
    if error.get("type") == "json_invalid":
        why = (error.get("ctx") or {}).get("error", "")
        return f"body is not valid JSON{f' ({why})' if why else ''}"
    return f"{where}: {error['msg']}"


def install_error_handlers(app: FastAPI) -> None:
    """Validation errors as 400, framework errors and bugs in the one shape."""

    @app.exception_handler(RequestValidationError)
    async def invalid(request: Request, exc: RequestValidationError) -> JSONResponse:
        problems = "; ".join(problem(e) for e in exc.errors()[:5])
        return error("invalid_request", problems or "invalid request", 400)

    @app.exception_handler(HTTPException)
    async def http_error(request: Request, exc: HTTPException) -> Response:
        kind = HTTP_ERROR_TYPES.get(exc.status_code, "http_error")
        answer = ErrorResponse.of(kind, str(exc.detail), retryable=False)
        return respond(answer, exc.status_code, headers=exc.headers)

    @app.exception_handler(Exception)
    async def internal(request: Request, exc: Exception) -> Response:
        # A bug must still answer in the documented shape, and say nothing of the server.
        log.error("internal error on %s %s", request.method, request.url.path, exc_info=exc)
        answer = ErrorResponse.of("internal_error", "internal server error", retryable=True)
        return respond(answer, 500)


def document_errors(app: FastAPI) -> None:
    """Make the OpenAPI document say what the service answers on errors: an
    ErrorResponse with 400 for an invalid request (FastAPI would document its own 422,
    which this service never sends), 401 without a key, 413 for a body too large."""
    build = app.openapi

    def openapi() -> dict[str, Any]:
        if app.openapi_schema is not None:
            return app.openapi_schema
        schema = build()
        ref = {"$ref": "#/components/schemas/ErrorResponse"}
        answers = {
            "400": "Invalid request",
            "401": "Missing or wrong API key (when the server has keys)",
            "413": "Request body too large",
        }
        for path, operations in schema.get("paths", {}).items():
            for operation in operations.values():
                responses = operation.setdefault("responses", {})
                if "HTTPValidationError" in json.dumps(responses.get("422", "")):
                    del responses["422"]
                if path in OPEN_PATHS:
                    continue
                for code, what in answers.items():
                    responses.setdefault(
                        code,
                        {"description": what, "content": {"application/json": {"schema": ref}}},
                    )
        for unused in ("HTTPValidationError", "ValidationError"):
            schema.get("components", {}).get("schemas", {}).pop(unused, None)
        app.openapi_schema = schema
        return schema

    app.openapi = openapi  # type: ignore[method-assign]
