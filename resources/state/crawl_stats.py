"""Read-only figures about crawling, for `catlas stats-crawl` and Dagster metadata.

Each figure is one indexed or bounded query: the due backlog walks the
(status, next_run_at) index, the run figures read recent `crawl_runs` rows only.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import Engine, func, or_, select, update

from catlas_assets.domain.vocabulary import CLAIMABLE_STATUSES, RunKind
from resources.state.schema import crawl_runs, sensors

OUTCOME_COLUMNS = ("ok", "changed", "unchanged", "not_modified", "failed", "redirected", "skipped")


def sweep_stale_claims(engine: Engine, *, now: datetime, claim_timeout_s: int) -> int:
    """Clear claims older than the claim timeout (their worker died); returns how many."""
    cutoff = now - timedelta(seconds=claim_timeout_s)
    with engine.begin() as conn:
        result = conn.execute(
            update(sensors)
            .where(sensors.c.claimed_at.is_not(None), sensors.c.claimed_at < cutoff)
            .values(claimed_at=None, claimed_by=None)
        )
        return int(result.rowcount or 0)


def crawl_stats(engine: Engine, *, now: datetime, window_s: int = 3600) -> dict[str, Any]:
    """Throughput, outcome mix, failing/stale counts and the due backlog."""
    since = now - timedelta(seconds=window_s)
    claimable = [s.value for s in CLAIMABLE_STATUSES]
    with engine.connect() as conn:
        by_status = dict(
            conn.execute(select(sensors.c.status, func.count()).group_by(sensors.c.status)).all()
        )
        backlog = conn.execute(
            select(func.count())
            .select_from(sensors)
            .where(sensors.c.status.in_(claimable), sensors.c.next_run_at <= now)
        ).scalar_one()
        oldest_due = conn.execute(
            select(func.min(sensors.c.next_run_at)).where(
                sensors.c.status.in_(claimable), sensors.c.next_run_at <= now
            )
        ).scalar()
        claimed = conn.execute(
            select(func.count()).select_from(sensors).where(or_(sensors.c.claimed_at.is_not(None)))
        ).scalar_one()
        sums = [func.coalesce(func.sum(getattr(crawl_runs.c, c)), 0) for c in OUTCOME_COLUMNS]
        row = conn.execute(
            select(
                func.count(),
                func.coalesce(func.sum(crawl_runs.c.requests), 0),
                func.coalesce(func.sum(crawl_runs.c.tick_ms), 0),
                *sums,
            ).where(crawl_runs.c.kind == RunKind.TICK.value, crawl_runs.c.started_at >= since)
        ).one()
    ticks, requests, tick_ms = int(row[0]), int(row[1]), int(row[2])
    outcomes = {name: int(value) for name, value in zip(OUTCOME_COLUMNS, row[3:], strict=True)}
    fetched = sum(outcomes.values())
    lag = (now - oldest_due).total_seconds() if oldest_due is not None else 0.0
    return {
        "window_s": window_s,
        "ticks": ticks,
        "sensor_runs": fetched,
        "requests": requests,
        "sensor_runs_per_min": round(fetched / (window_s / 60), 2),
        "sensor_runs_per_tick_s": round(fetched / (tick_ms / 1000), 2) if tick_ms else 0.0,
        "outcomes": outcomes,
        "sensors": sum(by_status.values()),
        "by_status": {k: int(v) for k, v in sorted(by_status.items())},
        "failing": int(by_status.get("failing", 0)),
        "stale": int(by_status.get("stale", 0)),
        "claimed_now": int(claimed),
        "due_backlog": int(backlog),
        "oldest_due_lag_s": round(max(0.0, lag), 1),
    }


def unproductive_sensors(engine: Engine, *, runs: int, limit: int = 200) -> list[dict[str, Any]]:
    """Sensors whose last `runs` runs in a row stored nothing new: each one failed, or each
    one met an unchanged page (or a 304)."""
    query = (
        select(
            sensors.c.id,
            sensors.c.company_id,
            sensors.c.surface,
            sensors.c.status,
            sensors.c.consecutive_failures,
            sensors.c.last_failure_class,
            sensors.c.last_success_at,
            sensors.c.url,
        )
        .where(or_(sensors.c.consecutive_failures >= runs, sensors.c.consecutive_unchanged >= runs))
        .order_by(sensors.c.consecutive_failures.desc(), sensors.c.id)
        .limit(limit)
    )
    with engine.connect() as conn:
        return [dict(r) for r in conn.execute(query).mappings()]
