"""The spec's scheduling arithmetic, pure: intervals, next run, quality score, tier.

unchanged / 304: current < base ? min(base, current x burst_decay)
                                : min(max, current x stability_growth)
meaningful+:     burst_interval_s (then decays back to base, one step per unchanged run)
minor:           min(current, base)
failure:         min(max, current x FAILURE_POLICY[class].multiplier)
next_run_at:     now + interval x U(0.9, 1.1)
quality_score:   EMA(alpha = 0.15) toward 100 x extraction confidence, or 0 on failure
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from datetime import datetime, timedelta
from enum import StrEnum

from catlas_assets.domain.taxonomy import FAILURE_POLICY
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
