"""Schedules: hourly compaction of the lake's history tables, at the minute the
`lake_compaction` task declares (services/periodic.py)."""

from __future__ import annotations

import dagster as dg

from catlas_assets.services.periodic import cadence_of
from sensors_dag.jobs import compaction_job

hourly_compaction = dg.build_schedule_from_partitioned_job(
    compaction_job,
    minute_of_hour=cadence_of("lake_compaction").minute,
    default_status=dg.DefaultScheduleStatus.STOPPED,
    description="Hourly: compact the hour that just ended and run its asset checks.",
)
