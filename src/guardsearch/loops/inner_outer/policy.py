"""The inner probe policy (docs/probe.md): initialize / decide / is_stable / apply, no model.

`ProbePolicy` is the protocol. `BandProbePolicy` implements the parts every query
domain shares and leaves three moves to a subclass (`narrow`, `broaden`, `lateral`):

- decide: too many hits -> narrowing variants, too few -> broadening variants, in
  band -> lateral variants; the current query always joins the beam (memoised, free);
  the beam is probed in *one* merged call by the runner;
- apply: every variant gets a fitness = mean weighted score of its top hits minus a
  penalty for its distance from the band; the fittest becomes the current query; the
  band learns the count (EMA); a result hash already seen from another query means
  the loop came back (oscillation); no fitness gain counts towards a plateau;
- is_stable: the count is in the band and agrees with the previous reading (one
  in-band reading is enough in conservative mode).

Conservative mode (the outer budget is low): a beam of one and a widened band, so
the loop settles sooner.
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Sequence
from dataclasses import dataclass, field, replace
from typing import Literal, Protocol

from guardsearch.core.errors import ConfigError
from guardsearch.core.source import Source
from guardsearch.loops.inner_outer.band import AdaptiveBand
from guardsearch.loops.inner_outer.plan import Observation, ProbePlan
from guardsearch.loops.inner_outer.scoring import ScoreContext, WeightedScorer

Move = Literal["start", "narrow", "broaden", "lateral", "stop"]


@dataclass(frozen=True, kw_only=True)
class ProbeAction:
    move: Move
    variants: tuple[Hashable, ...] = ()
    note: str = ""


@dataclass(frozen=True, kw_only=True)
class ProbeState:
    plan: ProbePlan
    query: Hashable
    band: AdaptiveBand
    count: int | None = None
    previous_count: int | None = None
    step: int = 0
    conservative: bool = False
    oscillating: bool = False
    best_fitness: float = -math.inf
    stale_steps: int = 0
    seen: tuple[tuple[str, str, int], ...] = ()  # (result hash, query key, count)
    collected: tuple[Source, ...] = ()
    last: Observation | None = None


class ProbePolicy(Protocol):
    def normalise(self, query: Hashable) -> str: ...

    def initialize(self, plan: ProbePlan, *, conservative: bool = False) -> ProbeState: ...

    def decide(self, state: ProbeState) -> ProbeAction: ...

    def is_stable(self, state: ProbeState) -> bool: ...

    def apply(
        self, state: ProbeState, action: ProbeAction, observations: Sequence[Observation]
    ) -> ProbeState: ...


@dataclass(frozen=True, kw_only=True)
class PolicySettings:
    beam_width: int = 3
    band: AdaptiveBand = field(default_factory=AdaptiveBand)
    band_penalty: float = 0.25
    plateau_eps: float = 0.01
    conservative_widen: float = 1.5

    def __post_init__(self) -> None:
        if self.beam_width < 1:
            raise ConfigError(f"beam_width must be >= 1, got {self.beam_width}")


class BandProbePolicy:
    """The shared machinery; subclasses say how to build and vary queries."""

    def __init__(
        self, settings: PolicySettings | None = None, scorer: WeightedScorer | None = None
    ) -> None:
        self.settings = settings or PolicySettings()
        self.scorer = scorer or WeightedScorer()

    # -- what a query domain supplies --------------------------------------------------

    def normalise(self, query: Hashable) -> str:
        raise NotImplementedError

    def initial_query(self, plan: ProbePlan) -> Hashable:
        raise NotImplementedError

    def start(self, state: ProbeState) -> list[Hashable]:
        return []

    def narrow(self, state: ProbeState) -> list[Hashable]:
        raise NotImplementedError

    def broaden(self, state: ProbeState) -> list[Hashable]:
        raise NotImplementedError

    def lateral(self, state: ProbeState) -> list[Hashable]:
        return self.narrow(state)

    # -- the protocol ------------------------------------------------------------------

    def initialize(self, plan: ProbePlan, *, conservative: bool = False) -> ProbeState:
        band = self.settings.band
        if plan.band is not None:
            band = replace(band, lo=plan.band[0], hi=plan.band[1])
        if conservative:
            band = band.widened(self.settings.conservative_widen)
        return ProbeState(
            plan=plan, query=self.initial_query(plan), band=band, conservative=conservative
        )

    def width(self, state: ProbeState) -> int:
        return 1 if state.conservative else self.settings.beam_width

    def decide(self, state: ProbeState) -> ProbeAction:
        if state.count is None:
            move: Move = "start"
            others = self.start(state)
            note = "first probe"
        elif state.count > state.band.hi:
            move, others = "narrow", self.narrow(state)
            note = f"too many hits ({state.count} > {state.band.hi:g})"
        elif not state.band.contains(state.count):
            move, others = "broaden", self.broaden(state)
            note = f"too few hits ({state.count} < {max(state.band.lo, 1):g})"
        else:
            move, others = "lateral", self.lateral(state)
            note = f"in band ({state.count}); confirm or improve"
        current = self.normalise(state.query)
        fresh: dict[str, Hashable] = {}
        for variant in others:
            key = self.normalise(variant)
            if key != current:
                fresh.setdefault(key, variant)
        variants = (state.query, *list(fresh.values())[: self.width(state)])
        return ProbeAction(move=move, variants=variants, note=note)

    def is_stable(self, state: ProbeState) -> bool:
        if state.count is None or not state.band.contains(state.count):
            return False
        return state.conservative or state.band.agrees(state.count, state.previous_count)

    def context(self, plan: ProbePlan) -> ScoreContext:
        return ScoreContext.of(plan.topic, plan.kind)

    def fitness(self, state: ProbeState, observation: Observation) -> float:
        quality = self.scorer.mean(observation.hits, self.context(state.plan))
        return quality - self.settings.band_penalty * state.band.distance(observation.count)

    def apply(
        self, state: ProbeState, action: ProbeAction, observations: Sequence[Observation]
    ) -> ProbeState:
        if not observations:
            raise ConfigError("apply needs at least one observation")
        scored = [(self.fitness(state, o), -i, o) for i, o in enumerate(observations)]
        fit, _, chosen = max(scored, key=lambda t: (t[0], t[1]))
        current = self.normalise(state.query)
        earlier = {h for h, key, _ in state.seen if key != chosen.key}
        oscillating = chosen.key != current and chosen.result_hash in earlier
        improved = fit > state.best_fitness + self.settings.plateau_eps
        band = state.band.observe(chosen.count)
        collected = state.collected
        if chosen.count <= band.hi:
            known = {h.key for h in collected}
            collected = collected + tuple(h for h in chosen.hits if h.key not in known)
        return replace(
            state,
            query=chosen.query,
            band=band,
            count=chosen.count,
            previous_count=state.count,
            step=state.step + 1,
            oscillating=oscillating,
            best_fitness=max(fit, state.best_fitness),
            stale_steps=0 if improved else state.stale_steps + 1,
            seen=(*state.seen, (chosen.result_hash, chosen.key, chosen.count)),
            collected=collected,
            last=chosen,
        )
