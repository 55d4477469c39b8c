"""Read model of past runs: what `catlas report` and `report --stale-after` show."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from catlas_assets.domain.vocabulary import RunKind
from catlas_assets.services.runtime import Runtime
from resources.state.crawl_stats import unproductive_sensors

Row = dict[str, Any]


@dataclass(frozen=True)
class StaleReport:
    """What has not been productive for `runs` runs in a row."""

    runs: int
    run_kinds: list[Row]  # the latest completed run of each kind whose empty streak is that long
    sensors: list[Row]  # sensors that failed at least that many runs in a row


def recent_runs(runtime: Runtime, *, limit: int = 20, kind: str | None = None) -> list[Row]:
    """The newest runs first, from `crawl_runs` (shared by every machine on the database)."""
    return runtime.store.runs(limit=limit, kind=kind)


def run_row(runtime: Runtime, run_id: str) -> Row | None:
    """One run's stored row (None for a run that never started and wrote nothing)."""
    return runtime.store.run(run_id)


def stale_report(runtime: Runtime, runs: int, kind: str | None = None) -> StaleReport:
    kinds = [RunKind(kind)] if kind else list(RunKind)
    latest = [r for k in kinds if (r := runtime.store.last_run(k.value)) is not None]
    return StaleReport(
        runs=runs,
        run_kinds=[r for r in latest if r["empty_streak"] >= runs],
        sensors=unproductive_sensors(runtime.store.engine, runs=runs),
    )
