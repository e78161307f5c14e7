"""Provider specs: one string names a search provider (CLI, HTTP, configuration).

corpus                 every offline corpus (the embedded Wikipedia and the user's own)
corpus:NAME            one named corpus
searxng:URL            a SearxNG-style JSON endpoint, e.g. searxng:http://127.0.0.1:8888
"""

from __future__ import annotations

from collections.abc import Sequence

from guardsearch.core.errors import ConfigError
from guardsearch.tools.base import SearchError, SearchProvider

DEFAULT_PROVIDERS = ("corpus",)


def provider_from_spec(spec: str) -> SearchProvider:
    kind, _, rest = spec.strip().partition(":")
    if kind == "corpus":
        from guardsearch.tools.corpus_search import CorpusProvider

        try:
            return CorpusProvider(corpus=rest or None)
        except SearchError as exc:
            raise ConfigError(str(exc)) from exc
    if kind in ("searxng", "web"):
        if not rest.startswith(("http://", "https://")):
            raise ConfigError(f"searxng spec needs a URL: searxng:http://host:port, got {spec!r}")
        from guardsearch.tools.web_search import SearxngProvider

        return SearxngProvider(base_url=rest)
    raise ConfigError(f"unknown search provider {spec!r}; use corpus, corpus:NAME or searxng:URL")


def providers_from_specs(specs: Sequence[str] | None) -> list[SearchProvider]:
    """Providers in fallback order (the first is primary)."""
    return [provider_from_spec(s) for s in (specs or DEFAULT_PROVIDERS)]
