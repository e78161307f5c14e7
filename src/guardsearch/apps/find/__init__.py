"""The `find` app: items of one type that match a condition, from the embedded corpus,
run as a plan/act/review loop (loops/review) with a rules-then-judge verifier."""

from __future__ import annotations

from pathlib import Path

from guardsearch.apps.find.task import FindTask
from guardsearch.core.budget import BudgetLike
from guardsearch.core.events import Trace
from guardsearch.loops.review import RefinementHistory, ReviewConfig, ReviewRun, review
from guardsearch.loops.review.config import DEFAULT_BUDGET_CALLS
from guardsearch.loops.review.history_file import open_history, save_history
from guardsearch.models.base import Model
from guardsearch.tools.base import SearchProvider


async def find(
    request: str,
    *,
    model: Model,
    provider: SearchProvider | None = None,
    budget: BudgetLike = DEFAULT_BUDGET_CALLS,
    min_items: int = 3,
    config: ReviewConfig | None = None,
    use_judge: bool = True,
    trace: Trace | None = None,
    history: str | Path | RefinementHistory | None = None,
) -> ReviewRun:
    """Find at least `min_items` verified items for `request` (e.g. "paintings by ...")
    within `budget` (anything `Budget.of` takes; 40 model calls), in `provider` (default:
    the offline corpus). `history` is as in `review()`: a JSON file or a shared
    `RefinementHistory`.
    """
    shared, path = open_history(history)  # a broken file fails before the corpus opens
    if provider is None:
        from guardsearch.tools.corpus_search import CorpusProvider

        provider = CorpusProvider()
    task = FindTask(provider, min_items=min_items, use_judge=use_judge)
    run = await review(
        request,
        task,
        model=model,
        budget=budget,
        trace=trace,
        config=config or ReviewConfig(min_items=min_items),
        history=shared,
        min_items=min_items,
    )
    if path is not None:
        save_history(shared, path, run=run.history_run)
    return run


__all__ = ["FindTask", "find"]
