"""Test doubles for the inner/outer loop: a table prober and scripted planner answers."""

from __future__ import annotations

import json
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass, field

from guardsearch.apps.probe.query import ProbeQuery
from guardsearch.core.messages import ModelRequest
from guardsearch.core.source import Source
from guardsearch.loops.inner_outer import Observation


@dataclass
class TableProber:
    """Counts come from `count(query)`; hits are `same(query)`-named ids, so two queries
    with the same `same` value return identical results (to script oscillation)."""

    count: Callable[[ProbeQuery], int]
    same: Callable[[ProbeQuery], str] = lambda q: q.key()
    calls: int = 0
    batches: list[list[str]] = field(default_factory=list)

    async def probe(self, queries: Sequence[Hashable], keys: Sequence[str]) -> list[Observation]:
        self.calls += 1
        self.batches.append(list(keys))
        out = []
        for query, key in zip(queries, keys, strict=True):
            assert isinstance(query, ProbeQuery)
            n = self.count(query)
            tag = self.same(query)
            hits = tuple(
                Source(id=f"{tag}#{i}", title=f"{tag} {i}", description=" ".join(query.words()))
                for i in range(min(n, 10))
            )
            out.append(Observation(query=query, key=key, count=n, hits=hits))
        return out


def planner_answers(
    pool: Sequence[str] = ("extra",), kind: str = "thing", satisfied: bool = True
) -> Callable[[ModelRequest], str]:
    replans = iter(range(1, 100))

    def answer(request: ModelRequest) -> str:
        schema = json.dumps(request.json_schema or {})
        if "satisfied" in schema:
            return json.dumps({"satisfied": satisfied, "reason": "checked"})
        if "stuck" in request.messages[0].content:
            n = next(replans)
            return json.dumps({"keywords": ["alpha"], "extra": [f"new{n}"], "kind": f"other{n}"})
        return json.dumps({"keywords": ["alpha"], "extra": list(pool), "kind": kind})

    return answer
