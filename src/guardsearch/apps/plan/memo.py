"""MemoModel: a repeated request is answered from memory instead of the model again.

Seeded runs are deterministic, so two pipelines that start the same way (`full` and
`search` share their first four calls, `search` and `search-blind` every call up to
their first failure) ask identical requests. The memo pays for each distinct request
once; the answer comes back with its original usage, so budgets, call counts and
token figures are what they would have been without it (only wall time differs).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from guardsearch.core.messages import Completion, ModelRequest
from guardsearch.models.base import Model, estimate_prompt_tokens


@dataclass
class MemoModel:
    """Wraps `model`; `hits` counts answers served from memory."""

    model: Model
    answers: dict[str, Completion] = field(default_factory=dict)
    hits: int = 0

    @property
    def name(self) -> str:
        return self.model.name

    def count_tokens(self, request: ModelRequest) -> int:
        return estimate_prompt_tokens(self.model, request)

    async def complete(self, request: ModelRequest) -> Completion:
        key = request.digest()
        found = self.answers.get(key)
        if found is not None:
            self.hits += 1
            return found
        completion = await self.model.complete(request)
        self.answers[key] = completion
        return completion
