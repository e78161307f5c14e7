"""CorpusProbePolicy: how a ProbeQuery is narrowed, broadened and varied (no model).

- start: the topic's terms AND-ed, plus (beam) the same with the planner's `kind`
  required in the article description, and the terms OR-ed;
- narrow (too many hits): require the kind in the description, move a term into the
  description filter, add a planner pool term, turn the OR group into AND;
- broaden (too few): drop a description filter, drop the last required term, OR the
  required terms, drop an exclusion;
- lateral (in band): narrowing moves too; the band penalty keeps the loop in band.
All moves are ordered deterministically, so the same plan always probes the same way.
"""

from __future__ import annotations

from collections.abc import Hashable
from dataclasses import replace

from guardsearch.apps.probe.query import ProbeQuery, clean
from guardsearch.core.errors import ConfigError
from guardsearch.loops.inner_outer.plan import ProbePlan
from guardsearch.loops.inner_outer.policy import BandProbePolicy, ProbeState


def _query(state: ProbeState) -> ProbeQuery:
    if not isinstance(state.query, ProbeQuery):
        raise ConfigError("CorpusProbePolicy works on ProbeQuery states")
    return state.query


class CorpusProbePolicy(BandProbePolicy):
    def normalise(self, query: Hashable) -> str:
        if not isinstance(query, ProbeQuery):
            raise ConfigError(f"not a ProbeQuery: {query!r}")
        return query.key()

    def initial_query(self, plan: ProbePlan) -> ProbeQuery:
        return ProbeQuery(must=plan.terms)

    def start(self, state: ProbeState) -> list[Hashable]:
        q = _query(state)
        kind = clean(state.plan.kind)
        out: list[Hashable] = []
        if kind:
            out.append(replace(q, described=(*q.described, kind)))
        if len(q.must) > 1:
            out.append(ProbeQuery(any_of=q.must, described=q.described))
        return out

    def narrow(self, state: ProbeState) -> list[Hashable]:
        q = _query(state)
        out: list[Hashable] = []
        kind = clean(state.plan.kind)
        if kind and kind not in q.described:
            out.append(replace(q, described=(*q.described, kind)))
        for term in q.must:
            if term not in q.described:
                rest = tuple(t for t in q.must if t != term)
                if rest or q.any_of:
                    out.append(replace(q, must=rest, described=(*q.described, term)))
        used = set(q.words())
        for term in state.plan.pool:
            c = clean(term)
            if c and c not in used:
                out.append(replace(q, must=(*q.must, c)))
        if q.any_of:
            out.append(replace(q, must=(*q.must, *q.any_of), any_of=()))
        return out

    def broaden(self, state: ProbeState) -> list[Hashable]:
        q = _query(state)
        out: list[Hashable] = []
        for term in q.described:
            rest = tuple(t for t in q.described if t != term)
            if q.must or q.any_of or rest:
                out.append(replace(q, described=rest))
        if len(q.must) > 1:
            out.append(replace(q, must=q.must[:-1]))
            out.append(replace(q, must=(), any_of=(*q.any_of, *q.must)))
        if q.exclude:
            out.append(replace(q, exclude=()))
        return out
