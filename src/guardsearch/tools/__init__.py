"""Search tools: providers (offline corpus, SearxNG-style web) and the resilience tiers."""

from guardsearch.tools.base import SearchError, SearchProvider, TransientSearchError
from guardsearch.tools.breaker import CircuitBreaker
from guardsearch.tools.corpus_search import CorpusProvider
from guardsearch.tools.reformulate import broaden
from guardsearch.tools.resilient import QueryOutcome, ResilienceSettings, ResilientSearch
from guardsearch.tools.retry import Backoff, search_with_retry
from guardsearch.tools.spec import provider_from_spec
from guardsearch.tools.web_search import SearxngProvider

__all__ = [
    "Backoff",
    "CircuitBreaker",
    "CorpusProvider",
    "QueryOutcome",
    "ResilienceSettings",
    "ResilientSearch",
    "SearchError",
    "SearchProvider",
    "SearxngProvider",
    "TransientSearchError",
    "broaden",
    "provider_from_spec",
    "search_with_retry",
]
