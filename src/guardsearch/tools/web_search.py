"""SearxngProvider: a web search endpoint speaking SearxNG's JSON API.

`GET {base_url}/search?q=...&format=json` answers `{"results": [{"title", "url",
"content"}, ...]}`. Any SearxNG instance works, and so does anything that imitates it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import httpx

from guardsearch.core.source import Source
from guardsearch.tools.base import SearchError, TransientSearchError

_TRANSIENT_STATUS = {408, 425, 429, 500, 502, 503, 504}


@dataclass
class SearxngProvider:
    """Web search through a SearxNG-style JSON endpoint."""

    base_url: str
    timeout_s: float = 10.0
    language: str = "en"
    transport: httpx.AsyncBaseTransport | None = None
    headers: dict[str, str] | None = None

    @property
    def name(self) -> str:
        return f"searxng:{self.base_url}"

    async def search(self, query: str, k: int) -> list[Source]:
        url = self.base_url.rstrip("/") + "/search"
        params = {"q": query, "format": "json", "language": self.language}
        try:
            async with httpx.AsyncClient(
                timeout=self.timeout_s, transport=self.transport, headers=self.headers
            ) as client:
                response = await client.get(url, params=params)
        except (httpx.TimeoutException, httpx.TransportError) as exc:
            raise TransientSearchError(f"{url}: {type(exc).__name__}: {exc}") from exc
        if response.status_code in _TRANSIENT_STATUS:
            raise TransientSearchError(f"{url} answered HTTP {response.status_code}")
        if response.status_code >= 400:
            raise SearchError(f"{url} answered HTTP {response.status_code}: {response.text[:200]}")
        try:
            body: Any = response.json()
            results = body["results"]
            if not isinstance(results, list):
                raise TypeError("results is not a list")
        except (ValueError, KeyError, TypeError) as exc:
            raise SearchError(f"{url}: not a SearxNG JSON answer: {exc}") from exc
        hits: list[Source] = []
        for item in results:
            if not isinstance(item, dict):
                continue
            link = str(item.get("url") or "").strip()
            text = str(item.get("content") or "").strip()
            if not link or not text:
                continue  # a hit we cannot cite or quote is no source
            hits.append(
                Source(
                    title=str(item.get("title") or link).strip(),
                    location=link,
                    text=text,
                    provider=self.name,
                    kind="web",
                    rank=len(hits) + 1,
                    score=float(item.get("score") or 0.0),
                    attribution=str(item.get("engine") or ""),
                )
            )
            if len(hits) >= k:
                break
        return hits
