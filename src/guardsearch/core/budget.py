"""Budgets: small composable limits, checked *before* each expensive call.

`Budget.of` is the one way numbers become a budget; it takes what httpx's `Timeout`
takes in spirit: a number, keywords, a limit, or a budget (returned as it is)::

    Budget.of(30)                                      # 30 model calls
    Budget.of(calls=30, tokens=50_000, seconds=120)    # any of calls, tokens, seconds, cost
    Budget.of(max_calls(30) | my_limit)                # composite limits combine with |
    Budget.of(existing)                                # the same ledger, shared

Every model call goes reserve -> execute -> reconcile: `reserve()` books an upper
bound of what the call may cost (prompt estimate + the completion tokens it is
allowed) and raises `BudgetExceeded` if that could break a limit; `reconcile()`
swaps the reservation for what the call really used. Because reservations are
counted against the limits too, concurrent calls can never overrun a limit.
"""

from __future__ import annotations

import itertools
import math
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, fields
from typing import TypeAlias

from guardsearch.core.errors import BudgetExceeded, ConfigError
from guardsearch.core.usage import ZERO, Usage


@dataclass(frozen=True, kw_only=True)
class BudgetState:
    """What a limit sees: usage so far, outstanding reservations, elapsed seconds."""

    used: Usage
    reserved: Usage
    elapsed_s: float

    @property
    def committed(self) -> Usage:
        return self.used + self.reserved


class Limit:
    """A limit says why `pending` on top of `state` would break it (or None if fine)."""

    name = "limit"

    def violation(self, state: BudgetState, pending: Usage) -> str | None:
        raise NotImplementedError

    def token_headroom(self, state: BudgetState) -> int | None:
        """Tokens still available under this limit, or None if it does not limit tokens."""
        return None

    def __or__(self, other: Limit | LimitFn) -> Limit:
        return AnyLimit((self, as_limit(other)))

    def __ror__(self, other: LimitFn) -> Limit:
        return AnyLimit((as_limit(other), self))

    def __repr__(self) -> str:
        return self.name


LimitFn = Callable[[BudgetState, Usage], "str | bool | None"]


@dataclass(frozen=True, repr=False)
class AnyLimit(Limit):
    """Broken as soon as any member is broken (`a | b`)."""

    members: tuple[Limit, ...]

    @property
    def name(self) -> str:  # type: ignore[override]
        return " | ".join(m.name for m in self.members)

    def violation(self, state: BudgetState, pending: Usage) -> str | None:
        for member in self.members:
            reason = member.violation(state, pending)
            if reason:
                return reason
        return None

    def token_headroom(self, state: BudgetState) -> int | None:
        rooms = [r for m in self.members if (r := m.token_headroom(state)) is not None]
        return min(rooms) if rooms else None

    def __or__(self, other: Limit | LimitFn) -> Limit:
        return AnyLimit((*self.members, as_limit(other)))


@dataclass(frozen=True, repr=False)
class FunctionLimit(Limit):
    """A plain callable `(state, pending) -> reason | True | None` used as a limit."""

    fn: LimitFn
    name: str = "custom"

    def violation(self, state: BudgetState, pending: Usage) -> str | None:
        verdict = self.fn(state, pending)
        if verdict is True:
            return f"{self.name} limit reached"
        return verdict or None


def as_limit(value: Limit | LimitFn) -> Limit:
    if isinstance(value, Limit):
        return value
    if callable(value):
        return FunctionLimit(value, getattr(value, "__name__", "custom"))
    raise ConfigError(f"not a budget limit: {value!r}")


@dataclass(frozen=True, repr=False)
class _MaxCalls(Limit):
    n: int

    @property
    def name(self) -> str:  # type: ignore[override]
        return f"max_calls({self.n})"

    def violation(self, state: BudgetState, pending: Usage) -> str | None:
        if state.committed.calls + pending.calls > self.n:
            return f"call limit {self.n} reached"
        return None


@dataclass(frozen=True, repr=False)
class _MaxTokens(Limit):
    n: int

    @property
    def name(self) -> str:  # type: ignore[override]
        return f"max_tokens({self.n})"

    def violation(self, state: BudgetState, pending: Usage) -> str | None:
        if state.committed.total_tokens + pending.total_tokens > self.n:
            return f"token limit {self.n} reached"
        return None

    def token_headroom(self, state: BudgetState) -> int | None:
        return max(0, self.n - state.committed.total_tokens)


@dataclass(frozen=True, repr=False)
class _MaxCost(Limit):
    dollars: float

    @property
    def name(self) -> str:  # type: ignore[override]
        return f"max_cost({self.dollars})"

    def violation(self, state: BudgetState, pending: Usage) -> str | None:
        if state.committed.cost + pending.cost > self.dollars + 1e-12:
            return f"cost limit ${self.dollars} reached"
        return None


@dataclass(frozen=True, repr=False)
class _Deadline(Limit):
    seconds: float

    @property
    def name(self) -> str:  # type: ignore[override]
        return f"deadline({self.seconds})"

    def violation(self, state: BudgetState, pending: Usage) -> str | None:
        if state.elapsed_s >= self.seconds:
            return f"deadline of {self.seconds}s passed"
        return None


def _positive(value: float, what: str) -> None:
    if value < 0:
        raise ConfigError(f"{what} must be >= 0, got {value}")


def max_calls(n: int) -> Limit:
    """At most `n` model calls."""
    _positive(n, "max_calls")
    return _MaxCalls(n)


def max_tokens(n: int) -> Limit:
    """At most `n` prompt + completion tokens."""
    _positive(n, "max_tokens")
    return _MaxTokens(n)


def max_cost(dollars: float) -> Limit:
    """At most `dollars` of model cost (for backends that price their calls)."""
    _positive(dollars, "max_cost")
    return _MaxCost(dollars)


def deadline(seconds: float) -> Limit:
    """No new model call after `seconds` of wall time since the budget started."""
    _positive(seconds, "deadline")
    return _Deadline(seconds)


@dataclass(frozen=True, kw_only=True)
class Allowance:
    """Amounts of the four budgeted resources; None means not limited."""

    calls: int | None = None
    tokens: int | None = None
    seconds: float | None = None
    cost: float | None = None

    def as_dict(self) -> dict[str, float | None]:
        return {f.name: getattr(self, f.name) for f in fields(self)}


# Which limit type stands for which Allowance field, and how to build it.
_CAPS: dict[str, tuple[type[Limit], Callable[..., Limit]]] = {
    "calls": (_MaxCalls, max_calls),
    "tokens": (_MaxTokens, max_tokens),
    "seconds": (_Deadline, deadline),
    "cost": (_MaxCost, max_cost),
}


def _members(limit: Limit | None) -> list[Limit]:
    if limit is None:
        return []
    return list(limit.members) if isinstance(limit, AnyLimit) else [limit]


def _cap_value(limit: Limit) -> float:
    if isinstance(limit, _MaxCalls | _MaxTokens):
        return limit.n
    if isinstance(limit, _MaxCost):
        return limit.dollars
    assert isinstance(limit, _Deadline)
    return limit.seconds


def _checked(name: str, value: object) -> int | float:
    """A cap as given by a user: a number >= 0 (a whole one for calls and tokens)."""
    whole = name in ("calls", "tokens")
    if isinstance(value, bool) or not isinstance(value, int | float) or math.isnan(value):
        raise ConfigError(f"budget {name} must be a number >= 0, got {value!r}")
    if value < 0:
        raise ConfigError(f"budget {name} must be >= 0, got {value!r}")
    if whole and not float(value).is_integer():
        raise ConfigError(f"budget {name} must be a whole number, got {value!r}")
    return int(value) if whole else value


def _with_caps(limit: Limit | None, caps: Mapping[str, object]) -> Limit | None:
    """`limit` with the given caps replacing its own caps of the same kind (the standard
    caps first, in the order calls, tokens, seconds, cost; other limits after them)."""
    given = {name: _checked(name, v) for name, v in caps.items() if v is not None}
    standard: list[Limit] = []
    for name, (kind, build) in _CAPS.items():
        if name in given:
            standard.append(build(given[name]))
        else:
            standard += [m for m in _members(limit) if isinstance(m, kind)]
    kinds = tuple(kind for kind, _ in _CAPS.values())
    members = [*standard, *(m for m in _members(limit) if not isinstance(m, kinds))]
    if not members:
        return None
    return members[0] if len(members) == 1 else AnyLimit(tuple(members))


@dataclass(frozen=True)
class Reservation:
    """A booked upper bound for one call; hand it back to `Budget.reconcile`."""

    id: int
    estimate: Usage


_MIN_COMPLETION = 8


@dataclass
class Budget:
    """A ledger of used and reserved usage under one (possibly composite) limit."""

    limit: Limit | LimitFn | None = None
    clock: Callable[[], float] = time.monotonic
    used: Usage = ZERO
    reserved: Usage = ZERO
    overrun: Usage = ZERO
    _started: float = field(default=-1.0, repr=False)
    _open: dict[int, Reservation] = field(default_factory=dict, repr=False)
    _ids: itertools.count[int] = field(default_factory=itertools.count, repr=False)

    def __post_init__(self) -> None:
        self._limit = as_limit(self.limit) if self.limit is not None else None
        if self._started < 0:
            self._started = self.clock()

    @classmethod
    def of(
        cls,
        value: BudgetLike = None,
        /,
        *,
        calls: int | None = None,
        tokens: int | None = None,
        seconds: float | None = None,
        cost: float | None = None,
        clock: Callable[[], float] | None = None,
    ) -> Budget:
        """The one way to turn numbers into a Budget.

        `value` is None (no limit but the keywords), an int (that many calls), a mapping
        with the keys calls/tokens/seconds/cost (JSON), a `Limit` or limit function, or
        a Budget. A Budget with no keywords is returned as it is (one ledger, shared);
        with keywords (or a `clock`) the result is a new ledger with the budget's limits
        and the keywords replacing the caps they name. Anything else is a ConfigError.
        """
        caps: dict[str, object] = {
            "calls": calls,
            "tokens": tokens,
            "seconds": seconds,
            "cost": cost,
        }
        base: Limit | None = None
        if isinstance(value, Budget):
            if clock is None and all(v is None for v in caps.values()):
                return value
            base, clock = value._limit, clock or value.clock
        elif isinstance(value, Mapping):
            unknown = set(value) - set(_CAPS)
            if unknown:
                raise ConfigError(
                    f"unknown budget key(s) {', '.join(sorted(map(str, unknown)))}; "
                    f"use {', '.join(_CAPS)}"
                )
            caps = {k: v if v is not None else value.get(k) for k, v in caps.items()}
        elif isinstance(value, int) and not isinstance(value, bool):
            if calls is not None:
                raise ConfigError("budget calls given twice (as a number and as calls=)")
            caps["calls"] = value
        elif isinstance(value, Limit) or (callable(value) and not isinstance(value, type)):
            base = as_limit(value)
        elif value is not None:
            raise ConfigError(
                f"not a budget: {value!r}; give a number of calls, calls=/tokens=/seconds=/"
                "cost=, a mapping of those, a Limit or a Budget"
            )
        limit = _with_caps(base, caps)
        return cls(limit) if clock is None else cls(limit, clock=clock)

    @property
    def allowance(self) -> Allowance:
        """The budget's caps (the tightest of each kind; None where nothing limits it)."""
        found: dict[str, float] = {}
        for member in _members(self._limit):
            for name, (kind, _) in _CAPS.items():
                if isinstance(member, kind):
                    value = _cap_value(member)
                    found[name] = min(found.get(name, value), value)
        return Allowance(
            calls=int(found["calls"]) if "calls" in found else None,
            tokens=int(found["tokens"]) if "tokens" in found else None,
            seconds=found.get("seconds"),
            cost=found.get("cost"),
        )

    def remaining(self) -> Allowance:
        """What is left of each cap after what was used and reserved (None: unlimited)."""
        cap, state = self.allowance, self.state()
        spent = state.committed
        return Allowance(
            calls=None if cap.calls is None else max(0, cap.calls - spent.calls),
            tokens=None if cap.tokens is None else max(0, cap.tokens - spent.total_tokens),
            seconds=None if cap.seconds is None else max(0.0, cap.seconds - state.elapsed_s),
            cost=None if cap.cost is None else max(0.0, cap.cost - spent.cost),
        )

    def affords(self, estimate: Usage, reserve: Usage = ZERO) -> bool:
        """Could `estimate` be spent now and `reserve` still be left for what must follow?

        The loops ask this before one more round: `reserve` is what the round may not
        eat into (e.g. the final synthesis or evaluation).
        """
        return self.violation(estimate + reserve) is None

    def charge(self, usage: Usage) -> None:
        """Book `usage` spent outside a model call (reserve + reconcile in one go)."""
        self.reconcile(self.reserve(usage), usage)

    def state(self) -> BudgetState:
        return BudgetState(
            used=self.used, reserved=self.reserved, elapsed_s=self.clock() - self._started
        )

    def violation(self, pending: Usage = ZERO) -> str | None:
        """Why `pending` would break the limit now, or None."""
        if self._limit is None:
            return None
        return self._limit.violation(self.state(), pending)

    def check(self) -> None:
        """Raise `BudgetExceeded` if nothing more may be spent (e.g. the deadline passed)."""
        reason = self.violation(Usage(calls=1))
        if reason:
            raise BudgetExceeded(reason, self.used, repr(self._limit))

    def grant_completion(self, prompt_tokens: int, wanted: int) -> int:
        """How many completion tokens a call with `prompt_tokens` may ask for (<= wanted).

        Raises `BudgetExceeded` when not even a minimal completion fits.
        """
        if self._limit is None:
            return wanted
        room = self._limit.token_headroom(self.state())
        if room is None:
            return wanted
        allowed = room - prompt_tokens
        if allowed < min(wanted, _MIN_COMPLETION):
            raise BudgetExceeded(
                f"token limit: {room} tokens left, prompt alone needs {prompt_tokens}",
                self.used,
                repr(self._limit),
            )
        return min(wanted, allowed)

    def reserve(self, estimate: Usage) -> Reservation:
        """Book `estimate` against the limits, or raise `BudgetExceeded` without booking."""
        reason = self.violation(estimate)
        if reason:
            raise BudgetExceeded(reason, self.used, repr(self._limit))
        reservation = Reservation(next(self._ids), estimate)
        self._open[reservation.id] = reservation
        self.reserved = self.reserved + estimate
        return reservation

    def reconcile(self, reservation: Reservation, actual: Usage) -> Usage:
        """Replace a reservation by the real usage; returns the refund (estimate - actual).

        Backends never use more completion tokens than granted, so `actual` fits in the
        reservation; if an estimate was too low anyway the excess is kept in `overrun`
        and the ledger stays honest.
        """
        if self._open.pop(reservation.id, None) is None:
            raise ConfigError(f"reservation {reservation.id} is not open")
        self.reserved = self.reserved - reservation.estimate
        self.used = self.used + actual
        over = Usage(
            calls=max(0, actual.calls - reservation.estimate.calls),
            prompt_tokens=max(0, actual.prompt_tokens - reservation.estimate.prompt_tokens),
            completion_tokens=max(
                0, actual.completion_tokens - reservation.estimate.completion_tokens
            ),
            cost=max(0.0, actual.cost - reservation.estimate.cost),
        )
        if over != ZERO:
            self.overrun = self.overrun + over
        return reservation.estimate - actual

    def release(self, reservation: Reservation) -> None:
        """Cancel a reservation whose call never ran."""
        self.reconcile(reservation, ZERO)

    @property
    def open_reservations(self) -> int:
        return len(self._open)

    def describe(self) -> str:
        return repr(self._limit) if self._limit is not None else "unlimited"


BudgetLike: TypeAlias = "Budget | Limit | LimitFn | int | Mapping[str, float | None] | None"
"""Anything `Budget.of` turns into a Budget."""


@dataclass(frozen=True, kw_only=True)
class StepBudget:
    """A level's limits in a dfs search: retries at this level and revisits from below."""

    rmax: int = 3
    backtrack_budget: int = 2

    def __post_init__(self) -> None:
        if self.rmax < 1:
            raise ConfigError(f"rmax must be >= 1, got {self.rmax}")
        if self.backtrack_budget < 0:
            raise ConfigError(f"backtrack_budget must be >= 0, got {self.backtrack_budget}")

    @property
    def max_calls(self) -> int:
        """rmax x (1 + backtrack_budget): the most calls this step can ever make."""
        return self.rmax * (1 + self.backtrack_budget)
