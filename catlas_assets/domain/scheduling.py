"""The spec's scheduling arithmetic, pure: intervals, next run, quality score, tier.

unchanged / 304: current < base ? min(base, current x burst_decay)
                                : min(max, current x stability_growth)
meaningful+:     burst_interval_s (then decays back to base, one step per unchanged run)
minor:           min(current, base)
failure:         min(max, current x FAILURE_POLICY[class].multiplier)
next_run_at:     now + interval x U(0.9, 1.1)
quality_score:   EMA(alpha = 0.15) toward 100 x extraction confidence, or 0 on failure
full refetch:    at least once per full_refetch_interval_s, no conditional headers
tier:            tier_for_interval (the letter bands live in the taxonomy)
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from datetime import datetime, timedelta
from enum import StrEnum

from catlas_assets.domain.taxonomy import FAILURE_POLICY, tier_for_interval
from catlas_assets.domain.vocabulary import FailureClass

QUALITY_ALPHA = 0.15
JITTER = 0.1


class Event(StrEnum):
    """What a run means for the interval."""

    UNCHANGED = "unchanged"  # 304 or same hashes (or pure noise)
    MINOR = "minor"
    MEANINGFUL = "meaningful"  # meaningful, major or critical
    FAILURE = "failure"
    HOLD = "hold"  # first snapshot, skipped: the interval stays


@dataclass(frozen=True)
class Limits:
    min_interval_s: int
    max_interval_s: int
    burst_interval_s: int
    burst_decay: float
    stability_growth: float

    def clamp(self, interval: float) -> int:
        return round(min(self.max_interval_s, max(self.min_interval_s, interval)))


def next_interval(
    current: int,
    base: int,
    event: Event,
    limits: Limits,
    failure_class: FailureClass | None = None,
) -> int:
    if event is Event.UNCHANGED:
        if current < base:
            value = min(base, current * limits.burst_decay)
        else:
            value = min(limits.max_interval_s, current * limits.stability_growth)
    elif event is Event.MEANINGFUL:
        value = limits.burst_interval_s
    elif event is Event.MINOR:
        value = min(current, base)
    elif event is Event.FAILURE:
        if failure_class is None:
            raise ValueError("a failure needs its class")
        value = min(limits.max_interval_s, current * FAILURE_POLICY[failure_class].multiplier)
    else:
        value = current
    return limits.clamp(value)


def next_run_at(now: datetime, interval_s: int, rng: random.Random) -> datetime:
    return now + timedelta(seconds=interval_s * rng.uniform(1 - JITTER, 1 + JITTER))


def quality_score(previous: float, confidence: float | None) -> float:
    """EMA toward 100 x confidence on success, toward 0 on failure (confidence None)."""
    target = 0.0 if confidence is None else 100.0 * max(0.0, min(1.0, confidence))
    return round(previous + QUALITY_ALPHA * (target - previous), 4)


def needs_full_fetch(
    last_full_fetch_at: datetime | None, now: datetime, full_refetch_interval_s: int
) -> bool:
    """True when this fetch must go out without validators (ETag / Last-Modified).

    A server that answers 304 wrongly would otherwise hide every change forever; a sensor
    never fetched in full (first run, or state from before the rule) is fetched in full.
    """
    if last_full_fetch_at is None:
        return True
    return now - last_full_fetch_at >= timedelta(seconds=full_refetch_interval_s)


__all__ = [
    "JITTER",
    "QUALITY_ALPHA",
    "Event",
    "Limits",
    "needs_full_fetch",
    "next_interval",
    "next_run_at",
    "quality_score",
    "tier_for_interval",
]
