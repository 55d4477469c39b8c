"""A new sensor's starting values (spec: Discovery, sensor seed values)."""

from __future__ import annotations

import random
from dataclasses import dataclass
from datetime import datetime, timedelta

from catlas_assets.domain.taxonomy import (
    CONNECTOR_RELIABILITY,
    SURFACE_BASE_INTERVAL_S,
    SURFACE_IMPORTANCE,
    TIER_FACTOR,
    tier_for_interval,
)
from catlas_assets.domain.vocabulary import Surface


@dataclass(frozen=True)
class Seed:
    base_interval_s: int
    tier: str
    priority: float
    quality_score: float
    next_run_at: datetime


def seed_sensor(
    *,
    surface: Surface,
    connector: str,
    company_importance: float,
    company_tier: int,
    confidence: float,
    min_interval_s: int,
    max_interval_s: int,
    now: datetime,
    fetch_now: bool,
    rng: random.Random,
) -> Seed:
    base = SURFACE_BASE_INTERVAL_S[surface] * TIER_FACTOR[company_tier]
    base_interval = round(min(max_interval_s, max(min_interval_s, base)))
    reliability = CONNECTOR_RELIABILITY.get(connector, CONNECTOR_RELIABILITY["generic_html"])
    quality = 100 * confidence * (0.5 + 0.5 * company_importance) * reliability
    priority = 0.3 + 0.5 * company_importance + 0.2 * SURFACE_IMPORTANCE[surface]
    # Staggered first runs keep a batch of new sensors from hitting sites all at once.
    first_run = now if fetch_now else now + timedelta(seconds=rng.uniform(0, base_interval))
    return Seed(
        base_interval_s=base_interval,
        tier=tier_for_interval(base_interval),
        priority=round(priority, 4),
        quality_score=round(quality, 4),
        next_run_at=first_run,
    )
