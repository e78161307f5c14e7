"""ResearchState: the loop's one state object, immutable.

Every transition returns a new state, so the invariants can be checked by comparing
before and after (`check_transition`):

- `search_results`, `citations`, `compacted`, `error_log`, `failed_queries` and
  `queries_run` only grow, and what was there stays in place with the same id
  (compaction may shorten a result's text, never drop or renumber it);
- `iteration` moves by exactly one, and only through `next_iteration()`;
- a citation's id is always one of the retrieved results' ids.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass, replace
from typing import Any

from guardsearch.core.errors import RunError
from guardsearch.core.source import Source
from guardsearch.corpus.query import terms
from guardsearch.tools.resilient import QueryOutcome

# A query "failed" for reformulation purposes when it errored or found fewer than
# this many results.
FEW_RESULTS = 3
_RRF_K = 60


@dataclass(frozen=True, kw_only=True)
class Query:
    query: str
    intent: str = ""


@dataclass(frozen=True, kw_only=True)
class QueryRecord:
    """One query as run: which results it returned (by id, in rank order), or why not."""

    query: str
    iteration: int
    ids: tuple[str, ...] = ()
    hits: int = 0
    provider: str | None = None
    error: str | None = None
    reformulated_as: str | None = None
    skipped: bool = False


@dataclass(frozen=True, kw_only=True)
class ErrorRecord:
    """Something that went wrong and was handled (kept for observability).

    `what` names the handling (retry, provider_failed, fallback, reformulate,
    circuit_open, provider_circuit_open, removed) and `tier` its error tier (tools/resilient.py).
    """

    phase: str
    error: str
    attempt: int | None = None
    query: str | None = None
    provider: str | None = None
    what: str | None = None
    tier: int | None = None


@dataclass(frozen=True, kw_only=True)
class CitationRecord:
    id: str
    title: str
    type: str
    location: str


@dataclass(frozen=True, kw_only=True)
class ResearchState:
    task: str
    max_iters: int
    max_queries: int = 10
    max_sources: int = 15
    tier: str = "standard"
    plan_queries: tuple[Query, ...] = ()
    search_results: tuple[Source, ...] = ()
    citations: tuple[CitationRecord, ...] = ()
    iteration: int = 0
    sufficient: bool = False
    confidence: float = 0.0
    gaps: tuple[str, ...] = ()
    failed_queries: tuple[str, ...] = ()
    error_log: tuple[ErrorRecord, ...] = ()
    queries_run: tuple[QueryRecord, ...] = ()
    degraded_mode: bool = False
    insufficient_termination: bool = False
    compactions: int = 0
    compacted: tuple[str, ...] = ()  # ids of the results whose text is a summary

    # -- transitions -----------------------------------------------------------------

    def with_limits(
        self, *, tier: str, max_iters: int, max_queries: int, max_sources: int
    ) -> ResearchState:
        return replace(
            self, tier=tier, max_iters=max_iters, max_queries=max_queries, max_sources=max_sources
        )

    def with_queries(self, queries: Iterable[Query]) -> ResearchState:
        """The queries for the next search: new ones only, trimmed. A query is new when
        its content words are (the search ranks by them: the same words in another
        order or case, or with other stopwords, retrieve the same), so no query runs
        twice and a planner repeating the task's words costs no search."""
        done = {_norm(r.query) for r in self.queries_run}
        chosen: dict[str, Query] = {}
        for q in queries:
            key = _norm(q.query)
            if key and key not in done and key not in chosen:
                chosen[key] = q
        return replace(self, plan_queries=tuple(chosen.values())[: self.max_queries])

    def with_search(self, outcomes: Sequence[QueryOutcome]) -> ResearchState:
        """Append this iteration's new sources (at most `max_sources`), records, failures.

        New sources are taken rank by rank across the queries (every query's best hit
        before any query's second), so the cap never lets one query crowd out the rest.
        """
        by_location = {r.location: r for r in self.search_results}
        results = list(self.search_results)
        added = 0
        depth = max((len(o.hits) for o in outcomes), default=0)
        ordered = [_titled_first(o.query, o.hits) for o in outcomes]
        for rank in range(depth):
            for outcome, hits in zip(outcomes, ordered, strict=True):
                if rank >= len(hits) or added >= self.max_sources:
                    continue
                hit = hits[rank]
                if hit.location in by_location:
                    continue
                source = replace(hit, id=f"[{len(results) + 1}]", query=outcome.query)
                results.append(source)
                by_location[hit.location] = source
                added += 1
        records = list(self.queries_run)
        failed = list(self.failed_queries)
        errors = list(self.error_log)
        for outcome in outcomes:
            ids = tuple(
                by_location[h.location].id for h in outcome.hits if h.location in by_location
            )
            records.append(
                QueryRecord(
                    query=outcome.query,
                    iteration=self.iteration + 1,
                    ids=ids,
                    hits=len(outcome.hits),
                    provider=outcome.provider,
                    error=outcome.error,
                    reformulated_as=outcome.reformulated_as,
                    skipped=outcome.skipped,
                )
            )
            if (outcome.failed or len(outcome.hits) < FEW_RESULTS) and outcome.query not in failed:
                failed.append(outcome.query)
            errors += [
                ErrorRecord(
                    phase="search",
                    error=f.error,
                    attempt=f.attempt,
                    query=outcome.query,
                    provider=f.provider,
                    what=f.what,
                    tier=f.tier,
                )
                for f in outcome.faults
            ]
            errors += [
                ErrorRecord(
                    phase="search",
                    error=n.detail,
                    query=outcome.query,
                    provider=n.provider,
                    what=n.what,
                    tier=n.tier,
                )
                for n in outcome.notes
            ]
            if outcome.skipped:
                errors.append(
                    ErrorRecord(
                        phase="search", error=outcome.error or "skipped", query=outcome.query
                    )
                )
        return replace(
            self,
            search_results=tuple(results),
            queries_run=tuple(records),
            failed_queries=tuple(failed),
            error_log=tuple(errors),
        )

    def with_reflection(
        self, *, sufficient: bool, confidence: float, gaps: Sequence[str]
    ) -> ResearchState:
        return replace(self, sufficient=sufficient, confidence=confidence, gaps=tuple(gaps))

    def next_iteration(self) -> ResearchState:
        return replace(self, iteration=self.iteration + 1)

    def with_error(self, phase: str, error: str, **where: Any) -> ResearchState:
        return replace(
            self, error_log=(*self.error_log, ErrorRecord(phase=phase, error=error, **where))
        )

    def degraded(self) -> ResearchState:
        return replace(self, degraded_mode=True)

    def terminated(self, insufficient: bool) -> ResearchState:
        return replace(self, insufficient_termination=insufficient)

    def with_compaction(self, summaries: dict[str, str]) -> ResearchState:
        """Replace the text of the results in `summaries` by their summary (ids stay)."""
        results = tuple(
            replace(r, text=summaries[r.id]) if r.id in summaries else r
            for r in self.search_results
        )
        fresh = tuple(r.id for r in self.search_results if r.id in summaries)
        return replace(
            self,
            search_results=results,
            compactions=self.compactions + 1,
            compacted=(*self.compacted, *(i for i in fresh if i not in self.compacted)),
        )

    def with_citations(self, citations: Iterable[CitationRecord]) -> ResearchState:
        known = {r.id for r in self.search_results}
        have = {c.id for c in self.citations}
        new = []
        for c in citations:
            if c.id not in known:
                raise RunError(f"citation {c.id} is not a retrieved source")
            if c.id not in have:
                new.append(c)
                have.add(c.id)
        return replace(self, citations=(*self.citations, *new))

    # -- views -----------------------------------------------------------------------

    def result(self, source_id: str) -> Source | None:
        return next((r for r in self.search_results if r.id == source_id), None)

    def ranked(self) -> list[Source]:
        """Results best first by reciprocal rank fusion over every query that found them:
        a source several queries rank high is more likely the one the task is about."""
        score: dict[str, float] = {}
        for record in self.queries_run:
            for rank, source_id in enumerate(record.ids, 1):
                score[source_id] = score.get(source_id, 0.0) + 1.0 / (_RRF_K + rank)
        order = {r.id: i for i, r in enumerate(self.search_results)}
        return sorted(self.search_results, key=lambda r: (-score.get(r.id, 0.0), order[r.id]))

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)

    def approx_tokens(self) -> int:
        """Rough size of the serialised state (4 characters per token)."""
        return len(json.dumps(self.as_dict(), ensure_ascii=False)) // 4


def _titled_first(query: str, hits: Sequence[Source]) -> list[Source]:
    """The hits whose title, without its disambiguation, holds every word of the query
    first: a name searched alone ("Beethoven") finds the article about it ("Ludwig van
    Beethoven") before the works titled after it ("Symphony No. 3 (Beethoven)"), so
    the iteration's cap keeps it."""
    words = set(terms(query))

    def titled(hit: Source) -> bool:
        bare = re.sub(r"\s*\([^)]*\)$", "", hit.title)
        return bool(words) and words <= set(terms(bare))

    return sorted(hits, key=lambda hit: not titled(hit))


def _norm(query: str) -> str:
    """What a query retrieves by: its content words as a sorted set (its lower-cased
    words when it has none, "who is it?")."""
    words = terms(query)
    return " ".join(sorted(words)) if words else " ".join(query.lower().split())


def check_transition(before: ResearchState, after: ResearchState) -> None:
    """Raise RunError if `after` breaks an invariant of `before` (see module docstring)."""
    problems = []
    if after.task != before.task:
        problems.append("task changed")
    if after.iteration not in (before.iteration, before.iteration + 1):
        problems.append(f"iteration jumped {before.iteration} -> {after.iteration}")
    old = [(r.id, r.location) for r in before.search_results]
    new = [(r.id, r.location) for r in after.search_results]
    if new[: len(old)] != old:
        problems.append("search_results were removed or renumbered")
    for name in ("citations", "compacted", "error_log", "failed_queries", "queries_run"):
        a, b = getattr(before, name), getattr(after, name)
        if tuple(b[: len(a)]) != tuple(a):
            problems.append(f"{name} is not append-only")
    ids = {r.id for r in after.search_results}
    if any(c.id not in ids for c in after.citations):
        problems.append("a citation is not a retrieved source")
    if problems:
        raise RunError("research state invariant broken: " + "; ".join(problems))
