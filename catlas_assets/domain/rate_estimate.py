"""How often a page changes, learned from what the fetches saw, and the interval that follows.

A page is modelled as a Poisson process of changes with rate λ that catlas only observes at
its fetches: each fetch says whether the page changed since the one before (one change or
several look the same). Cho and Garcia-Molina's bias-reduced estimator for n fetches at a
regular interval I, of which X saw a change, is

    λ̂ = -ln((n - X + 0.5) / (n + 0.5)) / I

It stays finite when every fetch saw a change (X = n) and is 0 when none did.

Irregular intervals: the estimate keeps three running sums — fetches n, fetches that saw a
change X, and the time they covered T — and uses the mean interval T / n for I. That is
exact for regular fetches and close when the interval moves slowly, as it does once the
estimate settles (the interval is derived from it); it needs no history, so it fits in a
sensor row. `memory` bounds n: past it the three sums are scaled down together, so old
observations fade and a page whose habits change is re-learned.

A page that was never fetched has no estimate: `prior` starts it as if one fetch over
`interval_s` had seen half a change (λ̂ = ln(1.5) / interval_s), a guess that the first
real observations outweigh.

Allocation: for a budget of fetches per second over many pages, the mean per-change
detection delay (I/2 per change of a page fetched every I) is smallest when each page's
fetch rate is proportional to √λ; `sqrt_scale` finds the factor that spends the budget
within the [min, max] interval clamp, `sqrt_interval` gives one page's interval.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

DEFAULT_MEMORY = 64


def poisson_rate(fetches: float, changes: float, interval_s: float) -> float:
    """Changes per second from `fetches` fetches `interval_s` apart, `changes` of which saw one."""
    if fetches <= 0 or interval_s <= 0:
        raise ValueError("a rate needs at least one fetch over a positive interval")
    if not 0 <= changes <= fetches:
        raise ValueError(f"changes ({changes}) must be within 0..fetches ({fetches})")
    return -math.log((fetches - changes + 0.5) / (fetches + 0.5)) / interval_s


@dataclass(frozen=True)
class RateEstimate:
    """Running sums of what a page's fetches saw (floats: `memory` scales them)."""

    fetches: float = 0.0
    changes: float = 0.0
    observed_s: float = 0.0

    @classmethod
    def prior(cls, interval_s: float) -> RateEstimate:
        """The starting guess for a page never fetched: half a change in `interval_s`."""
        if interval_s <= 0:
            raise ValueError("the prior interval must be positive")
        return cls(fetches=1.0, changes=0.5, observed_s=float(interval_s))

    def observe(
        self, elapsed_s: float, changed: bool, *, memory: int = DEFAULT_MEMORY
    ) -> RateEstimate:
        """The estimate after one more fetch, `elapsed_s` after the previous one."""
        if elapsed_s <= 0:
            raise ValueError("a fetch comes after the one before it")
        if memory < 1:
            raise ValueError("memory must be at least one fetch")
        fetches = self.fetches + 1
        changes = self.changes + (1 if changed else 0)
        observed = self.observed_s + elapsed_s
        if fetches > memory:
            keep = memory / fetches
            fetches, changes, observed = memory, changes * keep, observed * keep
        return RateEstimate(fetches, changes, observed)

    @property
    def rate(self) -> float:
        """Changes per second (0 with no fetch seen yet)."""
        if self.fetches <= 0 or self.observed_s <= 0:
            return 0.0
        return poisson_rate(self.fetches, self.changes, self.observed_s / self.fetches)


def sqrt_interval(rate: float, scale: float, min_interval_s: float, max_interval_s: float) -> float:
    """One page's interval: fetch rate `scale` × √rate, clamped to [min, max] interval."""
    if rate < 0 or scale < 0:
        raise ValueError("rate and scale must be >= 0")
    if not 0 < min_interval_s <= max_interval_s:
        raise ValueError("the clamp needs 0 < min_interval_s <= max_interval_s")
    frequency = scale * math.sqrt(rate)
    if frequency <= 1 / max_interval_s:
        return float(max_interval_s)
    return max(float(min_interval_s), 1 / frequency)


def fetches_per_s(
    rates: Sequence[float], scale: float, min_interval_s: float, max_interval_s: float
) -> float:
    """What `scale` spends: the sum of every page's fetch rate."""
    return sum(1 / sqrt_interval(r, scale, min_interval_s, max_interval_s) for r in rates)


def sqrt_scale(
    rates: Sequence[float],
    budget_per_s: float,
    min_interval_s: float,
    max_interval_s: float,
    *,
    tolerance: float = 1e-9,
) -> float:
    """The scale whose √rate allocation spends `budget_per_s` fetches per second.

    The spend grows with the scale between two bounds the clamp sets: every page at the
    max interval (the least a budget can buy) and every page with a change rate at the
    min interval. A budget outside them is met by the nearest bound.
    """
    if budget_per_s <= 0:
        raise ValueError("the budget must be positive")
    floor = fetches_per_s(rates, 0.0, min_interval_s, max_interval_s)
    if budget_per_s <= floor or not any(r > 0 for r in rates):
        return 0.0
    smallest = min(r for r in rates if r > 0)
    high = 1 / (min_interval_s * math.sqrt(smallest))  # every changing page at the min
    if fetches_per_s(rates, high, min_interval_s, max_interval_s) <= budget_per_s:
        return high
    low = 0.0
    # Bisection on a monotone spend; 200 halvings reach any float tolerance.
    for _ in range(200):
        mid = (low + high) / 2
        if fetches_per_s(rates, mid, min_interval_s, max_interval_s) < budget_per_s:
            low = mid
        else:
            high = mid
        if high - low <= tolerance * high:
            break
    return high


__all__ = [
    "DEFAULT_MEMORY",
    "RateEstimate",
    "fetches_per_s",
    "poisson_rate",
    "sqrt_interval",
    "sqrt_scale",
]
