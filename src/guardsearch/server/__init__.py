"""The HTTP research service (FastAPI + uvicorn)."""

from guardsearch.server.app import create_app, error_status

__all__ = ["create_app", "error_status"]
