"""What a `catlas schedule` worker wrote, told to Dagster without a Dagster run.

The worker fetches outside Dagster (a run per tick would cost seconds and event-log rows);
after each tick it reports one runless materialization per history table it wrote, on the
hour partition of the tick, so freshness and lineage in the UI are true whichever path
fetched. Only when a Dagster instance is configured (`DAGSTER_HOME`): without one the
worker runs as before, and this module (and Dagster) is not even imported.
"""

from __future__ import annotations

import os
from collections.abc import Callable

import dagster as dg

from catlas_assets.domain.vocabulary import Outcome
from catlas_assets.services.runs import RunReport

OBSERVED = [o.value for o in Outcome if o is not Outcome.SKIPPED]


def tick_tables(report: RunReport) -> dict[str, int]:
    """The history tables a tick wrote to, with what its counters say it wrote."""
    c = report.counters
    observations = sum(int(c.get(name, 0)) for name in OBSERVED)
    snapshots = int(c.get("ok", 0)) + int(c.get("changed", 0))
    tables = {"observations": observations, "snapshots": snapshots}
    if c.get("changed", 0):
        tables["changes"] = int(c["changed"])
    if snapshots:
        tables["entity_events"] = snapshots  # snapshots whose entities were reconciled
    return {name: count for name, count in tables.items() if count}


def report_tick(instance: dg.DagsterInstance, report: RunReport) -> int:
    """Report the tick's writes; returns how many events were reported."""
    partition = f"{report.started_at:%Y-%m-%d-%H:00}"
    events = 0
    for table, count in tick_tables(report).items():
        instance.report_runless_asset_event(
            dg.AssetMaterialization(
                asset_key=table,
                partition=partition,
                description=f"written by the catlas worker's tick {report.run_id}",
                metadata={
                    "written_by": "catlas schedule",
                    "tick_rows": count,
                    "catlas_run_id": report.run_id,
                    "stop": report.stop.value,
                    "outcome": report.outcome.value,
                    "detail": report.detail,
                },
            )
        )
        events += 1
    return events


def tick_reporter() -> Callable[[RunReport], None] | None:
    """A reporter on the configured Dagster instance, or None when there is none."""
    if not os.environ.get("DAGSTER_HOME"):
        return None
    instance = dg.DagsterInstance.get()

    def reporter(report: RunReport) -> None:
        report_tick(instance, report)

    return reporter
