"""The HTTP research service (FastAPI + uvicorn)."""

from guardsearch.server.app import create_app

__all__ = ["create_app"]
